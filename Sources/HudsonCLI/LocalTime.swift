/*!
 The user's time zone, through the C library (which reads TZ and /etc/localtime): the
 offset to print local dates and where a calendar day starts for `after:`/`before:`.
 */
import Glibc

public enum LocalTime {
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
