/// Text that came from someone else (a plugin's reply, a manifest, a file being quoted), made safe
/// to show in a terminal, a log line or a spoken sentence.
///
/// A terminal obeys the control characters in what it prints: `ESC[8m` hides the text after it,
/// `\r` returns to the start of the line so that later text overwrites it, and bidirectional
/// overrides (U+202E) reverse what a reader sees. A plugin could use them to fake Heed's own
/// permission prompt. Every control character (Unicode category Cc: C0, DEL and C1) becomes a
/// space, and the bidirectional controls (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) are
/// dropped. Runs of spaces are kept as they are: only what was a control changes.
public enum DisplayText {
    /// `text` with its control characters replaced by spaces and bidirectional controls removed.
    /// - Parameter text: Text from outside Heed.
    /// - Returns: The text, safe to print; the same string when there was nothing to change.
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isBidirectionalControl(scalar) { continue }
            result.append(isControl(scalar) ? " " : scalar)
        }
        return String(result)
    }

    /// Whether `scalar` would be changed by ``sanitized(_:)``.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isBidirectionalControl(scalar)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
