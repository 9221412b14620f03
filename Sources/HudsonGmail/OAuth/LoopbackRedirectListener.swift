/*!
 The loopback listener that receives Google's redirect after consent (gmail-api.md §7 step 3: "an HTTP
 listener on 127.0.0.1 on any free port"). Foundation on Linux has no server API (swift-linux-notes.md),
 so this is Glibc sockets: bind 127.0.0.1 port 0, read the port back with getsockname, accept until one
 request for the redirect path settles the outcome. Blocking socket work runs on a dedicated Thread, off
 Swift's cooperative pool, from the moment the wait starts, and its outcome is handed to whichever task
 awaits it, whenever that task runs: on a busy pool the browser is still answered, and the deadline still
 kept, on time (`OAuthLogin` starts the wait before it shows the URL). One poll() covers the listening
 socket, every open connection and a wake-up pipe, so cancelling the awaiting task or reaching the overall
 deadline ends the wait promptly, and connections are served side by side; each has its own short
 deadline and a bounded head size, so an idle browser preconnect or a hostile local client cannot hold
 the listener. Every socket is closed on every path.
 */
import Foundation
import Glibc
import Synchronization

/// A one-shot HTTP listener on `127.0.0.1:<random port>` that waits for the OAuth redirect.
public final class LoopbackRedirectListener: Sendable {
    /// The port the kernel chose.
    public let port: UInt16
    /// `http://127.0.0.1:PORT` (plus the path, when one was given): the `redirect_uri` to send.
    public let redirectURI: String
    private let path: String
    private let connectionTimeout: Duration
    private let descriptors: Mutex<Descriptors>

    private struct Descriptors: ~Copyable {
        var listener: Int32
        var wakeRead: Int32
        var wakeWrite: Int32
        var started = false
        var closed = false
    }

    /// Binds 127.0.0.1 on a free port and starts listening.
    /// - Parameters:
    ///   - path: the redirect path; `/` gives the bare `http://127.0.0.1:PORT` of gmail-api.md §7 step 3.
    ///   - connectionTimeout: how long one connection may take to send its request head.
    public init(path: String = "/", connectionTimeout: Duration = .seconds(10)) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackRedirectError.socket(operation: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Int32 in
                guard Glibc.bind(fd, generic, length) == 0, Glibc.listen(fd, 16) == 0 else { return -1 }
                return getsockname(fd, generic, &length)
            }
        }
        // pipe2/accept4 are not visible to Swift (they need _GNU_SOURCE), so the flags are set with fcntl.
        var pipeEnds: [Int32] = [-1, -1]
        guard bound == 0, loopbackSetFlags(fd, nonBlocking: true), pipe(&pipeEnds) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw LoopbackRedirectError.socket(operation: "bind 127.0.0.1", errno: code)
        }
        guard loopbackSetFlags(pipeEnds[0], nonBlocking: true), loopbackSetFlags(pipeEnds[1], nonBlocking: true) else {
            let code = errno
            pipeEnds.forEach { Glibc.close($0) }
            Glibc.close(fd)
            throw LoopbackRedirectError.socket(operation: "fcntl", errno: code)
        }
        port = UInt16(bigEndian: address.sin_port)
        self.path = path.hasPrefix("/") ? path : "/" + path
        redirectURI = "http://127.0.0.1:\(port)" + (self.path == "/" ? "" : self.path)
        self.connectionTimeout = connectionTimeout
        descriptors = Mutex(Descriptors(listener: fd, wakeRead: pipeEnds[0], wakeWrite: pipeEnds[1]))
    }

    deinit { closeAll() }

    /// Waits for the browser's redirect and returns the authorisation code.
    ///
    /// Requests for other paths (`/favicon.ico`) get a 404 and the wait goes on. A redirect with another
    /// `state` fails with `.stateMismatch`, `error=access_denied` with `.accessDenied`; the browser is shown
    /// a page saying what happened either way. The listener is closed when this returns or throws.
    public func waitForRedirect(expectedState: String, timeout: Duration) async throws -> String {
        try await start(expectedState: expectedState, timeout: timeout).code
    }

    /// Starts serving now, on the listener's own thread, and returns the wait to await: what
    /// `waitForRedirect` does, split so a caller can start serving before it shows the consent URL and
    /// await the outcome afterwards. The listener then answers the browser, and its deadline runs, from
    /// this call on, however late the awaiting task runs again (a busy cooperative pool).
    func start(expectedState: String, timeout: Duration) throws -> LoopbackRedirectWait {
        let fds: (Int32, Int32)? = descriptors.withLock { state in
            guard !state.started, !state.closed else { return nil }
            state.started = true
            return (state.listener, state.wakeRead)
        }
        guard let fds else { throw LoopbackRedirectError.alreadyUsed }
        let (listener, wake) = fds
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let wait = LoopbackRedirectWait(wakeListener: { [self] in wakeUp() })
        let worker = Thread { [self] in
            let result = Result {
                try serve(listener: listener, wake: wake, expectedState: expectedState,
                          deadline: deadline, timeout: timeout)
            }
            closeAll()
            wait.settle(result)
        }
        worker.name = "hudson-oauth-loopback"
        worker.start()
        return wait
    }

    /// One accepted connection whose request head is still arriving; `fd` is -1 once it is closed.
    private struct Pending {
        var fd: Int32
        let deadline: ContinuousClock.Instant
        var head: [UInt8] = []
    }

    /// The accept loop; runs on the worker thread. Connections are served side by side, because browsers
    /// open speculative connections that never send a request: a sequential loop would sit on such an idle
    /// socket while the real redirect waits behind it.
    private func serve(listener: Int32, wake: Int32, expectedState: String,
                       deadline: ContinuousClock.Instant, timeout: Duration) throws -> String {
        let maximumConnections = 16
        var pending: [Pending] = []
        defer { for client in pending where client.fd >= 0 { finish(client.fd, with: nil) } }
        while true {
            // A client that has not sent its head in time is dropped, and the wait goes on; but only after
            // one more look at what it has sent, so a thread that ran late (a busy machine) never drops a
            // request that did arrive in time, nor times out with the redirect waiting unread.
            let now = ContinuousClock.now
            let expired = pending.indices.filter { pending[$0].deadline <= now }
            let overdue = deadline <= now
            let wakeAt = overdue || !expired.isEmpty ? now : pending.map(\.deadline).reduce(deadline, min)
            var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: pending.count < maximumConnections ? listener : -1, events: Int16(POLLIN), revents: 0)]
            fds += pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), loopbackMilliseconds(until: wakeAt)) < 0 {
                if errno == EINTR { continue }
                throw LoopbackRedirectError.socket(operation: "poll", errno: errno)
            }
            if fds[0].revents != 0 { throw CancellationError() }

            for index in pending.indices where fds[index + 2].revents != 0 {
                guard let response = receive(&pending[index], expectedState: expectedState) else { continue }
                finish(pending[index].fd, with: response.bytes)
                pending[index].fd = -1
                switch response.outcome {
                case .code(let code): return code
                case .failure(let error): throw error
                case .ignore, nil: break
                }
            }
            for index in expired where pending[index].fd >= 0 {
                finish(pending[index].fd, with: nil)
                pending[index].fd = -1
            }
            pending.removeAll { $0.fd < 0 }
            if overdue { throw LoopbackRedirectError.timedOut(seconds: Int(timeout.components.seconds)) }

            if fds[1].revents != 0 {
                let connection = accept(listener, nil, nil)
                if connection >= 0 {
                    _ = loopbackSetFlags(connection, nonBlocking: true)
                    pending.append(Pending(fd: connection, deadline: min(ContinuousClock.now.advanced(by: connectionTimeout), deadline)))
                } else if ![EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO].contains(errno) {
                    throw LoopbackRedirectError.socket(operation: "accept", errno: errno)
                }
            }
        }
    }

    /// Reads what a readable client sent. Returns nil while its head is incomplete, else the bytes to
    /// answer with (nil bytes: just close) and, for a request on the redirect path, what it meant.
    private func receive(_ client: inout Pending, expectedState: String)
        -> (bytes: [UInt8]?, outcome: LoopbackRedirectHTTP.Outcome?)? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0, [EAGAIN, EWOULDBLOCK, EINTR].contains(errno) { return nil }
        guard count > 0 else { return (nil, nil) }  // the client hung up or failed
        client.head += chunk[0..<count]
        guard client.head.count <= 16 * 1024 else { return (LoopbackRedirectHTTP.badRequest, nil) }
        guard LoopbackRedirectHTTP.hasCompleteHead(client.head) else { return nil }
        switch LoopbackRedirectHTTP.parse(head: client.head, expectedPath: path) {
        case .other:
            return (LoopbackRedirectHTTP.notFound, nil)
        case .malformed:
            return (LoopbackRedirectHTTP.badRequest, nil)
        case .redirect(let query):
            let outcome = LoopbackRedirectHTTP.evaluate(query, expectedState: expectedState)
            return (LoopbackRedirectHTTP.response(for: outcome), outcome)
        }
    }

    /// Sends `response` (if any) and closes the connection.
    private func finish(_ connection: Int32, with response: [UInt8]?) {
        if let response { sendAll(connection, response) }
        shutdown(connection, Int32(SHUT_RDWR))
        Glibc.close(connection)
    }

    /// Writes all of `bytes`, best effort: a browser that went away must not fail the login.
    private func sendAll(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                // The socket is non-blocking; give a slow reader a moment, then give up on it.
                var writable = pollfd(fd: connection, events: Int16(POLLOUT), revents: 0)
                if poll(&writable, 1, 2_000) > 0 { continue }
                return
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Makes a pending poll() return; harmless after close, because the descriptors are checked under the lock.
    private func wakeUp() {
        descriptors.withLock { state in
            guard !state.closed else { return }
            var byte: UInt8 = 1
            _ = write(state.wakeWrite, &byte, 1)
        }
    }

    private func closeAll() {
        descriptors.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            Glibc.close(state.listener)
            Glibc.close(state.wakeRead)
            Glibc.close(state.wakeWrite)
        }
    }
}

/// A started wait for the redirect (`LoopbackRedirectListener.start`). The listener's thread settles it
/// once, whether or not a task awaits it yet; `code` then returns at once.
final class LoopbackRedirectWait: Sendable {
    private struct State {
        var outcome: Result<String, any Error>?
        var waiters: [CheckedContinuation<String, any Error>] = []
        var settledAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let wakeListener: @Sendable () -> Void

    fileprivate init(wakeListener: @escaping @Sendable () -> Void) {
        self.wakeListener = wakeListener
    }

    /// The authorisation code, or the error that ended the wait. Cancelling the awaiting task ends the
    /// wait itself (with `CancellationError`), as it would end `waitForRedirect`.
    var code: String {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                    let outcome: Result<String, any Error>? = state.withLock { state in
                        if let outcome = state.outcome { return outcome }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// Ends the wait with `CancellationError`, promptly, unless it has already settled.
    func cancel() {
        wakeListener()
    }

    /// When the listener's thread settled the outcome, its sockets already closed; nil while it serves.
    /// Tests time the listener by this, not by when their awaiting task happened to run again.
    var settledAt: ContinuousClock.Instant? { state.withLock { $0.settledAt } }

    /// Whether a task is suspended in `code`.
    var isAwaited: Bool { state.withLock { !$0.waiters.isEmpty } }

    fileprivate func settle(_ outcome: Result<String, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<String, any Error>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            state.settledAt = .now
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}

/// Sets FD_CLOEXEC (so a child process never inherits the socket) and, when asked, O_NONBLOCK.
private func loopbackSetFlags(_ fd: Int32, nonBlocking: Bool) -> Bool {
    guard fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC) == 0 else { return false }
    guard nonBlocking else { return true }
    return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0
}

/// Milliseconds from now until `deadline` for poll(), rounded up so a wake-up is never early; 0 if past.
private func loopbackMilliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
    let remaining = ContinuousClock.now.duration(to: deadline)
    guard remaining > .zero else { return 0 }
    let (seconds, attoseconds) = remaining.components
    return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
}
