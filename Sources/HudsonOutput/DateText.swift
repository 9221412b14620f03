/*!
 Dates as output shows them, without Foundation: RFC 3339 in UTC for JSON (CONTRACT.md
 "dates in RFC 3339 UTC") and a short local form for text, given the zone offset the CLI
 looked up.
 */

public enum DateText {
    /// `2026-11-30T14:02:11Z` for epoch milliseconds.
    public static func rfc3339UTC(milliseconds: Int64) -> String {
        let (date, time) = civil(seconds: floorDiv(milliseconds, 1000))
        return "\(date)T\(time)Z"
    }

    /// `2026-11-30 14:02` in a zone `offsetSeconds` east of UTC.
    public static func short(milliseconds: Int64, offsetSeconds: Int64) -> String {
        let (date, time) = civil(seconds: floorDiv(milliseconds, 1000) + offsetSeconds)
        return "\(date) \(time.prefix(5))"
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// (YYYY-MM-DD, HH:MM:SS) for epoch seconds, proleptic Gregorian (Howard Hinnant's
    /// days-from-civil inverse).
    static func civil(seconds: Int64) -> (String, String) {
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let yearText = year >= 0 && year < 10_000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return ("\(yearText)-\(two(month))-\(two(day))",
                "\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))")
    }
}
