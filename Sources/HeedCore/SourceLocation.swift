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
        lineRange(line).map { Self.string(scalars[$0]) }
    }

    /// The most characters of a line that an error message quotes: a JSON file written on one
    /// line of 50 MB must not put 50 MB on standard error.
    public static let excerptWidth = 120

    /// The part of a line around a column, for quoting under an error message: the whole line when
    /// it is at most ``excerptWidth`` characters long, else a window of that width around the
    /// column with `…` where it was cut. Control characters are shown as spaces (except tabs,
    /// which keep the caret in line).
    /// - Parameter location: The line and column to show.
    /// - Returns: The text and the caret's column in it, or `nil` when the file has fewer lines.
    public func excerpt(around location: SourceLocation) -> (text: String, column: Int)? {
        guard let range = lineRange(location.line) else { return nil }
        let caret = range.lowerBound + max(0, location.column - 1)
        var start = range.lowerBound
        var end = range.upperBound
        if end - start > Self.excerptWidth {
            start = max(range.lowerBound, min(caret - Self.excerptWidth / 2, end - Self.excerptWidth))
            end = min(range.upperBound, start + Self.excerptWidth)
        }
        var text = String.UnicodeScalarView()
        if start > range.lowerBound { text.append("…") }
        for scalar in scalars[start..<end] where scalar != "\r" {
            text.append(scalar != "\t" && DisplayText.isUnsafe(scalar) ? " " : scalar)
        }
        if end < range.upperBound { text.append("…") }
        let column = caret - start + 1 + (start > range.lowerBound ? 1 : 0)
        return (String(text), column)
    }

    /// The indices of a line's scalars, without its line break.
    private func lineRange(_ line: Int) -> Range<Int>? {
        guard line >= 1 else { return nil }
        var current = 1
        var start = 0
        if line > 1 {
            for index in scalars.indices where scalars[index] == "\n" {
                current += 1
                if current == line {
                    start = index + 1
                    break
                }
            }
            guard current == line else { return nil }
        }
        let end = scalars[start...].firstIndex(of: "\n") ?? scalars.endIndex
        return start..<end
    }

    private static func string(_ slice: ArraySlice<Unicode.Scalar>) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: slice.filter { $0 != "\r" })
        return String(text)
    }
}
