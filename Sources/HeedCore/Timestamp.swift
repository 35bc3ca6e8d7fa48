public import Foundation

/// The ISO 8601 date and time Heed writes in its files, events and names: `2025-05-01T09:30:00Z`,
/// whole seconds in UTC.
///
/// Heed reads and writes these itself, by the proleptic Gregorian calendar, rather than through
/// `Date.ISO8601FormatStyle` or `ISO8601DateFormatter`: those build a Foundation calendar whose
/// time zone opens ICU's zone data even for UTC, and a listener that reads the authorization
/// file before each command then holds 1.1 MB more for the rest of its life (docs/MEASUREMENTS.md).
/// The text is the same as theirs.
extension Date {
    /// The date of an ISO 8601 text: `YYYY-MM-DDTHH:MM:SS`, optionally a decimal fraction of a
    /// second, then `Z` or an offset (`+02:00`, `-0500`). `nil` for anything else, including a day the
    /// month does not have.
    public init?(iso8601 text: some StringProtocol) {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
              let month = scanner.number(digits: 2), scanner.skip("-"),
              let day = scanner.number(digits: 2), scanner.skip("T"),
              let hour = scanner.number(digits: 2), scanner.skip(":"),
              let minute = scanner.number(digits: 2), scanner.skip(":"),
              let second = scanner.number(digits: 2),
              (1...12).contains(month), (1...Self.daysIn(month, of: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        if scanner.skip(".") {
            var scale = 0.1
            var any = false
            while let digit = scanner.number(digits: 1) {
                fraction += Double(digit) * scale
                scale /= 10
                any = true
            }
            guard any else { return nil }
        }
        var offset = 0
        if !scanner.skip("Z") {
            guard let sign = scanner.sign(), let hours = scanner.number(digits: 2) else { return nil }
            _ = scanner.skip(":")
            guard let minutes = scanner.number(digits: 2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard scanner.atEnd else { return nil }
        let seconds = Self.daysSinceEpoch(year: year, month: month, day: day) * 86_400
            + hour * 3600 + minute * 60 + second - offset
        self.init(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// This date as ISO 8601 text in UTC, to the second below: `2025-05-01T09:30:00Z`. A date
    /// outside the years 0001–9999 (or not a number: a time read from a file can be anything)
    /// is written as the nearest end of that range.
    public var iso8601Text: String {
        let first = -62_135_596_800.0, last = 253_402_300_799.0  // 0001-01-01T00:00:00Z, 9999-12-31T23:59:59Z
        let clamped = timeIntervalSince1970.isNaN ? first : min(max(timeIntervalSince1970.rounded(.down), first), last)
        let (days, time) = Int(clamped).quotientAndRemainder(dividingBy: 86_400)
        let (dayNumber, secondOfDay) = time < 0 ? (days - 1, time + 86_400) : (days, time)
        let (year, month, day) = Self.civilDate(daysSinceEpoch: dayNumber)
        func digits(_ value: Int, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T"
            + "\(digits(secondOfDay / 3600, 2)):\(digits(secondOfDay / 60 % 60, 2)):\(digits(secondOfDay % 60, 2))Z"
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`: years counted from March, in 400-year eras of 146,097 days).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysSinceEpoch` (Hinnant's `civil_from_days`).
    private static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let days = days + 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Reads ASCII digits and marks from the bytes of a timestamp.
private struct DigitScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// A number of exactly `digits` ASCII digits, or `nil` (and nothing read).
    mutating func number(digits: Int) -> Int? {
        guard index + digits <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[index..<index + digits] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += digits
        return value
    }

    /// Reads `mark` if it comes next.
    mutating func skip(_ mark: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: mark) else { return false }
        index += 1
        return true
    }

    /// +1 or -1 for a `+` or `-` next, else `nil`.
    mutating func sign() -> Int? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }
}
