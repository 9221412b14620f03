/*!
 The URLSession implementation of `GmailAPI`. Every call goes through one loop: charge the
 QuotaBucket with the method's units, take a concurrency permit, attach the bearer token,
 exchange, classify. A 401 gets one token refresh and one immediate retry (gmail-api.md §4
 "retry once"); retryable failures (429, rate-limit 403s, 5xx, network) are retried with
 full-jitter backoff bounded by attempts and time, with `Retry-After` as a floor; a 429 also
 penalises the bucket. A refused connection to a Gmail on this machine (the demo's fake, a
 test's) is not retried: nothing listens there, and backing off only delays saying so
 (RetryPolicy). Nothing here prints, reads the environment or exits, and no token
 leaves this file except in the `Authorization` header.
 */

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Gmail REST client.
public final class GmailClient: GmailAPI {
    /// The headers a `metadata` fetch asks for: the ones Hudson keeps.
    public static let metadataHeaders: [String] = Endpoint.metadataHeaders

    /// The settings this client was made with.
    public let configuration: GmailClientConfiguration
    /// The quota scheduler every request is charged to (shareable between clients of one user).
    public let quota: QuotaBucket

    let tokens: any AccessTokenProvider
    let clock: SchedulingClock
    let random: @Sendable () -> Double
    let policy: RetryPolicy
    private let transport: URLSessionTransport
    private let limiter: AsyncLimiter
    private let root: String

    /// Creates a client; throws when the configuration is unusable (e.g. plain http to a
    /// host that is not loopback).
    /// - Parameters:
    ///   - quota: share one bucket between the clients of one user (say, an interactive and a
    ///     background client); a private bucket with the default budget otherwise.
    ///   - clock: time source for backoff, `Retry-After` dates and the private bucket.
    ///   - random: uniform values in 0..<1 for backoff jitter.
    public init(
        configuration: GmailClientConfiguration = GmailClientConfiguration(),
        tokenProvider: any AccessTokenProvider,
        quota: QuotaBucket? = nil,
        clock: SchedulingClock = .continuous,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) throws(GmailConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.tokens = tokenProvider
        self.quota = quota ?? QuotaBucket(clock: clock)
        self.clock = clock
        self.random = random
        self.policy = RetryPolicy(configuration)
        self.transport = URLSessionTransport(timeout: configuration.requestTimeout)
        self.limiter = AsyncLimiter(limit: configuration.maxConcurrentRequests)
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.root = base
    }

    // MARK: - GmailAPI

    public func getProfile() async throws -> Profile {
        try await decode(Endpoint.profile())
    }

    public func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage {
        try await decode(Endpoint.listMessages(pageToken: pageToken, maxResults: maxResults, query: query))
    }

    public func getMessage(id: String, format: String) async throws -> GmailMessage {
        try Self.checkFormat(format)
        let message: GmailMessage = try await decode(try Endpoint.getMessage(id: id, format: format))
        try Self.checkAnswer(message, for: id)
        return message
    }

    public func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage {
        try await decode(Endpoint.listHistory(startHistoryID: startHistoryID, pageToken: pageToken, labelID: labelID))
    }

    public func listLabels() async throws -> [GmailLabel] {
        let list: LabelList = try await decode(Endpoint.listLabels())
        return list.labels
    }

    /// Success is any 2xx, whatever its body: Gmail promises only a minimal message there
    /// (§2.5), and nothing of it is used.
    public func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        _ = try await perform(try Endpoint.modify(id: id, add: addLabelIDs, remove: removeLabelIDs))
    }

    /// Sends nothing for no ids, and requests of at most 1000 ids each (§2.6). Success is any
    /// 2xx; Gmail answers 204 with an empty body, and whatever body comes is ignored.
    public func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        for start in stride(from: 0, to: ids.count, by: 1000) {
            let chunk = Array(ids[start..<min(start + 1000, ids.count)])
            _ = try await perform(Endpoint.batchModify(ids: chunk, add: addLabelIDs, remove: removeLabelIDs))
        }
    }

    public func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody {
        try await decode(try Endpoint.attachment(messageID: messageID, attachmentID: attachmentID))
    }

    /// Retried only after rate-limit refusals, never after a timeout or 5xx: the message may
    /// already have gone out (§4).
    public func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage {
        try await decode(Endpoint.send(raw: raw, threadID: threadID))
    }

    public func createLabel(name: String) async throws -> GmailLabel {
        try await decode(Endpoint.createLabel(name: name))
    }

    public func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel {
        try await decode(Endpoint.createLabel(name: name, color: color))
    }

    public func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel {
        try await decode(try Endpoint.patchLabel(id: id, name: name, color: color))
    }

    /// Success is any 2xx (Gmail answers 204, no body).
    public func deleteLabel(id: String) async throws {
        _ = try await perform(try Endpoint.deleteLabel(id: id))
    }

    // MARK: - The request loop

    /// Performs `request` until it succeeds or may no longer be retried; returns the 2xx.
    /// Throws `GmailError` or `CancellationError`.
    func perform(_ request: GmailRequest) async throws -> HTTPResponse {
        try await performReturningToken(request).response
    }

    /// `perform`, also returning the token the successful exchange carried, so a caller that
    /// classifies errors inside the body (a batch) can scrub that token from them, and when
    /// the quota admitted the first attempt.
    func performReturningToken(_ request: GmailRequest) async throws -> (response: HTTPResponse, token: String, started: Duration) {
        // The retry bounds count from the first attempt's admission: time spent waiting for
        // this user's own quota is not time spent failing (maxRetryDuration).
        var started: Duration?
        var attempts = 0
        var refreshed = false
        var freshToken: String?
        while true {
            try Task.checkCancellation()
            let failure: ExchangeFailure
            do {
                let (response, token) = try await exchange(request, token: freshToken, admitted: &started)
                return (response, token, started ?? clock.now())
            } catch let caught as ExchangeFailure {
                failure = caught
            }
            freshToken = nil
            if failure.status == 401 {
                guard !refreshed else { throw GmailError.unauthorized }
                refreshed = true
                freshToken = try await refreshToken()
                continue
            }
            attempts += 1
            try await afterFailure(failure, method: request.method, attempts: attempts, started: started ?? clock.now())
        }
    }

    /// Penalises the bucket on a rate limit, then either sleeps the backoff delay (the caller
    /// retries) or throws the failure's error.
    func afterFailure(_ failure: ExchangeFailure, method: GmailMethod, attempts: Int, started: Duration) async throws {
        if case .rateLimited = failure.error {
            await quota.penalize(retryAfter: failure.retryAfter)
        }
        guard RetryPolicy.isRetryable(failure.error, for: method), policy.retries(failure) else { throw failure.error }
        let delay = policy.delay(retry: attempts - 1, retryAfter: failure.retryAfter, unit: random())
        guard policy.allowsRetry(attemptsMade: attempts, elapsed: clock.now() - started, delay: delay) else {
            throw failure.error
        }
        try await clock.sleep(delay)
    }

    /// One exchange: quota, token, permit, HTTP. Returns a 2xx response and the token sent;
    /// throws `ExchangeFailure` for anything the loop may handle, and `GmailError` (from the
    /// token provider) or `CancellationError` for what it must not. Sets `admitted` to the
    /// quota's admission instant if it is nil.
    func exchange(_ request: GmailRequest, token presetToken: String?,
                  admitted: inout Duration?) async throws -> (response: HTTPResponse, token: String) {
        let ticket = try await quota.admit(units: request.units, lane: configuration.lane)
        if admitted == nil { admitted = ticket.admittedAt }
        // The units leave the quota's window one window after the answer, however it ends
        // (QuotaBucket: Gmail counts the request on arrival, not at admission).
        do {
            let result = try await send(request, token: presetToken)
            await quota.settle(ticket)
            return result
        } catch {
            await quota.settle(ticket)
            throw error
        }
    }

    /// The exchange after its admission: token, permit, HTTP.
    private func send(_ request: GmailRequest, token presetToken: String?) async throws -> (response: HTTPResponse, token: String) {
        let token: String
        if let presetToken {
            token = presetToken
        } else {
            do { token = try await tokens.accessToken() } catch { throw Self.tokenError(error) }
        }
        guard let url = URL(string: root + request.target) else {
            throw GmailError.badRequest(message: "cannot form a URL for \(request.path)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.httpMethod
        urlRequest.timeoutInterval = configuration.requestTimeout.inSeconds
        urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        urlRequest.setValue(configuration.userAgent, forHTTPHeaderField: "User-Agent")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body = request.body {
            urlRequest.httpBody = body
            urlRequest.setValue(request.contentType ?? "application/json; charset=UTF-8", forHTTPHeaderField: "Content-Type")
        } else if request.httpMethod == "POST" {
            urlRequest.httpBody = Data()
        }
        let transport = self.transport
        let sendable = urlRequest
        let once = !request.method.isIdempotent
        let response: HTTPResponse
        do {
            response = try await limiter.withPermit { try await transport.send(sendable, freshConnection: once) }
        } catch let error as CancellationError {
            throw error
        } catch {
            throw ExchangeFailure(error: ErrorClassifier.transport(error), status: nil, retryAfter: nil,
                                  refused: ErrorClassifier.isRefused(error))
        }
        guard (200..<300).contains(response.status) else {
            throw ErrorClassifier.classify(
                status: response.status, headers: response.headers, body: response.body,
                now: clock.wallClock(), secret: token
            )
        }
        return (response, token)
    }

    /// Asks the provider for a new token, mapping its errors.
    func refreshToken() async throws -> String {
        do { return try await tokens.refreshAccessToken() } catch { throw Self.tokenError(error) }
    }

    /// Token provider errors as the client's callers see them (see `AccessTokenProvider`).
    static func tokenError(_ error: any Error) -> any Error {
        switch error {
        case is CancellationError: return error
        case let gmail as GmailError: return gmail
        case let convertible as any GmailErrorConvertible: return convertible.gmailError
        case is URLError: return ErrorClassifier.transport(error)
        default: return GmailError.unauthorized
        }
    }

    // MARK: - Decoding

    private func decode<T: Decodable>(_ request: GmailRequest) async throws -> T {
        let response = try await perform(request)
        return try Self.decodeBody(response.body)
    }

    /// Decodes a JSON body, describing failures by field path only (never by value).
    static func decodeBody<T: Decodable>(_ data: Data) throws(GmailError) -> T {
        guard !data.isEmpty else { throw .invalidResponse("empty body where JSON was expected") }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw .invalidResponse("body is not valid JSON")
        } catch DecodingError.keyNotFound(let key, let context) {
            throw .invalidResponse("missing field \(path(context.codingPath + [key]))")
        } catch DecodingError.dataCorrupted(let context) where context.debugDescription == WireRange.outOfRange {
            throw .invalidResponse("field \(path(context.codingPath)) is out of range")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
                DecodingError.dataCorrupted(let context) {
            throw .invalidResponse("field \(path(context.codingPath)) has the wrong type")
        } catch let error as UnusableID {
            throw .invalidResponse("field \(path(error.codingPath)) is not a Gmail \(error.kind) id")
        } catch {
            throw .invalidResponse("undecodable body")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "(root)" : text)
    }

    /// A `messages.get` answer must be the message asked for: one about another id (a
    /// proxy's mix-up, a duplicated part) would be stored under the wrong id.
    static func checkAnswer(_ message: GmailMessage, for id: String) throws(GmailError) {
        guard message.id == id else { throw .invalidResponse("the answer is about another message") }
    }

    static func checkFormat(_ format: String) throws(GmailError) {
        guard Endpoint.messageFormats.contains(format) else {
            throw .badRequest(message: "unknown message format \"\(format)\"; expected minimal, metadata, full or raw")
        }
    }
}
