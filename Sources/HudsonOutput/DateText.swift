/*!
 Dates as output shows them, without Foundation: RFC 3339 in UTC for JSON (CONTRACT.md
 "dates in RFC 3339 UTC") and a short local form for text, given the zone offset the CLI
 looked up.

 Written byte by byte into the string's storage: a streamed search formats a date per
 message, and building it from interpolated pieces cost 5,000 instructions a date, a
 tenth of streaming 27,000 matches (issue 19).
 */

public enum DateText {
    /// `2026-11-30T14:02:11Z` for epoch milliseconds.
    public static func rfc3339UTC(milliseconds: Int64) -> String {
        format(seconds: floorDiv(milliseconds, 1000), separator: UInt8(ascii: "T"), withSeconds: true, zulu: true)
    }

    /// `2026-11-30 14:02` in a zone `offsetSeconds` east of UTC.
    public static func short(milliseconds: Int64, offsetSeconds: Int64) -> String {
        format(seconds: floorDiv(milliseconds, 1000) + offsetSeconds, separator: UInt8(ascii: " "), withSeconds: false,
               zulu: false)
    }

    /// `a / b` rounded down, for `b > 0`, without overflow at `Int64.min` (a store's date
    /// is the server's: any Int64 may come).
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a + 1) / b - 1
    }

    /// The calendar fields of epoch seconds (Howard Hinnant's days-from-civil inverse).
    static func fields(seconds: Int64) -> (year: Int64, month: Int64, day: Int64, secondOfDay: Int64) {
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
        return (year, month, day, secondOfDay)
    }

    /// `short`, appended to `bytes` without building a string (TextLine).
    public static func appendShort(milliseconds: Int64, offsetSeconds: Int64, to bytes: inout [UInt8]) {
        let seconds = floorDiv(milliseconds, 1000) + offsetSeconds
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            let count = write(seconds: seconds, separator: UInt8(ascii: " "), withSeconds: false, zulu: false, into: buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Room for any date `write` writes: a year of Int64 (20 characters with its sign)
    /// and 16 more.
    static let capacity = 40

    static func format(seconds: Int64, separator: UInt8, withSeconds: Bool, zulu: Bool) -> String {
        String(unsafeUninitializedCapacity: capacity) { buffer in
            write(seconds: seconds, separator: separator, withSeconds: withSeconds, zulu: zulu, into: buffer)
        }
    }

    /// `YYYY-MM-DD<separator>HH:MM[:SS][Z]` into `buffer` (at least `capacity` bytes);
    /// returns the number of bytes written. A year outside 0...9999 is written in full,
    /// with its sign, as before.
    static func write(
        seconds: Int64, separator: UInt8, withSeconds: Bool, zulu: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        let (year, month, day, secondOfDay) = fields(seconds: seconds)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        let yearText: String? = year >= 0 && year < 10_000 ? nil : String(year)
        var index = 0
        func put(_ byte: UInt8) {
            buffer[index] = byte
            index += 1
        }
        func two(_ value: Int64) {
            put(UInt8(48 + value / 10))
            put(UInt8(48 + value % 10))
        }
        if let yearText {
            for byte in yearText.utf8 { put(byte) }
        } else {
            two(year / 100)
            two(year % 100)
        }
        put(UInt8(ascii: "-"))
        two(month)
        put(UInt8(ascii: "-"))
        two(day)
        put(separator)
        two(hour)
        put(UInt8(ascii: ":"))
        two(minute)
        if withSeconds {
            put(UInt8(ascii: ":"))
            two(second)
        }
        if zulu { put(UInt8(ascii: "Z")) }
        return index
    }
}
