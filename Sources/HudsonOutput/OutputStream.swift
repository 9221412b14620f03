/*!
 Buffered writes to a file descriptor. A closed pipe (`hd-search x | head -1`) is
 reported as `OutputClosed`, which the CLI turns into a quiet exit 0, as ripgrep does.
 */
import Glibc

/// The reader went away (EPIPE).
public struct OutputClosed: Error {}

/// Writing failed for another reason (a full disk, a revoked terminal).
public struct OutputFailed: Error, CustomStringConvertible {
    public var description: String
}

public final class OutputStream {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private let capacity: Int
    private var closed = false

    /// The buffer is written out when it holds this much: 4 KiB at first, doubling to
    /// `capacity`. A reader that stops early (`| head -1`) is gone by the second write,
    /// which then ends the command, instead of after 64 KiB of work nobody reads.
    private var threshold: Int

    public init(fd: Int32, capacity: Int = 64 * 1024) {
        self.fd = fd
        self.capacity = capacity
        threshold = min(4096, capacity)
        buffer.reserveCapacity(capacity)
    }

    public func write(_ text: String) throws {
        Bytes.append(text, to: &buffer)
        if buffer.count >= threshold { try flushGrowing() }
    }

    /// Bytes as they are (`hd-show --raw`): mail data the user asked for, not text to scrub.
    public func write(bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= threshold { try flushGrowing() }
    }

    /// One line of text output and its newline, its bytes made safe by its builder.
    public func write(line: [UInt8]) throws {
        buffer.append(contentsOf: line)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= threshold { try flushGrowing() }
    }

    private func flushGrowing() throws {
        try flush()
        threshold = min(capacity, threshold * 2)
    }

    public func flush() throws {
        if closed { throw OutputClosed() }
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                closed = true
                buffer.removeAll()
                if code == EPIPE { throw OutputClosed() }
                throw OutputFailed(description: "cannot write output: \(String(cString: strerror(code)))")
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
