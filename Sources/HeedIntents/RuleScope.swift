import HeedCore
/// A JSGF rule after loading: its symbol in the compiled grammar and its body with every reference resolved.
struct LoadedRule: Sendable {
    /// The `grammar NAME;` of the rule's file.
    var grammar: String
    /// The rule's name in the compiled grammar and in ``RuleTable``: `heed_rule_GRAMMAR_RULE` for a
    /// user rule, the name itself for a built-in `heed_…` rule.
    var symbol: String
    /// The definition; the rule references in its expansion are symbols.
    var definition: RuleDefinition

    /// The name as defined, without the grammar name.
    var name: String { definition.name }
    var expansion: Expansion { definition.expansion }
}

/// The rules of all loaded rule files, scoped by grammar as JSGF scopes them.
///
/// Every rule has the fully qualified name `<GRAMMAR.rule>`, where GRAMMAR is its file's
/// `grammar GRAMMAR;`. A reference resolves like this:
/// 1. `<grammar.rule>` (split at the last `.`) names that grammar's rule.
/// 2. `<rule>` inside a rule file names the file's own rule when the file defines one.
/// 3. Otherwise `<rule>` names the one rule of that name in all loaded grammars; none is an
///    unknown rule, several are an ambiguous reference that must be qualified.
///
/// Rules are emitted under symbols that cannot clash with each other or with generated rules:
/// `heed_rule_` + grammar + `_` + rule, with characters other than ASCII letters, digits and `_`
/// replaced by `_`, and `_2`, `_3`, … appended in load order if two rules still meet.
struct RuleScope: Sendable {
    private struct Grammar: Sendable {
        var file: RuleFile
        /// Symbols by rule name.
        var symbols: [String: String]
    }

    /// The grammar of the built-in rules.
    static let builtinGrammar = "heed_builtin"

    private var grammars: [String: Grammar] = [:]
    /// Grammar names in load order: user files as given, then the built-in rules.
    private var grammarOrder: [String] = []
    /// Every rule in load order, references resolved.
    private(set) var rules: [LoadedRule] = []
    private var indexBySymbol: [String: Int] = [:]
    /// Whether a rule can be spoken as no words, by symbol.
    private var nullableRules: [String: Bool] = [:]

    /// Scopes, resolves and checks rule files.
    /// - Parameter files: The user's rule files in load order; the built-in rules are added after them.
    /// - Throws: ``SourceError``: a reserved rule name, two files with the same grammar name, a reference that
    ///   is unknown or ambiguous, a rule that refers to itself, or a repeat of something that can say nothing.
    init(files: [RuleFile]) throws {
        let builtin = RuleFile(
            grammar: Self.builtinGrammar,
            grammarLocation: SourceLocation(path: BuiltinRules.path, line: 2, column: 9),
            rules: BuiltinRules.rules,
            source: SourceText(path: BuiltinRules.path, text: BuiltinRules.text)
        )
        var usedSymbols = Set(BuiltinRules.rules.map(\.name))
        for file in files + [builtin] {
            let isBuiltin = file.source.path == BuiltinRules.path
            if !isBuiltin, file.grammar.hasPrefix("heed_") {
                throw SourceError(.ruleSyntax, "grammar name \(file.grammar) is reserved", at: file.grammarLocation, in: file.source)
            }
            if let previous = grammars[file.grammar] {
                throw SourceError(
                    .ruleSyntax,
                    "grammar \(file.grammar) is already defined at \(previous.file.grammarLocation); give each rule file its own grammar name",
                    at: file.grammarLocation,
                    in: file.source
                )
            }
            var symbols: [String: String] = [:]
            for rule in file.rules {
                if !isBuiltin, rule.name.hasPrefix("heed_") || rule.name == "NULL" || rule.name == "VOID" {
                    throw SourceError(.ruleSyntax, "rule name <\(rule.name)> is reserved", at: rule.location, in: file.source)
                }
                symbols[rule.name] = isBuiltin ? rule.name : Self.symbol(grammar: file.grammar, rule: rule.name, avoiding: &usedSymbols)
            }
            grammars[file.grammar] = Grammar(file: file, symbols: symbols)
            grammarOrder.append(file.grammar)
        }
        for grammarName in grammarOrder {
            guard let grammar = grammars[grammarName] else { continue }
            for rule in grammar.file.rules {
                var definition = rule
                definition.expansion = try rule.expansion.mappingRules { reference, location in
                    try symbol(for: reference, at: location, from: grammarName, in: grammar.file.source)
                }
                guard let symbol = grammar.symbols[rule.name] else { continue }
                indexBySymbol[symbol] = rules.count
                rules.append(LoadedRule(grammar: grammarName, symbol: symbol, definition: definition))
            }
        }
        try checkCycles()
        for rule in rules { _ = sayNothing(rule.symbol) }
        for rule in rules {
            try checkRepeats(in: rule.expansion, slot: { _ in false }, source: source(of: rule), code: .ruleSyntax)
        }
    }

    /// `heed_rule_GRAMMAR_RULE`, made unique.
    private static func symbol(grammar: String, rule: String, avoiding used: inout Set<String>) -> String {
        func part(_ name: String) -> String {
            var text = String.UnicodeScalarView()
            for scalar in name.unicodeScalars {
                let keep = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
                text.append(keep ? scalar : "_")
            }
            return String(text)
        }
        let base = "heed_rule_\(part(grammar))_\(part(rule))"
        var symbol = base
        var suffix = 2
        while !used.insert(symbol).inserted {
            symbol = "\(base)_\(suffix)"
            suffix += 1
        }
        return symbol
    }

    private func source(of rule: LoadedRule) -> SourceText {
        grammars[rule.grammar]?.file.source ?? SourceText(path: rule.definition.location.path, text: "")
    }

    /// The loaded rule with a symbol.
    func rule(_ symbol: String) -> LoadedRule? { indexBySymbol[symbol].map { rules[$0] } }

    /// Resolves a rule reference.
    /// - Parameters:
    ///   - reference: The name between `<` and `>`: `rule` or `grammar.rule`.
    ///   - location: Where the reference is written.
    ///   - grammar: The grammar of the rule file the reference is in; `nil` in an intent file.
    ///   - source: The text of the file the reference is in, to quote in an error.
    /// - Returns: The symbol of the rule.
    /// - Throws: ``SourceError`` with code `reference` for an unknown or ambiguous reference.
    func symbol(for reference: String, at location: SourceLocation, from grammar: String?, in source: SourceText) throws -> String {
        func error(_ message: String) -> SourceError { SourceError(.reference, message, at: location, in: source) }
        if let dot = reference.lastIndex(of: ".") {
            let grammarName = String(reference[..<dot])
            let ruleName = String(reference[reference.index(after: dot)...])
            guard let qualified = grammars[grammarName] else {
                throw error("unknown rule <\(reference)>: no loaded rule file has 'grammar \(grammarName);'")
            }
            guard let symbol = qualified.symbols[ruleName] else {
                throw error("unknown rule <\(reference)>: grammar \(grammarName) (\(qualified.file.source.path)) has no rule <\(ruleName)>")
            }
            return symbol
        }
        if let grammar, let own = grammars[grammar]?.symbols[reference] { return own }
        let candidates = grammarOrder.compactMap { name -> (grammar: String, rule: RuleDefinition)? in
            guard let file = grammars[name]?.file, let rule = file.rules.first(where: { $0.name == reference }) else { return nil }
            return (name, rule)
        }
        guard let first = candidates.first else { throw error("unknown rule <\(reference)>") }
        guard candidates.count > 1 else { return grammars[first.grammar]?.symbols[reference] ?? reference }
        let places = Self.list(candidates.map { "\($0.rule.location)" }, conjunction: "and")
        let spellings = Self.list(candidates.map { "<\($0.grammar).\(reference)>" }, conjunction: "or")
        throw error("<\(reference)> is defined in \(places); write \(spellings)")
    }

    /// "a", "a and b", "a, b and c".
    private static func list(_ items: [String], conjunction: String) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// Checks that no rule refers to itself, directly or through others.
    private func checkCycles() throws {
        var finished: Set<String> = []
        func visit(_ rule: LoadedRule, stack: [String]) throws {
            guard !finished.contains(rule.symbol) else { return }
            try rule.expansion.forEach { item in
                guard case .rule(let symbol, let location) = item, let target = self.rule(symbol) else { return }
                if let cycleStart = stack.firstIndex(of: symbol) {
                    let cycle = (stack[cycleStart...] + [symbol]).compactMap { self.rule($0) }
                    let qualify = Set(cycle.map(\.grammar)).count > 1
                    let names = cycle.map { qualify ? "<\($0.grammar).\($0.name)>" : "<\($0.name)>" }
                    let name = names.last ?? "<\(target.name)>"
                    throw SourceError(
                        .reference,
                        "rule \(name) refers to itself: \(names.joined(separator: " -> "))",
                        at: location,
                        in: source(of: rule)
                    )
                }
                try visit(target, stack: stack + [symbol])
            }
            finished.insert(rule.symbol)
        }
        for rule in rules { try visit(rule, stack: [rule.symbol]) }
    }

    /// Whether a rule can be spoken as no words; memoized, as rules are not recursive.
    private mutating func sayNothing(_ symbol: String) -> Bool {
        if let known = nullableRules[symbol] { return known }
        guard let rule = rule(symbol) else { return false }
        var references: [String] = []
        rule.expansion.forEach { if case .rule(let name, _) = $0 { references.append(name) } }
        for reference in references { _ = sayNothing(reference) }
        let result = rule.expansion.canSayNothing(rule: { nullableRules[$0] ?? false }, slot: { _ in false })
        nullableRules[symbol] = result
        return result
    }

    /// Whether a resolved expansion can be spoken as no words.
    /// - Parameters:
    ///   - expansion: A template, phrase grammar or rule body whose references are symbols.
    ///   - slot: Whether a parameter slot can say nothing.
    /// - Returns: `true` when some way through says no word.
    func canSayNothing(_ expansion: Expansion, slot: (String) -> Bool) -> Bool {
        expansion.canSayNothing(rule: { nullableRules[$0] ?? false }, slot: slot)
    }

    /// Checks that every `+` and `*` repeats something that says at least one word, so a repeat always
    /// moves the parser forward.
    /// - Parameters:
    ///   - expansion: A resolved expansion.
    ///   - slot: Whether a parameter slot can say nothing.
    ///   - source: The text of the file the expansion is in.
    ///   - code: The error code: `ruleSyntax` in a rule file, `template` in an intent file.
    /// - Throws: ``SourceError`` with `code` at the `+` or `*`.
    func checkRepeats(in expansion: Expansion, slot: (String) -> Bool, source: SourceText, code: SourceError.Code) throws {
        try expansion.forEach { item in
            guard case .repeated(let inner, let atLeastOnce, let location) = item,
                canSayNothing(inner, slot: slot)
            else { return }
            throw SourceError(
                code,
                "'\(atLeastOnce ? "+" : "*")' repeats a part that can be spoken as no words; repeat a part that always says a word",
                at: location,
                in: source
            )
        }
    }

    /// Checks that no rule used by the given expansions has tags `{...}`, which Heed does not support.
    /// - Parameter expansions: Resolved template and phrase expansions.
    /// - Throws: ``SourceError`` with code `ruleSyntax` at the first tag of the first such rule.
    func checkNoTags(usedBy expansions: [Expansion]) throws {
        var visited: Set<String> = []
        func visit(_ expansion: Expansion) throws {
            try expansion.forEach { item in
                guard case .rule(let symbol, _) = item, visited.insert(symbol).inserted, let rule = rule(symbol) else { return }
                if let tag = rule.definition.tags.first {
                    throw SourceError(
                        .ruleSyntax,
                        "JSGF tags '{...}' are not supported in rules that intents use (<\(rule.grammar).\(rule.name)>)",
                        at: tag,
                        in: source(of: rule)
                    )
                }
                try visit(rule.expansion)
            }
        }
        for expansion in expansions { try visit(expansion) }
    }
}
