/*!
 The user's time zone, through the C library (which reads TZ and /etc/localtime): the
 offset to print local dates and where a calendar day starts for `after:`/`before:`.
 */
import Glibc

public enum LocalTime {
    /// UTC, as a POSIX TZ value no file stands behind.
    public static let utc = "UTC0"

    /// The file the C library would read for `TZ`, when it is there and not a regular file:
    /// its path and what it is. glibc first reads every TZ value as a file (a leading ':'
    /// dropped; a relative name under `$TZDIR`, else /usr/share/zoneinfo) and only then
    /// parses it as a POSIX rule, and it opens that file blocking: a FIFO with no writer
    /// held every command that prints a date for ever, and a terminal or `/dev/stdin`
    /// would wait for input. A regular file, a directory or nothing is left to the C
    /// library, which reads an unusable one as UTC at once.
    public static func unreadableZoneFile() -> (path: [UInt8], kind: String)? {
        guard let zone = getenv("TZ").map(bytes) else { return nil }
        var name = zone[...]
        if name.first == UInt8(ascii: ":") { name = name.dropFirst() }
        guard !name.isEmpty else { return nil }
        var path = Array(name)
        if name.first != UInt8(ascii: "/") {
            let directory = getenv("TZDIR").map(bytes).flatMap { $0.isEmpty ? nil : $0 } ?? Array("/usr/share/zoneinfo".utf8)
            path = directory + [UInt8(ascii: "/")] + name
        }
        var info = stat()
        guard (path + [0]).withUnsafeBufferPointer({ stat(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), &info) }) == 0
        else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFIFO: return (path, "a pipe")
        case S_IFCHR, S_IFBLK: return (path, "a device")
        case S_IFSOCK: return (path, "a socket")
        default: return nil  // a directory fails to read at once, and the C library then uses UTC
        }
    }

    /// From now on, in this process and the commands it starts, local time is UTC.
    public static func useUTC() {
        setenv("TZ", utc, 1)
        tzset()
    }

    private static func bytes(_ text: UnsafeMutablePointer<CChar>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
    }

    /// Seconds east of UTC at the given instant (daylight saving included).
    public static func offset(atEpochSeconds seconds: Int64) -> Int64 {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Int64(parts.tm_gmtoff)
    }

    /// The epoch second of local midnight starting the given day.
    @Sendable public static func startOfDay(year: Int, month: Int, day: Int) -> Int64 {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_isdst = -1
        return Int64(mktime(&parts))
    }

    /// Milliseconds since the epoch, now.
    public static var nowMilliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
