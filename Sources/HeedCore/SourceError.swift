/// An error in a file a user wrote (an intent file, a rule file, a plugin manifest),
/// located at the spot that is wrong.
///
/// Its ``description`` renders the whole message the way compilers do:
/// ```
/// intents/timer.json:12:31: error: unbalanced '['
///         "set [a timer for {duration}",
///              ^
/// ```
public struct SourceError: Error, CustomStringConvertible, Sendable {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable {
            case unreadableFile, jsonSyntax, schema, template, ruleSyntax, reference
        }

        private let storage: Storage

        private init(_ storage: Storage) { self.storage = storage }

        /// A file could not be read.
        public static let unreadableFile = Code(.unreadableFile)
        /// A JSON file is not valid JSON.
        public static let jsonSyntax = Code(.jsonSyntax)
        /// Valid JSON that does not fit its format: a missing key, a wrong type, a duplicate name.
        public static let schema = Code(.schema)
        /// A phrase template is malformed.
        public static let template = Code(.template)
        /// A JSGF rule file is malformed.
        public static let ruleSyntax = Code(.ruleSyntax)
        /// A name refers to nothing: an unknown rule or parameter, or a rule that refers to itself.
        public static let reference = Code(.reference)

        public var description: String { "\(storage)" }
    }

    /// What kind of problem this is.
    public var code: Code
    /// Where the problem is.
    public var location: SourceLocation
    /// The message without location, e.g. `unknown rule <digit>`.
    public var message: String
    /// The source line quoted under the message, when known: at most about
    /// ``SourceText/excerptWidth`` characters of it around the column, control characters shown
    /// as spaces.
    public var sourceLine: String?
    /// The column of the caret in ``sourceLine``, counted from 1; `nil` means `location.column`.
    public var sourceLineColumn: Int?
    /// The error that caused this one, e.g. the file system error of an unreadable file.
    public var underlyingError: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        at location: SourceLocation,
        sourceLine: String? = nil,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.sourceLine = sourceLine
        self.underlyingError = underlyingError
    }

    /// Creates an error that quotes the line of `source` it is on.
    public init(_ code: Code, _ message: String, at location: SourceLocation, in source: SourceText) {
        self.init(code, message, at: location)
        if let excerpt = source.excerpt(around: location) {
            sourceLine = excerpt.text
            sourceLineColumn = excerpt.column
        }
    }

    /// `path:line:column: error: message`, then the source line and a caret under the column.
    public var description: String {
        var text = "\(location): error: \(message)"
        if let sourceLine {
            // Keep the line's tabs so the caret lines up in a terminal.
            let indent = sourceLine.unicodeScalars.prefix(max(0, (sourceLineColumn ?? location.column) - 1))
                .map { $0 == "\t" ? "\t" : " " }.joined()
            text += "\n\(sourceLine)\n\(indent)^"
        }
        return text
    }
}
