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
                fetch.lock.withLock {
                    fetch.continuation = continuation
                    fetch.task = task
                }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { fetch.stop(.deadline) }
            }
        } onCancel: {
            fetch.lock.withLock { fetch.task }?.cancel()
        }
    }

    private func stop(_ reason: TokenEndpointFetchLimit) {
        let task: URLSessionDataTask? = lock.withLock {
            guard !finished, stopped == nil else { return nil }
            stopped = reason
            return self.task
        }
        task?.cancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if response.expectedContentLength > Int64(limit) {
            lock.withLock { stopped = stopped ?? .tooLarge(limit: limit) }
            completionHandler(.cancel)
            return
        }
        lock.withLock { self.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over: Bool = lock.withLock {
            guard stopped == nil else { return false }
            guard body.count + data.count <= limit else {
                stopped = .tooLarge(limit: limit)
                body = Data()
                return true
            }
            body.append(data)
            return false
        }
        if over { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let (continuation, result): (CheckedContinuation<(Data, URLResponse), Error>?, Result<(Data, URLResponse), Error>) = lock.withLock {
            finished = true
            let waiting = self.continuation
            self.continuation = nil
            if let stopped { return (waiting, .failure(stopped)) }
            if let error {
                let cancelled = (error as? URLError)?.code == .cancelled
                return (waiting, .failure(cancelled ? CancellationError() : error))
            }
            guard let response = self.response ?? task.response else { return (waiting, .failure(URLError(.badServerResponse))) }
            return (waiting, .success((body, response)))
        }
        continuation?.resume(with: result)
    }
}
