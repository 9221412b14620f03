/*!
 The one request `hd-unsubscribe` makes of a sender (RFC 8058 §3.1, §3.2): a POST of
 exactly `List-Unsubscribe=One-Click` as `application/x-www-form-urlencoded` to the
 `List-Unsubscribe` https URI, and nothing that says who the user is: an ephemeral session
 with no cookie store, no credential store, no cache, no Referer or Authorization. Its
 bounds (docs: hd-unsubscribe(1)):

 - no redirect is followed (one to another host could carry the POST anywhere; one to the
   same host is not needed by RFC 8058, which asks the POST itself to unsubscribe): a 3xx
   is an answer, and the unsubscribe's outcome is unknown;
 - the whole exchange is bounded in time (`timeout`), and the answer's body is never read
   past `maximumBodyBytes` (only its status matters);
 - the request goes out on a connection of its own, closed after the answer: libcurl, under
   URLSession, resends a request by itself when a reused connection dies before an answer
   (HTTPTransport.swift), which would be a second POST;
 - a host name that resolves to an address of the user's own machine or network
   (loopback, private, link-local, shared, multicast, unspecified) is not requested: a
   sender's URI must not make the user's machine post inside its network. (The name is
   resolved again by the request itself; a name whose answer changes in between is the
   remaining gap.)
 */
import Glibc
import Foundation
import HudsonStore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What came of the POST.
enum OneClickAnswer: Equatable {
    /// An HTTP status (any: the caller decides what a 3xx, 4xx or 5xx means).
    case status(Int)
    /// No answer: a timeout, a dropped connection, a failed name lookup. The POST may have
    /// reached the sender.
    case noAnswer(String)
    /// Not sent: nothing left this machine (not a URL, a name that does not resolve, or
    /// one that resolves inside the user's network).
    case notSent(String)
}

enum OneClickPost {
    static let body = "List-Unsubscribe=One-Click"
    static let maximumBodyBytes = 64 * 1024

    /// Why `host` must not be requested, or nil: it does not resolve, or one of its
    /// addresses is this machine's or a private network's (the rule, and its tests:
    /// HudsonStore's UnsubscribeOffer.privateAddressRefusal).
    static func privateAddressRefusal(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "443", &hints, &list) == 0, let first = list else { return "the name does not resolve" }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                if current.pointee.ai_family == AF_INET {
                    addresses.append(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        withUnsafeBytes(of: $0.pointee.sin_addr.s_addr) { Array($0) }
                    })
                } else if current.pointee.ai_family == AF_INET6 {
                    addresses.append(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
                    })
                }
            }
            entry = current.pointee.ai_next
        }
        return UnsubscribeOffer.privateAddressRefusal(addresses)
    }

    /// Posts once; never throws, never retries. `allowLoopback`: the tests' seam (their
    /// endpoint is on 127.0.0.1).
    static func post(to uri: String, timeout: Duration, allowLoopback: Bool = false) async -> OneClickAnswer {
        guard let url = URL(string: uri), let host = url.host else { return .notSent("not a URL") }
        if !allowLoopback, let refusal = privateAddressRefusal(host) { return .notSent(refusal) }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout.inSeconds)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.httpShouldHandleCookies = false
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("close", forHTTPHeaderField: "Connection")
        request.setValue("Hudson hd-unsubscribe (RFC 8058)", forHTTPHeaderField: "User-Agent")

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeout.inSeconds
        configuration.timeoutIntervalForResource = timeout.inSeconds
        let observer = StatusObserver()
        let session = URLSession(configuration: configuration, delegate: observer, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: request)
        observer.attach(task)
        task.resume()
        // The session's own timeouts, and this deadline too: a server that drips bytes
        // forever is cut off at `timeout` whatever libcurl counts as progress.
        return await withTaskGroup(of: OneClickAnswer?.self) { group in
            group.addTask { await observer.answer() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            task.cancel()
            if let first { return first }
            return observer.statusSoFar().map { .status($0) } ?? .noAnswer("no answer within \(Int(timeout.inSeconds)) s")
        }
    }
}

/// Takes the status from the response head, refuses redirects, stops reading a body past
/// the bound, and answers once.
private final class StatusObserver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var status: Int?
    private var received = 0
    private var result: OneClickAnswer?
    private var waiters: [CheckedContinuation<OneClickAnswer?, Never>] = []
    private weak var task: URLSessionTask?

    func attach(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        lock.unlock()
    }

    func statusSoFar() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    func answer() async -> OneClickAnswer? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let result {
                lock.unlock()
                continuation.resume(returning: result)
                return
            }
            waiters.append(continuation)
            lock.unlock()
        }
    }

    private func finish(_ answer: OneClickAnswer) {
        lock.lock()
        guard result == nil else { lock.unlock(); return }
        result = answer
        let pending = waiters
        waiters = []
        lock.unlock()
        for waiter in pending { waiter.resume(returning: answer) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)  // the 3xx itself is the answer
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let code = (response as? HTTPURLResponse)?.statusCode
        lock.lock()
        status = code
        lock.unlock()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        received += data.count
        let over = received > OneClickPost.maximumBodyBytes
        let code = status
        lock.unlock()
        if over, let code {
            finish(.status(code))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let code = statusSoFar() ?? (task.response as? HTTPURLResponse)?.statusCode
        if let code {
            finish(.status(code))
        } else {
            finish(.noAnswer(error.map { ($0 as? URLError).map { "\($0.code)" } ?? String(describing: $0) } ?? "no answer"))
        }
    }
}

extension Duration {
    fileprivate var inSeconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
