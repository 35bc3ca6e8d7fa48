/// Text helpers for response sentences.
public enum Spoken {
    /// A duration as people say it: "10 minutes", "1 hour and 5 minutes", "45 seconds".
    /// - Parameter duration: The duration; fractions of a second are rounded.
    /// - Returns: The spoken form.
    public static func duration(_ duration: Duration) -> String {
        let total = Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18).rounded())
        let hours = total / 3600
        let minutes = total % 3600 / 60
        let seconds = total % 60
        var parts: [String] = []
        func add(_ count: Int, _ unit: String) {
            if count > 0 { parts.append("\(count) \(unit)\(count == 1 ? "" : "s")") }
        }
        add(hours, "hour")
        add(minutes, "minute")
        add(seconds, "second")
        switch parts.count {
        case 0: return "0 seconds"
        case 1: return parts[0]
        default: return parts.dropLast().joined(separator: ", ") + " and " + parts[parts.count - 1]
        }
    }
}
