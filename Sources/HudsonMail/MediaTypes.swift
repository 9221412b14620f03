/*!
 Two small facts outgoing mail needs: the media type of an attachment, guessed from its file
 name's extension (the common types of the IANA registry, as `/etc/mime.types` lists them;
 anything else is `application/octet-stream`, RFC 2046 §4.5.1), and the RFC 5322 §3.3 date
 of the Date header, computed from epoch seconds without a calendar library.
 */

public enum MediaType {
    /// `type/subtype` for a file name, by its extension (case-insensitive).
    public static func guess(filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return fallback }
        let ext = filename[filename.index(after: dot)...].lowercased()
        return byExtension[ext] ?? fallback
    }

    public static let fallback = "application/octet-stream"

    /// `message/rfc822` is left out on purpose: RFC 2046 §5.2.1 forbids base64 for it, and
    /// attachments are always base64, so a `.eml` file travels as octet-stream.
    static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
        "css": "text/css", "ics": "text/calendar", "vcf": "text/vcard", "xml": "application/xml",
        "json": "application/json", "js": "text/javascript", "pdf": "application/pdf",
        "rtf": "application/rtf", "zip": "application/zip", "gz": "application/gzip",
        "tgz": "application/gzip", "tar": "application/x-tar", "bz2": "application/x-bzip2",
        "xz": "application/x-xz", "7z": "application/x-7z-compressed",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "svg": "image/svg+xml", "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "heic": "image/heic", "ico": "image/vnd.microsoft.icon",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg", "wav": "audio/wav", "flac": "audio/flac",
        "mp4": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "epub": "application/epub+zip", "asc": "application/pgp-signature", "key": "application/pgp-keys",
    ]
}

extension MailDate {
    /// RFC 5322 §3.3 `date-time`: `Thu, 01 Jan 2026 09:30:00 +0100`, at `offsetSeconds`
    /// east of UTC.
    public static func format(epochSeconds: Int64, offsetSeconds: Int64) -> String {
        let local = epochSeconds + offsetSeconds
        let days = floorDivide(local, 86_400)
        let secondOfDay = local - days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        // 1970-01-01 was a Thursday.
        let weekday = Int(((days % 7) + 7 + 4) % 7)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let zone = abs(offsetSeconds) / 60
        return "\(weekdays[weekday]), \(pad(day)) \(months[month - 1]) \(year) "
            + "\(pad(Int(secondOfDay / 3600))):\(pad(Int(secondOfDay / 60 % 60))):\(pad(Int(secondOfDay % 60))) "
            + (offsetSeconds < 0 ? "-" : "+") + pad(Int(zone / 60)) + pad(Int(zone % 60))
    }

    /// Days since 1970-01-01 to a proleptic Gregorian (year, month, day) — Howard Hinnant's
    /// `civil_from_days`.
    static func civilDate(daysSinceEpoch days: Int64) -> (Int, Int, Int) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
