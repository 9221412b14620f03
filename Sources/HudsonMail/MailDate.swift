/*!
 The RFC 5322 `Date:` header (§3.3) to seconds since the Unix epoch, in pure Swift (this module
 links no Foundation). Real headers stray from the grammar, so the parser reads tokens rather
 than a fixed sequence: it accepts the obsolete forms of §4.3 (two- and three-digit years,
 named and military zones, comments, missing day of week), missing seconds, asctime order
 (`Mon Dec  2 13:00:00 2024`, as mbox `From ` lines and some mailers write) and ISO 8601.
 Gmail's `internalDate` remains the ordering key (gmail-api.md §8); this is for display and
 for raw mail.
 */

public enum MailDate {
    /// Seconds since 1970-01-01T00:00:00Z for a Date header value, or nil when no valid date
    /// is found. A missing zone, `-0000` and military zones mean UTC (RFC 5322 §3.3, §4.3);
    /// a missing time of day means midnight.
    public static func parse(_ value: String) -> Int64? {
        if let iso = parseISO8601(value) { return iso }
        var day: Int? = nil, month: Int? = nil, year: Int? = nil
        var time: (hour: Int, minute: Int, second: Int)? = nil
        var offset: Int? = nil
        for token in tokens(value) {
            let lower = token.lowercased()
            if let number = Int(token), token.allSatisfy({ $0.isASCII && $0.isNumber }) {
                if token.count >= 4 || (day != nil && year == nil) {
                    if year == nil { year = expandYear(number, digits: token.count) }
                } else if day == nil {
                    day = number
                }
            } else if token.contains(":"), time == nil, let parsed = parseTime(token) {
                time = parsed.time
                if let zone = parsed.zone { offset = zone }
            } else if (token.hasPrefix("+") || token.hasPrefix("-")), offset == nil, let zone = numericZone(token) {
                offset = zone
            } else if let index = monthIndex(lower), month == nil {
                month = index
            } else if let zone = namedZones[lower], offset == nil {
                offset = zone
            } else if lower.count == 1, let letter = lower.first, letter.isLetter, letter != "j", offset == nil {
                offset = 0
            }
        }
        guard let day, let month, let year else { return nil }
        let clock = time ?? (0, 0, 0)
        return epochSeconds(year: year, month: month, day: day, hour: clock.hour, minute: clock.minute,
                            second: clock.second, offsetMinutes: offset ?? 0)
    }

    /// Seconds since the epoch for a civil date and time at a UTC offset, or nil when a field
    /// is out of range. A leap second (60) is accepted and counts as the next second.
    static func epochSeconds(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offsetMinutes: Int
    ) -> Int64? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...9999).contains(year) else { return nil }
        // Days from civil, after Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms".
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = Int64(era * 146_097 + dayOfEra - 719_468)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
    }

    // MARK: - Tokens

    /// Splits on blanks and commas after removing (possibly nested) comments.
    private static func tokens(_ value: String) -> [String] {
        var cleaned = ""
        var depth = 0
        for character in value {
            if character == "(" { depth += 1; cleaned.append(" "); continue }
            if character == ")" && depth > 0 { depth -= 1; continue }
            if depth > 0 { continue }
            cleaned.append(character == "," ? " " : character)
        }
        return cleaned.split(whereSeparator: { $0.isWhitespace }).map(String.init)
    }

    /// `hh:mm`, `hh:mm:ss`, `hh:mm:ss.fff`, optionally followed by a glued zone (`13:00+0100`).
    private static func parseTime(_ token: String) -> (time: (hour: Int, minute: Int, second: Int), zone: Int?)? {
        var clock = Substring(token)
        var zone: Int? = nil
        if let sign = clock.firstIndex(where: { $0 == "+" || $0 == "-" }) {
            zone = numericZone(String(clock[sign...]))
            clock = clock[..<sign]
        } else if clock.hasSuffix("Z") || clock.hasSuffix("z") {
            zone = 0
            clock = clock.dropLast()
        }
        let fields = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        let secondsField = fields.count == 3 ? fields[2].prefix(while: { $0 != "." }) : "0"
        guard let hour = Int(fields[0]), let minute = Int(fields[1]), let second = Int(secondsField),
              fields[0].count <= 2, fields[1].count == 2 else { return nil }
        return ((hour, minute, second), zone)
    }

    /// `+hhmm`, `-hhmm`, `+hh:mm` or `+hh` as minutes east of UTC.
    private static func numericZone(_ token: String) -> Int? {
        guard let sign = token.first, sign == "+" || sign == "-" else { return nil }
        let digits = token.dropFirst().filter { $0 != ":" }
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.count == 4 || digits.count == 2,
              let number = Int(digits) else { return nil }
        let minutes = digits.count == 4 ? (number / 100) * 60 + number % 100 : number * 60
        guard minutes < 24 * 60 else { return nil }
        return sign == "-" ? -minutes : minutes
    }

    /// RFC 5322 §4.3: two-digit years from 50 are 19xx, below 50 are 20xx; three digits add 1900.
    private static func expandYear(_ year: Int, digits: Int) -> Int {
        switch digits {
        case 1, 2: return year < 50 ? 2000 + year : 1900 + year
        case 3: return 1900 + year
        default: return year
        }
    }

    private static func monthIndex(_ token: String) -> Int? {
        guard token.count >= 3 else { return nil }
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard let index = names.firstIndex(of: String(token.prefix(3))) else { return nil }
        let full = ["january", "february", "march", "april", "may", "june", "july", "august",
                    "september", "october", "november", "december"]
        guard token.count == 3 || full[index].hasPrefix(token) || token == "sept" else { return nil }
        return index + 1
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// RFC 5322 §4.3 zones, plus a few common non-standard ones that are unambiguous.
    private static let namedZones: [String: Int] = [
        "ut": 0, "utc": 0, "gmt": 0, "z": 0,
        "est": -300, "edt": -240, "cst": -360, "cdt": -300,
        "mst": -420, "mdt": -360, "pst": -480, "pdt": -420,
        "cet": 60, "cest": 120, "met": 60, "mest": 120, "eet": 120, "eest": 180,
        "wet": 0, "west": 60, "bst": 60, "jst": 540, "kst": 540, "hkt": 480, "msk": 180,
    ]

    // MARK: - ISO 8601

    /// `2024-12-02T13:00:00Z`, `2024-12-02 13:00:00+01:00`, `2024-12-02`.
    private static func parseISO8601(_ value: String) -> Int64? {
        let text = value.trimmingWhitespace()
        let scalars = Array(text.utf8)
        guard scalars.count >= 10, scalars[4] == 45, scalars[7] == 45,
              let year = Int(String(decoding: scalars[0..<4], as: UTF8.self)),
              let month = Int(String(decoding: scalars[5..<7], as: UTF8.self)),
              let day = Int(String(decoding: scalars[8..<10], as: UTF8.self)) else { return nil }
        var clock = (hour: 0, minute: 0, second: 0)
        var offset = 0
        if scalars.count > 10 {
            guard scalars[10] == UInt8(ascii: "T") || scalars[10] == UInt8(ascii: "t") || scalars[10] == 32,
                  let parsed = parseTime(String(decoding: scalars[11...], as: UTF8.self).trimmingWhitespace())
            else { return nil }
            clock = parsed.time
            offset = parsed.zone ?? 0
        }
        return epochSeconds(year: year, month: month, day: day, hour: clock.hour, minute: clock.minute,
                            second: clock.second, offsetMinutes: offset)
    }
}
