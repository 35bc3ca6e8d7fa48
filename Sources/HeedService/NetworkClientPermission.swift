public import HeedClient
import Foundation

/// A speech-recognition status and, unless authorized, the sentence that explains it.
public struct PermissionAnswer: Sendable, Hashable {
    /// `authorized`, `denied`, `restricted`, `notDetermined`, or why the client cannot even ask:
    /// `unknownClient`, `noUsageDescription`, `unavailable`.
    public var status: ServiceStatus
    /// The sentence for the client and the log; `nil` when authorized.
    public var message: String?
}

extension ClientIdentity {
    /// A client the kernel cannot identify (a network peer): the manifest of the identity its
    /// listener was given.
    init(manifest: ClientManifest) {
        credentials = nil
        executable = nil
        self.manifest = manifest
    }
}

extension ClientPermission {
    /// The speech-recognition status of a client known only by its app id: a peer of the Wyoming
    /// door, which speaks for the identity its listener was given (`--wyoming-client`). The same
    /// rules as for local clients: a manifest with a usage description, then the user's decision
    /// or the administrator's restriction. Nobody is asked.
    /// - Parameter appID: The listener's client identity.
    /// - Returns: The status, with a sentence unless authorized.
    public func status(ofAppID appID: String) -> PermissionAnswer {
        guard let manifest = ClientCatalog.discover(in: clientFolders).manifest(appID: appID) else {
            let searched = clientFolders.map(\.path).joined(separator: ", ")
            return PermissionAnswer(
                status: .unknownClient,
                message: "no client manifest has the app id \(appID) (searched \(searched.isEmpty ? "no folder" : searched)); "
                    + "see docs/WYOMING.md")
        }
        switch status(of: ClientIdentity(manifest: manifest)) {
        case .refused(let status, let message): return PermissionAnswer(status: status, message: message)
        case .status(let status, let message): return PermissionAnswer(status: status, message: message)
        }
    }
}
