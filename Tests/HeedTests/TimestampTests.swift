import Foundation
import HeedCore
import Testing

/// Heed's own ISO 8601 reading and writing, against Foundation's on the same dates.
@Suite("ISO 8601 timestamps")
struct TimestampTests {
    /// Seconds from 1600 to 2400, whole and fractional, before and after 1970.
    static func dates(count: Int) -> [Date] {
        var generator = SeededGenerator(seed: 8601)
        let low = -11_676_096_000.0, high = 13_569_465_600.0
        return (0..<count).map { index in
            let seconds = Double.random(in: low..<high, using: &generator)
            return Date(timeIntervalSince1970: index.isMultiple(of: 2) ? seconds.rounded(.down) : seconds)
        }
    }

    @Test("writes what Foundation writes, and reads it back to the second")
    func matchesFoundation() throws {
        for date in Self.dates(count: 4000) {
            let text = date.iso8601Text
            #expect(text == date.formatted(.iso8601), "\(date.timeIntervalSince1970)")
            let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
            #expect(Date(iso8601: text) == whole, "\(text)")
            #expect(try Date(text, strategy: .iso8601) == whole, "\(text)")
        }
    }

    @Test("the days around leap days, month ends and the epoch")
    func calendarEdges() {
        let cases: [(String, Double)] = [
            ("1970-01-01T00:00:00Z", 0), ("1969-12-31T23:59:59Z", -1),
            ("2000-02-29T12:00:00Z", 951_825_600), ("2000-03-01T00:00:00Z", 951_868_800),
            ("2024-02-29T23:59:59Z", 1_709_251_199), ("2025-05-01T09:30:00Z", 1_746_091_800),
            ("1900-03-01T00:00:00Z", -2_203_891_200), ("2100-12-31T23:59:59Z", 4_133_980_799),
        ]
        for (text, seconds) in cases {
            #expect(Date(iso8601: text)?.timeIntervalSince1970 == seconds, "\(text)")
            #expect(Date(timeIntervalSince1970: seconds).iso8601Text == text)
        }
        #expect(Date(timeIntervalSince1970: -0.25).iso8601Text == "1969-12-31T23:59:59Z")
    }

    /// A time read from someone else's file (a microphone claim's holder) can be anything.
    @Test("a date beyond the years 0001–9999 is written as the nearest end")
    func outOfRange() {
        #expect(Date(timeIntervalSince1970: 1e300).iso8601Text == "9999-12-31T23:59:59Z")
        #expect(Date(timeIntervalSince1970: .infinity).iso8601Text == "9999-12-31T23:59:59Z")
        #expect(Date(timeIntervalSince1970: -1e300).iso8601Text == "0001-01-01T00:00:00Z")
        #expect(Date(timeIntervalSince1970: .nan).iso8601Text == "0001-01-01T00:00:00Z")
        #expect(Date(iso8601: "9999-12-31T23:59:59Z")?.iso8601Text == "9999-12-31T23:59:59Z")
        #expect(Date(iso8601: "0001-01-01T00:00:00Z")?.iso8601Text == "0001-01-01T00:00:00Z")
    }

    @Test("offsets and fractions of a second are read")
    func offsetsAndFractions() {
        let utc = Date(iso8601: "2025-05-01T09:30:00Z")
        #expect(utc != nil)
        #expect(Date(iso8601: "2025-05-01T11:30:00+02:00") == utc)
        #expect(Date(iso8601: "2025-05-01T04:30:00-0500") == utc)
        #expect(Date(iso8601: "2025-05-01T09:30:00.250Z") == utc.map { $0 + 0.25 })
    }

    @Test("anything else is not a timestamp", arguments: [
        "", "2025-05-01", "2025-05-01T09:30:00", "2025-05-01 09:30:00Z", "2025-5-01T09:30:00Z",
        "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z",
        "2025-00-01T00:00:00Z", "2025-05-00T00:00:00Z", "2025-05-01T24:00:00Z", "2025-05-01T09:60:00Z",
        "2025-05-01T09:30:60Z", "2025-05-01T09:30:00.Z", "2025-05-01T09:30:00+2:00", "2025-05-01T09:30:00+24:00",
        "2025-05-01T09:30:00Zjunk", " 2025-05-01T09:30:00Z", "２０２５-05-01T09:30:00Z",
    ])
    func rejects(_ text: String) {
        #expect(Date(iso8601: text) == nil)
    }
}
