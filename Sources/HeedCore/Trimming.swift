extension StringProtocol {
    /// The text without the white space and line ends at either end: Unicode's White_Space, as
    /// Swift's `Character.isWhitespace` has it (Foundation trims U+200B ZERO WIDTH SPACE too).
    ///
    /// Heed trims with this rather than Foundation's `trimmingCharacters(in:)`, which on Linux goes
    /// through `NSString` and CoreFoundation's character-set tables: a listener that trims a plugin
    /// manifest's name at start holds those pages for the rest of its life (docs/MEASUREMENTS.md).
    public var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
