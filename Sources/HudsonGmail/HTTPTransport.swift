/*!
 One HTTP exchange over URLSession (FoundationNetworking's libcurl backend on Linux): send a
 request, return status, headers and the whole body, or throw the transport error. Nothing
 here retries, classifies or decodes; that is the client's job. Redirects are refused, so a
 3xx never carries the `Authorization` header to another host; the task is cancelled with
 its Swift task; the session is ephemeral (no cookies, no cache on disk).
 */

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Response headers with case-insensitive lookup (RFC 9110 §5.1).
struct HTTPHeaders: Sendable, Equatable {
    private var storage: [String: String] = [:]

    init(_ pairs: [(String, String)] = []) {
        for (name, value) in pairs { storage[name.lowercased()] = value }
    }

    subscript(name: String) -> String? {
        get { storage[name.lowercased()] }
        set { storage[name.lowercased()] = newValue }
    }
}

/// A complete HTTP response.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
}

/// Performs single exchanges; safe to share between tasks.
final class URLSessionTransport: Sendable {
    private let configuration: URLSessionConfiguration
    private let session: URLSession

    init(timeout: Duration) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout.inSeconds
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.configuration = configuration
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; throws `CancellationError` when the task is cancelled, otherwise the
    /// transport's error (usually `URLError`).
    ///
    /// `freshConnection` is for a request that must reach the server at most once (a send,
    /// an import): libcurl, under URLSession, resends a request on its own when a connection
    /// it had used before dies before any answer — after the server may have acted on it
    /// (seen with a dropped connection: a second POST the client never made). It does so
    /// only for a reused connection, so such a request goes out on a connection of its own:
    /// a session of its own (each has its own connection cache), closed after the answer.
    func send(_ request: URLRequest, freshConnection: Bool = false) async throws -> HTTPResponse {
        guard freshConnection else { return try await send(request, on: session) }
        let own = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
        defer { own.finishTasksAndInvalidate() }
        var closing = request
        closing.setValue("close", forHTTPHeaderField: "Connection")
        return try await send(closing, on: own)
    }

    private func send(_ request: URLRequest, on session: URLSession) async throws -> HTTPResponse {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        let cancelled = (error as? URLError)?.code == .cancelled
                        continuation.resume(throwing: cancelled ? CancellationError() : error)
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                        return
                    }
                    let headers = HTTPHeaders(http.allHeaderFields.compactMap { key, value in
                        guard let name = key as? String, let text = value as? String else { return nil }
                        return (name, text)
                    })
                    continuation.resume(returning: HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
                }
                box.start(task)
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Holds the data task so the cancellation handler can reach it, whichever runs first.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelNow = cancelled
        lock.unlock()
        // Resumed even when already cancelled: a task cancelled before it ever ran may never
        // call its completion handler on every Foundation, leaving the continuation hanging.
        task.resume()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let current = task
        lock.unlock()
        current?.cancel()
    }
}

/// Refuses every redirect: the 3xx itself is returned to the client, which reports it.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
