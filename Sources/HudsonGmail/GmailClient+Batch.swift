/*!
 Many `messages.get` through Gmail's batch endpoint (gmail-api.md §1 "Batch endpoint", §3
 "Batch requests"). Ids are split into batches of `batchSize` with at most
 `maxConcurrentRequests` batches in flight. A batch that fails as a whole goes through the
 normal request loop and is retried as a whole. A batch that succeeds can still hide failing
 sub-responses (§9.6), so each part is read on its own, paired by Content-ID (§9.12), and
 only the failed retryable ones (429, 5xx, missing) are sent again, with backoff. Quota is
 charged per sub-request: a batch of n gets costs n × 5 units (§3).
 */

import Foundation

extension GmailClient {
    /// One id of a batch and the Content-ID that pairs it with its sub-response.
    struct BatchItem: Sendable {
        var contentID: String
        var id: String
    }

    /// Fetches every distinct id in `ids`; each gets a result, `.notFound` for a 404 part.
    /// An id of another shape than Gmail's is not sent (a batch part's path is a URL path
    /// too) and gets `GmailError.malformedID`. Ids not finished when the task is cancelled
    /// get `.cancelled`.
    public func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>] {
        var seen = Set<String>()
        let unique = ids.filter { seen.insert($0).inserted }
        guard !unique.isEmpty else { return [:] }
        do {
            try Self.checkFormat(format)
        } catch {
            return Dictionary(uniqueKeysWithValues: unique.map { ($0, .failure(error)) })
        }
        var results: [String: Result<GmailMessage, GmailError>] = [:]
        var sendable: [String] = []
        for id in unique {
            do { _ = try Endpoint.segment(id, .message); sendable.append(id) } catch { results[id] = .failure(error) }
        }
        let items = sendable.enumerated().map { BatchItem(contentID: "item-\($0.offset)", id: $0.element) }
        let size = configuration.batchSize
        let batches = stride(from: 0, to: items.count, by: size).map { Array(items[$0..<min($0 + size, items.count)]) }

        await withTaskGroup(of: [String: Result<GmailMessage, GmailError>].self) { group in
            var next = 0
            // A sliding window: a new batch starts only when one finishes.
            while next < min(configuration.maxConcurrentRequests, batches.count) {
                let batch = batches[next]
                group.addTask { await self.fetchBatch(batch, format: format) }
                next += 1
            }
            for await partial in group {
                results.merge(partial) { _, new in new }
                if next < batches.count {
                    let batch = batches[next]
                    group.addTask { await self.fetchBatch(batch, format: format) }
                    next += 1
                }
            }
        }
        for id in unique where results[id] == nil {
            results[id] = .failure(.cancelled)
        }
        return results
    }

    /// One batch, re-sending only its failed retryable sub-requests until they succeed or
    /// the retry bounds are reached.
    func fetchBatch(_ items: [BatchItem], format: String) async -> [String: Result<GmailMessage, GmailError>] {
        var results: [String: Result<GmailMessage, GmailError>] = [:]
        var pending = items
        var lastFailure: [String: GmailError] = [:]
        var attempts = 0
        var refreshed = false
        // As in the request loop, the bounds count from the first batch's admission.
        var started: Duration?

        func finish(_ error: (BatchItem) -> GmailError) -> [String: Result<GmailMessage, GmailError>] {
            for item in pending { results[item.id] = .failure(error(item)) }
            return results
        }

        while !pending.isEmpty {
            if Task.isCancelled { return finish { _ in .cancelled } }
            let parts: [String: BatchPartResponse]
            let secret: String
            do {
                let sent = try await sendBatch(pending, format: format)
                (parts, secret) = (sent.parts, sent.token)
                if started == nil { started = sent.started }
            } catch is CancellationError {
                return finish { _ in .cancelled }
            } catch {
                // The request as a whole: it says nothing about any one message.
                let failure = error as? GmailError ?? .invalidResponse("batch failed")
                return finish { _ in .batchFailed(failure) }
            }

            var retry: [BatchItem] = []
            var needsRefresh = false
            var needsBackoff = false
            var rateLimited = false
            var retryAfter: Double?
            for item in pending {
                guard let part = parts[item.contentID] else {
                    // The sub-request may never have run; treat it like a transient failure.
                    retry.append(item)
                    lastFailure[item.id] = .batchFailed(.invalidResponse("batch response had no part for this message"))
                    needsBackoff = true
                    continue
                }
                if (200..<300).contains(part.status) {
                    do {
                        let message: GmailMessage = try Self.decodeBody(part.body)
                        try Self.checkAnswer(message, for: item.id)
                        results[item.id] = .success(message)
                    } catch {
                        results[item.id] = .failure(error)
                    }
                    continue
                }
                let failure = ErrorClassifier.classify(
                    status: part.status, headers: part.headers, body: part.body, now: clock.wallClock(), secret: secret
                )
                lastFailure[item.id] = failure.error
                if part.status == 401, !refreshed {
                    retry.append(item)
                    needsRefresh = true
                } else if failure.error.isRetryable {
                    retry.append(item)
                    needsBackoff = true
                    if case .rateLimited = failure.error { rateLimited = true }
                    if let wait = failure.retryAfter { retryAfter = max(retryAfter ?? 0, wait) }
                } else {
                    results[item.id] = .failure(failure.error)
                }
            }
            pending = retry
            guard !pending.isEmpty else { break }

            if needsRefresh {
                // Sub-requests share the outer Authorization header: one refresh serves them all.
                refreshed = true
                do {
                    _ = try await refreshToken()
                } catch is CancellationError {
                    return finish { _ in .cancelled }
                } catch {
                    let failure = error as? GmailError ?? .unauthorized
                    return finish { _ in failure }
                }
                if !needsBackoff { continue }
            }

            attempts += 1
            if rateLimited { await quota.penalize(retryAfter: retryAfter) }
            let delay = policy.delay(retry: attempts - 1, retryAfter: retryAfter, unit: random())
            guard policy.allowsRetry(attemptsMade: attempts, elapsed: clock.now() - (started ?? clock.now()), delay: delay) else {
                return finish { lastFailure[$0.id] ?? .invalidResponse("batch failed") }
            }
            do {
                try await clock.sleep(delay)
            } catch {
                return finish { _ in .cancelled }
            }
        }
        return results
    }

    /// Posts one batch through the request loop and splits the multipart response; also
    /// returns the token the batch carried, for scrubbing sub-response errors, and when the
    /// quota admitted it.
    private func sendBatch(_ items: [BatchItem], format: String) async throws
        -> (parts: [String: BatchPartResponse], token: String, started: Duration) {
        let boundary = "batch_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let parts = try items.map {
            BatchCodec.Part(contentID: $0.contentID, target: try Endpoint.getMessage(id: $0.id, format: format).target)
        }
        // The outer URL carries no query: `prettyPrint=false` rides on each inner request,
        // which is where the JSON bodies come from.
        let request = GmailRequest(
            method: .messagesGet, httpMethod: "POST", path: Endpoint.batchPath, appendsPrettyPrint: false,
            body: BatchCodec.encode(parts, boundary: boundary),
            contentType: "multipart/mixed; boundary=\(boundary)",
            units: GmailMethod.messagesGet.units * items.count
        )
        let (response, token, started) = try await performReturningToken(request)
        guard let responseBoundary = BatchCodec.boundary(fromContentType: response.headers["content-type"]) else {
            throw GmailError.invalidResponse("batch response is not multipart/mixed")
        }
        return (BatchCodec.decode(response.body, boundary: responseBoundary), token, started)
    }
}
