/*!
 mboxrd, the one rule for it: what `hd-show --raw` prints for several messages (or with
 --mbox), and what `hd-export --format mbox` writes.
 */
import Glibc

/// mboxrd: messages separated by "From " lines, body lines that start with ">*From "
/// quoted with one more ">" (so the format can be read back exactly).
public enum Mbox {
    public static func entry(_ raw: [UInt8], sender: String, date: Int64) -> [UInt8] {
        // On bytes, not text: an 8-bit body in another charset must come out as it went in.
        var lines: [ArraySlice<UInt8>] = raw.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        while let last = lines.last, last.isEmpty || last == [UInt8(ascii: "\r")] { lines.removeLast() }
        var output = Array("From \(sender.isEmpty ? "MAILER-DAEMON" : sender) \(asctime(date))\n".utf8)
        let from = Array("From ".utf8)
        for var line in lines {
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }  // mbox lines end in LF
            var probe = line[...]
            while probe.first == UInt8(ascii: ">") { probe = probe.dropFirst() }
            if probe.starts(with: from) { output.append(UInt8(ascii: ">")) }
            output += line
            output.append(UInt8(ascii: "\n"))
        }
        output.append(UInt8(ascii: "\n"))
        return output
    }

    /// `Thu Jan  1 00:00:00 1970`, in UTC.
    static func asctime(_ milliseconds: Int64) -> String {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a %b %e %H:%M:%S %Y", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
