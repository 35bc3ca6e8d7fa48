public import HeedCore
/// The one JSGF grammar PocketSphinx decodes with, and the words it uses.
public struct CompiledGrammar: Sendable {
    /// The grammar text: `#JSGF V1.0; grammar heed; public <command> = …;`.
    public var jsgf: String
    /// Every word the grammar uses, lower-case, with where it first appears: a template in an
    /// intent file, a rule file, `<heed built-in rules>:LINE:COLUMN`, or `vocabulary:TYPE:N:1` for the
    /// n-th registered term of a vocabulary type.
    public var words: [String: SourceLocation]
}

/// Writes the JSGF grammar for all intents.
///
/// The public rule `<command>` has one alternative per intent, `<heed_intent_NAME>`; each intent rule
/// has one alternative per template. Slots become references to `<heed_integer>`, `<heed_duration>`, …
/// (shared by all intents) or to `<heed_slot_INTENT_PARAMETER>`; vocabulary types become `<heed_vocab_TYPE>`.
/// The user's rules are written under their symbols, `<heed_rule_GRAMMAR_RULE>` (see ``RuleScope``), so
/// no qualified name `<a.b>` reaches PocketSphinx and no user rule meets a generated one.
/// `+` and `*` are written as they are.
/// Only rules reachable from `<command>` are written. A part that can say nothing (a vocabulary type
/// without terms and without fallback cases) is left out: an alternative is dropped, an optional
/// part disappears, and a template or intent that needs it is left out of the grammar.
struct GrammarCompiler {
    private let rules: RuleTable
    private var rendered: [String: String?] = [:]
    private var order: [String] = []
    private var words: [String: SourceLocation] = [:]

    init(rules: RuleTable) { self.rules = rules }

    static func compile(intents: [IntentDefinition], rules: RuleTable) -> CompiledGrammar {
        var compiler = GrammarCompiler(rules: rules)
        var intentRules: [String] = []
        for intent in intents {
            let slotRules = Dictionary(uniqueKeysWithValues: intent.parameters.map { ($0.name, RuleTable.slotRule(for: $0, of: intent.name)) })
            let templates = intent.compiledTemplates.compactMap { compiler.render($0.expansion, slotRules: slotRules, nested: false) }
            guard !templates.isEmpty else { continue }
            let name = RuleTable.intentRuleName(intent.name)
            compiler.rendered[name] = templates.joined(separator: "\n    | ")
            compiler.order.append(name)
            intentRules.append("<\(name)>")
        }
        var jsgf = "#JSGF V1.0;\n\ngrammar heed;\n\n"
        jsgf += "public <command> = \(intentRules.isEmpty ? "<VOID>" : intentRules.joined(separator: "\n    | "));\n"
        for name in compiler.order {
            if let body = compiler.rendered[name] ?? nil { jsgf += "\n<\(name)> = \(body);" }
        }
        return CompiledGrammar(jsgf: jsgf + "\n", words: compiler.words)
    }

    /// Renders an expansion as JSGF text.
    /// - Parameters:
    ///   - nested: Whether the text goes inside a sequence, so alternatives need parentheses.
    /// - Returns: The text; `""` for an expansion that says nothing; `nil` for one that can say nothing at all.
    private mutating func render(_ expansion: Expansion, slotRules: [String: String], nested: Bool) -> String? {
        switch expansion {
        case .word(let word, let location):
            if words[word] == nil { words[word] = location }
            return word
        case .rule(let name, _):
            return reference(name)
        case .slot(let name, _):
            return slotRules[name].flatMap { reference($0) }
        case .sequence(let items):
            var parts: [String] = []
            for item in items {
                guard let part = render(item, slotRules: slotRules, nested: true) else { return nil }
                if !part.isEmpty { parts.append(part) }
            }
            return parts.joined(separator: " ")
        case .choice(let alternatives):
            var parts: [String] = []
            for alternative in alternatives {
                guard let part = render(alternative, slotRules: slotRules, nested: false) else { continue }
                let text = part.isEmpty ? "<NULL>" : part
                if !parts.contains(text) { parts.append(text) }
            }
            if parts.isEmpty { return nil }
            if parts.count == 1 { return parts[0] == "<NULL>" ? "" : parts[0] }
            return nested ? "(\(parts.joined(separator: " | ")))" : parts.joined(separator: " | ")
        case .optional(let item):
            guard let inner = render(item, slotRules: slotRules, nested: false), !inner.isEmpty else { return "" }
            return "[\(inner)]"
        case .repeated(let item, let atLeastOnce, _):
            guard let inner = render(item, slotRules: slotRules, nested: false) else { return atLeastOnce ? nil : "" }
            if inner.isEmpty { return "" }
            let atom = inner.contains(" " as Character) ? "(\(inner))" : inner
            return atom + (atLeastOnce ? "+" : "*")
        }
    }

    /// `<name>` after rendering the rule once; `nil` when the rule can say nothing.
    private mutating func reference(_ name: String) -> String? {
        if let known = rendered[name] { return known.map { $0.isEmpty ? "" : "<\(name)>" } }
        guard let body = rules[name] else { return nil }
        rendered[name] = .some(nil)  // rules are not recursive; this only marks the visit
        let text = render(body, slotRules: [:], nested: false)
        rendered[name] = .some(text)
        if let text, !text.isEmpty { order.append(name) }
        return text.map { $0.isEmpty ? "" : "<\(name)>" }
    }
}
