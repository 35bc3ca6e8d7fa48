import Foundation
import HeedCore
import Testing

/// HeedCore's `trimmed`, against Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)`.
@Suite("Trimming")
struct TrimmingTests {
    @Test("trims what Foundation trims, and keeps the inside", arguments: [
        "", " ", "\t\n\r ", "pause", "  pause  ", "\tset a timer\n", "set  a\ttimer", "\u{00A0}notes\u{2003}",
        "\u{3000}タイマー\u{3000}", "e\u{301} ", " \r\n", "a\u{2028}", "\u{85}x\u{85}",
    ])
    func matchesFoundation(_ text: String) {
        #expect(text.trimmed == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text[...].trimmed == text.trimmed)
    }

    /// Foundation counts U+200B ZERO WIDTH SPACE as white space; Unicode (White_Space) and Swift do not.
    @Test func aZeroWidthSpaceIsNotWhiteSpace() {
        #expect("x \u{200B}".trimmed == "x \u{200B}")
    }
}
