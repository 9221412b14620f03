#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The names in a directory stream, read in place.
///
/// A `dirent` that `readdir(3)` returns is only `d_reclen` bytes long, not
/// `MemoryLayout<dirent>.size`: glibc packs the records into one buffer. Reading
/// `entry.pointee.d_name` copies the whole 256-byte array, past the record's end, and at
/// the end of that buffer past the end of the mapped memory (a SIGSEGV in `hd-export`,
/// reading a Maildir of 2,000 files). So the name is read where it lies, up to its NUL.
/// Every directory listing of Hudson goes through here.
public enum DirectoryListing {
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// Calls `body` with each name of `stream` (no `.` or `..`), as bytes valid only during
    /// the call; the stream is read to its end, not closed.
    public static func forEachName(
        in stream: OpaquePointer, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        while let entry = readdir(stream) {
            let name = name(of: entry)
            if isDotOrDotDot(name) { continue }
            try body(name)
        }
    }

    /// The name of one record, its bytes up to the NUL, read where they lie: nothing past
    /// the NUL is read, so a record at the very end of readable memory is read safely.
    public static func name(of entry: UnsafePointer<dirent>) -> UnsafeBufferPointer<UInt8> {
        let start = UnsafeRawPointer(entry) + nameOffset
        let length = strlen(start.assumingMemoryBound(to: CChar.self))
        return UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: length)
    }

    /// The names of `stream` (no `.` or `..`), decoded as UTF-8 (an invalid byte becomes U+FFFD).
    public static func names(in stream: OpaquePointer) -> [String] {
        var names: [String] = []
        forEachName(in: stream) { names.append(String(decoding: $0, as: UTF8.self)) }
        return names
    }

    private static func isDotOrDotDot(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        return (name.count == 1 && name[0] == dot) || (name.count == 2 && name[0] == dot && name[1] == dot)
    }
}
