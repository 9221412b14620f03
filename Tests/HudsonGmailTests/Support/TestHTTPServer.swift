/*!
 A tiny scripted HTTP/1.1 server on 127.0.0.1 for the client tests, written on Glibc sockets
 because Foundation has no server API on Linux (swift-linux-notes.md "HTTP"). Each accepted
 connection runs on its own thread and may carry several requests (libcurl keeps connections
 alive). Every request is recorded; the test's handler decides each answer, including the
 broken ones real networks produce: a dropped connection, a body shorter than its
 Content-Length, raw bytes. The real URLSession path is exercised end to end.
 */

import Foundation
import Glibc
import Synchronization

/// A request as the server received it.
struct RecordedRequest: Sendable {
    var method: String
    /// `path?query` as sent.
    var target: String
    /// Header names lowercased.
    var headers: [String: String]
    var body: Data

    var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }

    /// Query pairs in order, percent-decoded (a `+` stays a `+`).
    var queryItems: [(name: String, value: String)] {
        guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// The raw (still percent-encoded) query string.
    var rawQuery: String { String(target.split(separator: "?", maxSplits: 1).dropFirst().first ?? "") }

    func values(_ name: String) -> [String] { queryItems.filter { $0.name == name }.map(\.value) }
}

/// What the server does with one request.
enum ScriptedResponse: Sendable {
    /// A normal response with Content-Length (none for 204).
    case respond(status: Int, headers: [String: String], body: Data)
    /// Close the connection without answering.
    case drop
    /// Send headers promising `declaredLength` bytes, send `body` (shorter), then close.
    case truncated(status: Int, headers: [String: String], body: Data, declaredLength: Int)

    static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> ScriptedResponse {
        var all = headers
        all["Content-Type"] = "application/json; charset=UTF-8"
        return .respond(status: status, headers: all, body: Data(text.utf8))
    }

    static func status(_ status: Int, headers: [String: String] = [:]) -> ScriptedResponse {
        .respond(status: status, headers: headers, body: Data())
    }
}

final class TestHTTPServer: Sendable {
    private struct State {
        var requests: [RecordedRequest] = []
        var connections: Set<Int32> = []
        var stopped = false
    }

    let port: UInt16
    private let listener: Int32
    private let state = Mutex(State())
    private let handler: @Sendable (RecordedRequest) -> ScriptedResponse

    /// A server answering every request with `handler` (called on the connection's thread).
    init(handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        self.handler = handler
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// A server answering requests with `script` in order; past its end it answers 500.
    convenience init(script: [ScriptedResponse]) throws {
        let queue = Locked(script[...])
        try self.init { _ in
            queue.withLock { $0.popFirst() } ?? .json(500, #"{"error":{"code":500,"message":"script exhausted"}}"#)
        }
    }

    deinit { stop() }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Stops accepting and ends every connection. Descriptors are closed only by the
    /// threads that use them: a number closed here could be reused at once by another
    /// test's socket, which the accept loop (still in accept(2)) or a shutdown(2) meant
    /// for a finished connection would then act on.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))  // wakes accept(2); the loop closes it
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(fd)
                return true
            }
            guard accepted else {
                close(fd)
                return
            }
            Thread.detachNewThread { [self] in
                serve(fd)
                state.withLock { state in
                    state.connections.remove(fd)
                    close(fd)  // under the lock, so stop() never shuts down a reused number
                }
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer = [UInt8]()
        while let request = readRequest(fd, buffer: &buffer) {
            state.withLock { $0.requests.append(request) }
            switch handler(request) {
            case .respond(let status, let headers, let body):
                write(fd, head(status: status, headers: headers, length: status == 204 ? nil : body.count) + [UInt8](body))
            case .drop:
                return
            case .truncated(let status, let headers, let body, let declared):
                write(fd, head(status: status, headers: headers, length: declared) + [UInt8](body))
                return
            }
            if request.headers["connection"]?.lowercased() == "close" { return }
        }
    }

    private func head(status: Int, headers: [String: String], length: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(status) Scripted\r\n"
        if let length { text += "Content-Length: \(length)\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads one request (head and Content-Length body); nil when the peer closed.
    private func readRequest(_ fd: Int32, buffer: inout [UInt8]) -> RecordedRequest? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.indices.dropLast(3).first { buffer[$0..<$0 + 4].elementsEqual(separator) }
            if headEnd == nil, !receive(fd, into: &buffer) { return nil }
        }
        let lines = String(decoding: buffer[..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(headEnd! + 4)
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" {
            write(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length {
            if !receive(fd, into: &buffer) { return nil }
        }
        let body = Data(buffer[..<length])
        buffer.removeFirst(length)
        return RecordedRequest(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: body)
    }

    private func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }
}
