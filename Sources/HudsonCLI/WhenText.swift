/*!
 WHEN: the one reading of a time the user gives for `hd-mark snooze=WHEN` and
 `remind=WHEN` (issue 41), in the user's time zone (LocalTime, through the C library):

 - `2026-12-08T09:00` (or `2026-12-08 09:00`): that local time; `2026-12-08`: 08:00 that day;
 - `+N` followed by `m`, `h`, `d` or `w` (minutes, hours, days, weeks): from now; a day
   is a calendar day (`+1d` at 09:00 is 09:00 tomorrow, across a daylight-saving change;
   when that wall time does not exist that day, the time the clock shows then, 02:30 in a
   skipped hour being 03:30);
 - `tomorrow`: 08:00 tomorrow; `tonight`: 20:00 today; `monday` … `sunday`: 08:00 on the
   next such day (never today).

 A local time written out that does not exist (skipped by a daylight-saving change) is
 refused, as is a time already past, one more than ten years ahead, and anything else: a
 usage error, so the caller exits 64 and changes nothing.
 */
import Glibc
import HudsonOutput
import HudsonStore

public enum WhenText {
    /// What the forms mean, for help and errors.
    public static let forms = "YYYY-MM-DDTHH:MM, YYYY-MM-DD, +Nm, +Nh, +Nd, +Nw, tomorrow, tonight, monday … sunday"

    /// The hour a day-only form (`tomorrow`, `monday`, `2026-12-08`) means.
    static let morningHour = 8
    /// The hour `tonight` means.
    static let eveningHour = 20
    /// The furthest ahead a WHEN may be.
    static let horizonSeconds: Int64 = 10 * 366 * 86_400

    /// The epoch second `text` names, given now (epoch seconds). A `+N` form counts from
    /// `origin` when given (`hd-send --remind` after `--at`: from the send time), else from
    /// now. Throws a `UsageError` that says what is wrong with it.
    public static func parse(_ text: String, now: Int64, relativeTo origin: Int64? = nil) throws -> Int64 {
        let lowered = text.lowercased()
        let shown = TerminalSafety.quoted(text)
        let today = localDate(now)
        let result: Int64
        if lowered.hasPrefix("+") {
            result = try relative(String(lowered.dropFirst()), now: origin ?? now, shown: shown)
        } else if lowered == "tomorrow" {
            result = try local(today.year, today.month, today.day + 1, morningHour, 0, shown: shown)
        } else if lowered == "tonight" {
            result = try local(today.year, today.month, today.day, eveningHour, 0, shown: shown)
        } else if let weekday = weekdays.firstIndex(of: lowered) {
            var ahead = (weekday - today.weekday + 7) % 7
            if ahead == 0 { ahead = 7 }
            result = try local(today.year, today.month, today.day + ahead, morningHour, 0, shown: shown)
        } else if let absolute = try absolute(lowered, shown: shown) {
            result = absolute
        } else {
            throw UsageError("\(shown): not a time (\(forms))")
        }
        guard result > now else { throw UsageError("\(shown): \(describe(result)) is in the past") }
        guard result - now <= horizonSeconds else { throw UsageError("\(shown): more than ten years ahead") }
        return result
    }

    /// A time as text shows it: local, to the minute, with the offset (`2026-12-08 09:00 +0100`).
    public static func describe(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return String(seconds) }
        let offset = Int(parts.tm_gmtoff)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return "\(Int(parts.tm_year) + 1900)-\(two(Int(parts.tm_mon) + 1))-\(two(Int(parts.tm_mday))) "
            + "\(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))) \(sign)\(two(minutes / 60))\(two(minutes % 60))"
    }

    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    struct LocalDate { var year: Int, month: Int, day: Int, hour: Int, minute: Int, weekday: Int }

    static func localDate(_ seconds: Int64) -> LocalDate {
        var time = time_t(seconds)
        var parts = tm()
        _ = localtime_r(&time, &parts)
        return LocalDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                         hour: Int(parts.tm_hour), minute: Int(parts.tm_min), weekday: Int(parts.tm_wday))
    }

    /// The epoch second of a local wall time (the day may run past the month's end:
    /// mktime carries it). A wall time the zone skips is refused, unless `normalising`
    /// (a relative time, which names no wall time of its own: it is moved by the gap, as
    /// mktime moves it); one it repeats (the hour after a change back) is the one the C
    /// library picks.
    static func local(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, shown: String,
                      normalising: Bool = false) throws -> Int64 {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_isdst = -1
        let wanted = parts
        let seconds = mktime(&parts)
        guard seconds != -1 else { throw UsageError("\(shown): not a time the local zone has") }
        // mktime moves a skipped wall time by the size of the gap: the fields it gives back differ.
        guard normalising || (parts.tm_hour == wanted.tm_hour && parts.tm_min == wanted.tm_min) else {
            throw UsageError("\(shown): \(two(hour)):\(two(minute)) does not exist that day in the local time zone (daylight saving)")
        }
        return Int64(seconds)
    }

    private static func relative(_ text: String, now: Int64, shown: String) throws -> Int64 {
        guard let unit = text.last, let count = Int(text.dropLast()), count > 0, count <= 10_000,
              text.dropLast().allSatisfy(\.isASCIIDigit)
        else { throw UsageError("\(shown): not a time (\(forms))") }
        switch unit {
        case "m": return now + Int64(count) * 60
        case "h": return now + Int64(count) * 3600
        case "d", "w":
            let days = unit == "d" ? count : count * 7
            let start = localDate(now)
            return try local(start.year, start.month, start.day + days, start.hour, start.minute, shown: shown,
                             normalising: true)
        default: throw UsageError("\(shown): not a time (\(forms))")
        }
    }

    /// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DD HH:MM`; nil when it is none of them.
    private static func absolute(_ text: String, shown: String) throws -> Int64? {
        let characters = Array(text)
        guard characters.count == 10 || characters.count == 16,
              characters[4] == "-", characters[7] == "-" else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            let slice = characters[range]
            guard slice.allSatisfy(\.isASCIIDigit) else { return nil }
            return Int(String(slice))
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        var hour = morningHour, minute = 0
        if characters.count == 16 {
            guard characters[10] == "t" || characters[10] == " ", characters[13] == ":",
                  let h = number(11..<13), let m = number(14..<16) else { return nil }
            hour = h
            minute = m
        }
        guard (1...12).contains(month), (1...daysIn(month, year)).contains(day), (0...23).contains(hour),
              (0...59).contains(minute), year >= 1970
        else { throw UsageError("\(shown): no such date or time") }
        return try local(year, month, day, hour, minute, shown: shown)
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// `snooze=WHEN` or `remind=WHEN`, an `hd-mark` action that sets a thread aside until a
/// time (Queue/Snoozes.swift).
public struct TimerOperand: Sendable, Equatable {
    public var kind: SnoozeKind
    /// Epoch seconds.
    public var wakeAt: Int64

    /// Nil when `text` is no timer action at all; a usage error when its WHEN is bad.
    public init?(parsing text: String, now: Int64) throws {
        let kinds: [(String, SnoozeKind)] = [("snooze=", .snooze), ("remind=", .remind)]
        guard let (prefix, kind) = kinds.first(where: { text.hasPrefix($0.0) }) else { return nil }
        self.kind = kind
        wakeAt = try WhenText.parse(String(text.dropFirst(prefix.count)), now: now)
    }

    /// What `hd-undo --list` shows for it: `snooze until 2026-12-08 09:00 +0100`.
    public var description: String { "\(kind.rawValue) until \(WhenText.describe(wakeAt))" }

    /// The epoch second a test's `HUDSON_TEST_NOW` says it is, else now (TestHooks).
    public static func now(_ invocation: Invocation) -> Int64 {
        TestHooks.timerNow(environment: invocation.environment)
    }
}
