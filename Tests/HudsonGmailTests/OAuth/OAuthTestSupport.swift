/*!
 Test doubles for the OAuth tests, with no real network: a scripted HTTP/1.1 server on 127.0.0.1 (Glibc
 sockets, one thread) that plays Google's token endpoint or consent page, a raw socket client for
 misbehaving-browser cases, a temporary directory, and a URLSession GET helper that plays the browser.
 Everything is prefixed `OAuthTest` so it cannot collide with the rest of HudsonGmailTests.
 */
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import Synchronization

/// One request as the scripted server saw it.
struct OAuthTestRequest: Sendable {
    var method: String
    var target: String
    var headers: [String: String]
    var body: String

    var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
    var query: [String: String] { Self.form(target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? "") }
    var form: [String: String] { Self.form(body) }

    static func form(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            let value = parts.count > 1 ? (String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
            result[key] = value
        }
        return result
    }
}

/// A scripted answer.
struct OAuthTestResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body: String = ""

    static func json(_ status: Int, _ object: [String: Any]) -> OAuthTestResponse {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return OAuthTestResponse(status: status, headers: [("Content-Type", "application/json")],
                                 body: String(decoding: data, as: UTF8.self))
    }

    static func redirect(to location: String) -> OAuthTestResponse {
        OAuthTestResponse(status: 302, headers: [("Location", location)])
    }
}

/// An HTTP server on 127.0.0.1 that answers every request with `handler` and records it. Its thread runs
/// until `stop()`, which every test calls (usually in a `defer`).
final class OAuthTestHTTPServer: Sendable {
    let port: UInt16
    private let fd: Int32
    private let state = Mutex<(stopped: Bool, requests: [OAuthTestRequest])>((false, []))
    private let done = Mutex<Bool>(false)

    var baseURL: String { "http://127.0.0.1:\(port)" }
    func url(_ path: String) -> URL { URL(string: baseURL + path)! }
    var requests: [OAuthTestRequest] { state.withLock { $0.requests } }

    init(handler: @escaping @Sendable (OAuthTestRequest) -> OAuthTestResponse) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = self.fd
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Int32 in
                guard bind(fd, generic, length) == 0, listen(fd, 16) == 0 else { return -1 }
                return getsockname(fd, generic, &length)
            }
        }
        guard result == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            while !state.withLock({ $0.stopped }) {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { continue }
                serve(connection, handler: handler)
                close(connection)
            }
            close(fd)
            done.withLock { $0 = true }
        }
        thread.start()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        while !done.withLock({ $0 }) { usleep(5_000) }
    }

    private func serve(_ connection: Int32, handler: @Sendable (OAuthTestRequest) -> OAuthTestResponse) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> Bool {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard receive() else { return }
            headEnd = buffer.indices.dropLast(3).first { Array(buffer[$0..<$0 + 4]) == separator }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" {
            _ = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count - (headEnd! + 4) < length { guard receive() else { return } }
        let body = String(decoding: buffer[(headEnd! + 4)..<(headEnd! + 4 + length)], as: UTF8.self)
        let request = OAuthTestRequest(method: String(requestLine[0]), target: String(requestLine[1]),
                                       headers: headers, body: body)
        state.withLock { $0.requests.append(request) }
        let response = handler(request)
        var text = "HTTP/1.1 \(response.status) Scripted\r\nContent-Length: \(response.body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n" + response.body
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(connection, Int32(SHUT_WR))
    }
}

/// A raw TCP connection to 127.0.0.1, for clients a browser would never be (slow, silent, early close).
/// Sendable so a test can connect it and hand it to the browser's thread; one thread uses it at a time.
final class OAuthTestRawClient: @unchecked Sendable {
    let fd: Int32

    /// nil when the connection is refused.
    init?(port: UInt16) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result != 0 {
            close(fd)
            return nil
        }
    }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything until the peer closes. The 60 s bound only catches a listener that never answers: a
    /// busy machine may take seconds to run the listener's thread, and a cut-off read would look like a
    /// close.
    func readAll() -> String {
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: result, as: UTF8.self)
    }

    deinit { close(fd) }
}

/// A directory removed when the value is released.
final class OAuthTestDirectory: Sendable {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-oauth-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A page as the browser saw it.
typealias OAuthTestPage = (status: Int, headers: [String: String], body: String)

/// The browser's part: GET `url`, following redirects, and return the final status, headers and page.
/// The request runs on its own thread (`oauthTestBrowserGETBlocking`), so it is sent at once and its
/// answer read at once, however busy the cooperative pool is.
func oauthTestBrowserGET(_ url: URL) async throws -> OAuthTestPage {
    try await oauthTestOffPool { try oauthTestBrowserGETBlocking(url) }.get()
}

/// The browser's part for a thread that may block (`oauthTestOffPool`): one GET, following redirects.
func oauthTestBrowserGETBlocking(_ url: URL) throws -> OAuthTestPage {
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let outcome = OAuthTestLocked<Result<OAuthTestPage, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    // URLSession's own request timeout (60 s without a byte) ends the task, so this wait ends too.
    session.dataTask(with: url) { data, response, error in
        outcome.update { value in
            if let http = response as? HTTPURLResponse, let data {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields { headers[String(describing: key).lowercased()] = String(describing: value) }
                value = .success((http.statusCode, headers, String(decoding: data, as: UTF8.self)))
            } else {
                value = .failure(error ?? URLError(.badServerResponse))
            }
        }
        done.signal()
    }.resume()
    done.wait()
    return try outcome.value!.get()
}

/// Runs `body` on a thread of its own and returns its outcome. For the parts of a test that play a
/// browser or another client: they block (sockets, URLSession), and on the cooperative pool they would
/// both hold one of its few threads and run only when the pool got round to them, which, with the
/// other suites running in parallel on a two-core machine, can be a minute later. The listener under
/// test has its own thread too, so their whole exchange is timed by the machine, not by the pool.
func oauthTestOffPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
        let thread = Thread { continuation.resume(returning: Result { try body() }) }
        thread.name = "hudson-oauth-test-client"
        thread.start()
    }
}

/// Polls `condition` every 10 ms until it holds; false after `limit` (generous: only a hang takes it).
func oauthTestEventually(limit: Duration = .seconds(300), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Runs `body` under the file-creation mask `mask`, on a thread of its own that has its own umask.
///
/// The umask belongs to the whole process, and `swift test` runs other suites in this process at the
/// same time: whatever they create (files, and the processes they start, which inherit it) would be
/// created under `mask` too, and two tests restoring it out of order would leave it changed for the
/// rest of the run. unshare(CLONE_FS) gives the calling thread its own copy of the umask (and working
/// directory); the thread ends with the body. Where unshare is refused (a container's seccomp filter)
/// the process's umask is changed instead, as before, for as long as the body runs.
func oauthTestWithUmask<T: Sendable>(_ mask: mode_t, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await oauthTestOffPool {
        _ = oauthTestUnshareFS?(0x0000_0200)  // CLONE_FS: not visible to Swift without _GNU_SOURCE
        let old = umask(mask)
        defer { umask(old) }
        return try body()
    }.get()
}

/// unshare(2), looked up at run time: Glibc declares it only under _GNU_SOURCE.
private let oauthTestUnshareFS: (@convention(c) (Int32) -> Int32)? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "unshare") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
}()

/// `mode & 0o7777` of a path (not following symlinks).
func oauthTestMode(_ path: String) -> mode_t {
    var info = stat()
    precondition(lstat(path, &info) == 0, "lstat \(path)")
    return info.st_mode & 0o7777
}

/// A lock-protected value that escaping closures can capture (a `Mutex` itself cannot be captured).
final class OAuthTestLocked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value { mutex.withLock { $0 } }

    func update<R: Sendable>(_ body: @Sendable (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// The outcome of an async throwing call as a value (Result has no async initialiser).
func oauthTestResult<T: Sendable>(_ body: () async throws -> T) async -> Result<T, Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
