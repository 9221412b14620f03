#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the stdio transport's messages: one JSON-RPC message per line (MCP, "stdio").
/// A line past `maximumLineBytes` is not kept: its bytes are skipped up to its newline and
/// it is reported as oversized, so one huge or endless line costs bounded memory and the
/// messages after it are still read.
final class MCPLineReader {
    enum Item: Equatable {
        case line([UInt8])
        case oversized
    }

    private let fd: Int32
    private let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// Skipping the rest of an oversized line.
    private var discarding = false

    init(fd: Int32, maximumLineBytes: Int) {
        self.fd = fd
        self.maximumLineBytes = maximumLineBytes
    }

    /// The next line (without its LF, or CR LF), or nil at end of input.
    func next() -> Item? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if discarding {
                    discarding = false
                    return .oversized
                }
                return .line(line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line)
            }
            if discarding || buffer.count - start > maximumLineBytes {
                // No newline yet in a line already too long: drop what is buffered.
                discarding = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
                if atEnd {
                    discarding = false
                    return .oversized
                }
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return .line(line)
            }
            if start > 0 {
                buffer.removeFirst(start)
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
