/// A position in a file that a user wrote: an intent file, a rule file, a plugin manifest.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The file path as it was given to the loader.
    public var path: String
    /// The line, counted from 1.
    public var line: Int
    /// The column in Unicode scalars, counted from 1.
    public var column: Int

    /// Creates a location.
    /// - Parameters:
    ///   - path: The file path.
    ///   - line: The line, counted from 1.
    ///   - column: The column in Unicode scalars, counted from 1.
    public init(path: String, line: Int, column: Int) {
        self.path = path
        self.line = line
        self.column = column
    }

    /// `path:line:column`, the form compilers and editors understand.
    public var description: String { "\(path):\(line):\(column)" }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.path, lhs.line, lhs.column) < (rhs.path, rhs.line, rhs.column)
    }
}

/// The text of one loaded file, kept to quote a line under an error message.
public struct SourceText: Sendable {
    /// The file path as it was given to the loader.
    public let path: String
    /// The text as Unicode scalars (columns count scalars).
    public let scalars: [Unicode.Scalar]

    /// Keeps the text of a file.
    public init(path: String, text: String) {
        self.path = path
        self.scalars = Array(text.unicodeScalars)
    }

    /// The text of a line without its line break.
    /// - Parameter line: The line, counted from 1.
    /// - Returns: The line, or `nil` when the file has fewer lines.
    public func line(_ line: Int) -> String? {
        var current = 1
        var start = 0
        for (index, scalar) in scalars.enumerated() where scalar == "\n" {
            if current == line { return Self.string(scalars[start..<index]) }
            current += 1
            start = index + 1
        }
        return current == line ? Self.string(scalars[start...]) : nil
    }

    private static func string(_ slice: ArraySlice<Unicode.Scalar>) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: slice.filter { $0 != "\r" })
        return String(text)
    }
}
