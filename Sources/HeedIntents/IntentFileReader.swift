import HeedCore
import HeedPluginProtocol
/// Reads one `intents/*.json` file into ``IntentDefinition``s, checking every name it uses.
struct IntentFileReader {
    private let reader: JSONSchemaReader
    private let rules: RuleScope

    /// Reads an intent file.
    /// - Parameters:
    ///   - source: The file's text.
    ///   - rules: The rules templates may refer to as `<rule>` or `<grammar.rule>`.
    /// - Returns: The file's intents in file order; rule references in templates and phrase grammars are
    ///   resolved to the rules' symbols.
    /// - Throws: ``SourceError`` located at the first problem.
    static func read(_ source: SourceText, rules: RuleScope) throws -> [IntentDefinition] {
        let root = try LocatedJSONParser.parse(source)
        return try IntentFileReader(reader: JSONSchemaReader(source: source), rules: rules).readFile(root)
    }

    private init(reader: JSONSchemaReader, rules: RuleScope) {
        self.reader = reader
        self.rules = rules
    }

    private func readFile(_ root: JSONNode) throws -> [IntentDefinition] {
        let file = try reader.object(root, "an intent file", allowedKeys: ["domain", "description", "intents"])
        let domain = try file.string("domain")
        _ = try file.optionalString("description")
        return try file.array("intents").map { try readIntent($0, domain: domain) }
    }

    private func readIntent(_ node: JSONNode, domain: String) throws -> IntentDefinition {
        let keys: Set<String> = [
            "name", "description", "parameters", "templates", "requiresConfirmation", "responses", "control", "activityKind",
            "target", "contextual",
        ]
        let object = try reader.object(node, "an intent", allowedKeys: keys)
        let nameNode = try object.required("name")
        let name = try reader.string(nameNode, "'name'")
        try checkName(name, at: nameNode)

        var parameters: [ParameterDefinition] = []
        for parameterNode in try object.optionalArray("parameters") {
            let parameter = try readParameter(parameterNode)
            if let first = parameters.first(where: { $0.name == parameter.name }) {
                throw reader.error("duplicate parameter '\(parameter.name)' (first declared at \(first.location))", at: parameter.location)
            }
            parameters.append(parameter)
        }
        let declared = Set(parameters.map(\.name))

        let templateNodes = try object.array("templates")
        guard !templateNodes.isEmpty else {
            throw reader.error("an intent needs at least one template", at: try object.required("templates").location)
        }
        let phraseCanSayNothing = Dictionary(
            uniqueKeysWithValues: parameters.map { parameter in
                (parameter.name, parameter.phraseExpansion.map { rules.canSayNothing($0, slot: { _ in false }) } ?? false)
            }
        )
        let templates = try templateNodes.map { templateNode in
            let text = try reader.string(templateNode, "a template")
            let parsed = try ExpansionParser.parseTemplate(locatedText(templateNode, text))
            let expansion = try resolveReferences(in: parsed, parameters: declared, allowSlots: true)
            try rules.checkRepeats(in: expansion, slot: { phraseCanSayNothing[$0] ?? false }, source: reader.source, code: .template)
            return Template(text: text, expansion: expansion, location: templateNode.location)
        }

        var responses: [String: String] = [:]
        if let responsesNode = object["responses"] {
            guard case .object(let members) = responsesNode.kind else {
                throw reader.error("expected 'responses' (an object), found \(responsesNode.kindName)", at: responsesNode.location)
            }
            for member in members {
                let text = try reader.string(member.value, "a response text")
                try checkPlaceholders(in: member.value, text: text, parameters: declared)
                responses[member.key] = text
            }
        }

        return IntentDefinition(
            name: name,
            domain: domain,
            description: try object.optionalString("description") ?? "",
            parameters: parameters,
            templates: templates.map(\.text),
            requiresConfirmation: try object.bool("requiresConfirmation", default: false),
            responses: responses,
            activityRouting: try readRouting(object, parameters: parameters),
            isContextual: try object.bool("contextual", default: false),
            location: nameNode.location,
            compiledTemplates: templates
        )
    }

    /// `control` (with `activityKind` and `target`): the intent goes to the app whose activity takes
    /// the control now.
    private func readRouting(_ object: JSONObject, parameters: [ParameterDefinition]) throws -> ActivityRouting? {
        guard let controlNode = object["control"] else {
            for key in ["activityKind", "target"] {
                if let node = object[key] { throw reader.error("'\(key)' needs 'control': only control intents are routed by activity", at: node.location) }
            }
            return nil
        }
        let name = try reader.string(controlNode, "'control'")
        guard let control = PluginActivity.Control(rawValue: name) else {
            let known = PluginActivity.Control.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.error("unknown control '\(name)'; the controls are \(known)", at: controlNode.location)
        }
        var target: String?
        if let targetNode = object["target"] {
            let parameterName = try reader.string(targetNode, "'target'")
            guard let parameter = parameters.first(where: { $0.name == parameterName }) else {
                throw reader.error("'target' names '\(parameterName)', which is not a parameter of this intent", at: targetNode.location)
            }
            switch parameter.type {
            case .vocabulary, .enumeration, .phrase: break
            default:
                throw reader.error("'target' must name a text parameter (vocabulary, enumeration or phrase); '\(parameterName)' is \(parameter.type.name)", at: targetNode.location)
            }
            target = parameterName
        }
        return ActivityRouting(control: control, kind: try object.optionalString("activityKind"), target: target)
    }

    private func checkName(_ name: String, at node: JSONNode) throws {
        let valid = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        guard valid else {
            throw reader.error("invalid name '\(name)': use ASCII letters, digits and '_'", at: node.location)
        }
    }

    private func readParameter(_ node: JSONNode) throws -> ParameterDefinition {
        let keys: Set<String> = ["name", "type", "required", "prompt", "cases", "vocabularyType", "grammar", "minimum", "maximum"]
        let object = try reader.object(node, "a parameter", allowedKeys: keys)
        let nameNode = try object.required("name")
        let name = try reader.string(nameNode, "'name'")
        try checkName(name, at: nameNode)
        let typeNode = try object.required("type")
        let typeName = try reader.string(typeNode, "'type'")

        func forbid(_ key: String, unless allowed: Bool, _ which: String) throws {
            if !allowed, let member = object.members.first(where: { $0.key == key }) {
                throw reader.error("'\(key)' is only allowed for \(which) parameters", at: member.keyLocation)
            }
        }
        let isNumeric = typeName == "integer" || typeName == "number"
        try forbid("cases", unless: typeName == "enumeration" || typeName == "vocabulary", "enumeration and vocabulary")
        try forbid("vocabularyType", unless: typeName == "vocabulary", "vocabulary")
        try forbid("grammar", unless: typeName == "phrase", "phrase")
        try forbid("minimum", unless: isNumeric, "integer and number")
        try forbid("maximum", unless: isNumeric, "integer and number")

        var phraseExpansion: Expansion?
        let type: ParameterType
        switch typeName {
        case "integer": type = .integer
        case "number": type = .number
        case "boolean": type = .boolean
        case "duration": type = .duration
        case "ordinal": type = .ordinal
        case "enumeration":
            let cases = try readCases(object.array("cases"))
            guard !cases.isEmpty else { throw reader.error("an enumeration needs at least one case", at: try object.required("cases").location) }
            type = .enumeration(cases)
        case "vocabulary":
            let vocabularyNode = try object.required("vocabularyType")
            let vocabularyType = try reader.string(vocabularyNode, "'vocabularyType'")
            try checkName(vocabularyType, at: vocabularyNode)
            type = .vocabulary(type: vocabularyType, fallback: try readCases(object.optionalArray("cases")))
        case "phrase":
            let grammarNode = try object.required("grammar")
            let text = try reader.string(grammarNode, "'grammar'")
            let parsed = try ExpansionParser.parseTemplate(locatedText(grammarNode, text))
            let expansion = try resolveReferences(in: parsed, parameters: [], allowSlots: false)
            try rules.checkRepeats(in: expansion, slot: { _ in false }, source: reader.source, code: .template)
            phraseExpansion = expansion
            type = .phrase
        default:
            let known = "integer, number, boolean, duration, ordinal, enumeration, vocabulary, phrase"
            throw reader.error("unknown parameter type '\(typeName)'; expected one of \(known)", at: typeNode.location)
        }
        let minimum = try object["minimum"].map { try reader.number($0, "'minimum'") }
        let maximum = try object["maximum"].map { try reader.number($0, "'maximum'") }
        if let minimum, let maximum, minimum > maximum, let node = object["maximum"] {
            throw reader.error("'maximum' \(SpokenNumbers.numeral(for: maximum)) is below 'minimum' \(SpokenNumbers.numeral(for: minimum))", at: node.location)
        }
        return ParameterDefinition(
            name: name,
            type: type,
            isRequired: try object.bool("required", default: true),
            prompt: try object.optionalString("prompt"),
            minimum: minimum,
            maximum: maximum,
            location: nameNode.location,
            phraseExpansion: phraseExpansion
        )
    }

    private func readCases(_ nodes: [JSONNode]) throws -> [EnumerationCase] {
        var cases: [EnumerationCase] = []
        var spokenBy: [String: String] = [:]
        for node in nodes {
            let object = try reader.object(node, "an enumeration case", allowedKeys: ["value", "synonyms"])
            let value = try object.string("value")
            let synonymNodes = try object.optionalArray("synonyms")
            var synonyms: [String] = []
            for synonymNode in synonymNodes {
                let synonym = try readSynonym(synonymNode)
                if let other = spokenBy[synonym], other != value {
                    throw reader.error("synonym '\(synonym)' already says case '\(other)'", at: synonymNode.location)
                }
                spokenBy[synonym] = value
                synonyms.append(synonym)
            }
            if synonymNodes.isEmpty {
                guard let valueNode = object["value"] else { continue }
                synonyms = [try readSynonym(valueNode)]
            }
            cases.append(EnumerationCase(value: value, synonyms: synonyms))
        }
        return cases
    }

    /// A synonym must be plain words; it is read as a template to locate a stray character.
    private func readSynonym(_ node: JSONNode) throws -> String {
        let text = try reader.string(node, "a synonym")
        let expansion = try ExpansionParser.parseTemplate(locatedText(node, text))
        var words: [String] = []
        try expansion.forEach { item in
            switch item {
            case .word(let word, _): words.append(word)
            case .sequence: break
            case .slot(_, let location), .rule(_, let location):
                throw reader.error("a synonym must be plain words", at: location, code: .template)
            case .choice, .optional, .repeated:
                throw reader.error("a synonym must be plain words", at: node.location, code: .template)
            }
        }
        return words.joined(separator: " ")
    }

    private func locatedText(_ node: JSONNode, _ text: String) -> LocatedText {
        LocatedText(scalars: Array(text.unicodeScalars), locations: node.scalarLocations, source: reader.source)
    }

    /// Checks the slots of a template or phrase grammar and resolves its rule references to symbols.
    private func resolveReferences(in expansion: Expansion, parameters: Set<String>, allowSlots: Bool) throws -> Expansion {
        try expansion.forEach { item in
            guard case .slot(let name, let location) = item else { return }
            guard allowSlots else {
                throw reader.error("a phrase grammar cannot contain a parameter {\(name)}", at: location, code: .template)
            }
            guard parameters.contains(name) else {
                throw reader.error("unknown parameter {\(name)}; declared: \(Self.list(parameters))", at: location, code: .reference)
            }
        }
        return try expansion.mappingRules { reference, location in
            try rules.symbol(for: reference, at: location, from: nil, in: reader.source)
        }
    }

    private func checkPlaceholders(in node: JSONNode, text: String, parameters: Set<String>) throws {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            defer { index += 1 }
            guard scalars[index] == "{" else { continue }
            guard let close = scalars[index...].firstIndex(of: "}") else {
                throw reader.error("missing '}' to close '{'", at: node.scalarLocations[index], code: .template)
            }
            var name = String.UnicodeScalarView()
            name.append(contentsOf: scalars[(index + 1)..<close])
            guard parameters.contains(String(name)) else {
                throw reader.error("unknown parameter {\(String(name))}; declared: \(Self.list(parameters))", at: node.scalarLocations[index], code: .reference)
            }
            index = close
        }
    }

    private static func list(_ names: Set<String>) -> String {
        names.isEmpty ? "none" : names.sorted().joined(separator: ", ")
    }
}
