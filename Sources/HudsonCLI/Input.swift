/*!
 References come the mblaze way (`blaze822_loop`): from operands, or — with none, or
 with `-` — one per line from standard input, where each line's first field (up to the
 first TAB or space) is the reference, or an NDJSON object's `id` (CONTRACT.md "Ids and
 input"). So the output of every command can be piped into every other.
 */
import Glibc
import HudsonOutput

/// Reads standard input line by line without Foundation.
public final class LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// Where the search for the next line end resumes: bytes before it hold none, so a
    /// long line is scanned once, not once per chunk read.
    private var scanned = 0

    /// The longest line read: past it the line is an error, not a growing buffer (a
    /// reference is short; an `hd-show --json` line holds a whole message, so the bound
    /// is generous).
    public let maximumLineBytes: Int

    public init(fd: Int32 = 0, maximumLineBytes: Int = 64 << 20) {
        self.fd = fd
        self.maximumLineBytes = maximumLineBytes
    }

    /// The next line without its terminator, or nil at end of input.
    public func next() throws -> String? {
        while true {
            if let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self)
                start = newline + 1
                scanned = start
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = String(decoding: buffer[start...], as: UTF8.self)
                start = buffer.count
                return line
            }
            scanned = buffer.count
            // No line end in what is buffered: a line past the bound is refused here.
            if buffer.count - start > maximumLineBytes {
                throw CommandFailure(.dataError, "standard input: a line longer than \(maximumLineBytes >> 20) MiB")
            }
            if start > 0 {
                buffer.removeFirst(start)
                scanned -= start
                start = 0
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
            } else {
                buffer.append(contentsOf: chunk[0..<count])
            }
        }
    }
}

public enum Input {
    /// The reference text of one input line: an NDJSON object's `id`, else the first
    /// field. Nil for a blank line. A line that starts like JSON but is not is an error.
    public static func referenceText(line: String) throws -> String? {
        // Scanned as bytes (spaces and tabs are ASCII): a Character scan of each line was
        // a few percent of piping a thousand references into hd-mark.
        let bytes = line.utf8
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !isBlank($0) }) else { return nil }
        if bytes[start] == UInt8(ascii: "{") {
            let value = try JSONValue.parse(String(line[start...]))
            guard let id = value["id"]?.stringValue, !id.isEmpty else {
                throw JSONParseError(offset: 0, message: "object has no \"id\" string")
            }
            return id
        }
        let end = bytes[start...].firstIndex(where: isBlank) ?? bytes.endIndex
        return String(line[start..<end])
    }

    /// True when standard input is a terminal (reading it would wait for the user).
    public static var stdinIsTerminal: Bool { isatty(0) == 1 }
}
