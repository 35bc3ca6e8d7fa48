/// Plugin authors get the wire types (`ResolveOutcome`, `HandleOutcome`, `PluginValue`, …) with the kit.
@_exported public import HeedPluginProtocol
