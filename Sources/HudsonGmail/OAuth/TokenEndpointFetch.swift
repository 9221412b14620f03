/*!
 One POST to the token endpoint with two bounds that `URLSession.data(for:)` does not give: the
 answer is read only up to a byte limit (a declared Content-Length over it is refused before the
 body, a longer body is cut off where it crosses the limit), and the whole exchange has a deadline,
 not only an idle timeout, so a server that trickles bytes cannot hold a command either. A token
 answer is a few hundred bytes; anything near the limit is a broken or hostile endpoint, and it is
 refused before a byte of it reaches the credentials file.
 */
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a bounded fetch ended without a whole answer.
enum TokenEndpointFetchLimit: Error {
    /// The answer was longer than the limit (declared or read).
    case tooLarge(limit: Int)
    /// The deadline passed before the answer was complete.
    case deadline
}

/// Where deadlines fire: a queue of its own, so a global pool kept busy by other work cannot
/// postpone one.
private let deadlines = DispatchQueue(label: "hudson.token-endpoint.deadlines")

/// A single bounded exchange; create one per request.
final class TokenEndpointFetch: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let limit: Int
    private let lock = NSLock()
    private var body = Data()
    private var response: URLResponse?
    private var stopped: TokenEndpointFetchLimit?
    private var continuation: CheckedContinuation<(Data, URLResponse), Error>?
    private var task: URLSessionDataTask?
    private var finished = false
    private var cancelled = false

    private init(limit: Int) {
        self.limit = limit
    }

    /// Sends `request` with `configuration`'s settings; returns the body and response, or throws
    /// `TokenEndpointFetchLimit`, `CancellationError` or the transport's error.
    static func send(_ request: URLRequest, configuration: URLSessionConfiguration, limit: Int,
                     deadline: TimeInterval) async throws -> (Data, URLResponse) {
        let fetch = TokenEndpointFetch(limit: limit)
        let session = URLSession(configuration: configuration, delegate: fetch, delegateQueue: nil)
        // The session keeps its delegate until it is invalidated.
        defer { session.finishTasksAndInvalidate() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request)
                let alreadyCancelled = fetch.lock.withLock {
                    fetch.continuation = continuation
                    fetch.task = task
                    return fetch.cancelled
                }
                // The cancellation handler ran before there was anything to cancel.
                if alreadyCancelled {
                    fetch.finish(.failure(CancellationError()))
                    return
                }
                task.resume()
                deadlines.asyncAfter(deadline: .now() + deadline) { fetch.stop(.deadline) }
            }
        } onCancel: {
            fetch.cancel()
        }
    }

    /// Resumes the caller once, with the first outcome; later ones are dropped.
    private func finish(_ result: Result<(Data, URLResponse), Error>) {
        let waiting: CheckedContinuation<(Data, URLResponse), Error>? = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }

    /// Ends the exchange now for `reason`. The caller is answered at once rather than when the
    /// cancelled task reports back: a task cancelled before it really started (a busy machine)
    /// may not report back until the server is done.
    private func stop(_ reason: TokenEndpointFetchLimit) {
        let task: URLSessionDataTask? = lock.withLock {
            guard !finished, stopped == nil else { return nil }
            stopped = reason
            body = Data()
            return self.task
        }
        guard let task else { return }
        finish(.failure(reason))
        task.cancel()
    }

    /// Cancellation of the calling Swift task: answer it now, and cancel the transfer.
    private func cancel() {
        let task: URLSessionDataTask? = lock.withLock {
            cancelled = true
            return self.task
        }
        finish(.failure(CancellationError()))
        task?.cancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if response.expectedContentLength > Int64(limit) {
            stop(.tooLarge(limit: limit))
            completionHandler(.cancel)
            return
        }
        lock.withLock { self.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over: Bool = lock.withLock {
            guard stopped == nil else { return false }
            guard body.count + data.count <= limit else { return true }
            body.append(data)
            return false
        }
        if over { stop(.tooLarge(limit: limit)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let result: Result<(Data, URLResponse), Error> = lock.withLock {
            finished = true
            if let stopped { return .failure(stopped) }
            if let error {
                let cancelled = (error as? URLError)?.code == .cancelled
                return .failure(cancelled ? CancellationError() : error)
            }
            guard let response = self.response ?? task.response else { return .failure(URLError(.badServerResponse)) }
            return .success((body, response))
        }
        finish(result)
    }
}
