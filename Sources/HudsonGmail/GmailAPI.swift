/*!
 The seams of the Gmail layer. `GmailAPI` is what the sync engine and the mutation flusher
 depend on (sync-engine-reference.md), so their tests can script a server instead of mocking
 HTTP; `GmailClient` is the real implementation. `AccessTokenProvider` is how the client gets
 bearer tokens without knowing about OAuth, which lives in its own folder; the static
 provider here serves tests and fixed-token setups.
 */

import Foundation

/// The Gmail operations Hudson uses. Message formats are `"minimal"`, `"metadata"`, `"full"`
/// or `"raw"` (gmail-api.md §2.3). Implementations throw `GmailError` (or
/// `CancellationError` when the calling task is cancelled).
public protocol GmailAPI: Sendable {
    /// `users.getProfile`: address, totals and the current history id.
    func getProfile() async throws -> Profile
    /// One page of `users.messages.list`; `query` is Gmail search syntax (§6).
    func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage
    /// `users.messages.get` in the given format.
    func getMessage(id: String, format: String) async throws -> GmailMessage
    /// One page of `users.history.list` after `startHistoryID`, only records about messages
    /// carrying `labelID` when given (the page's `historyId` is still the mailbox's);
    /// `.notFound` means the cursor aged out and a full sync is due (§9.2).
    func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage
    /// `users.labels.list` (no counts, no paging).
    func listLabels() async throws -> [GmailLabel]
    /// `users.messages.modify`. Success is any 2xx; the answer is not read: Gmail documents
    /// it only as the message in minimal form (§2.5: "don't rely on anything beyond `id`,
    /// `threadId` and `labelIds`"), and nothing Hudson does needs even those.
    func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws
    /// `users.messages.batchModify`; no per-id result (§2.6).
    func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws

    /// Many `messages.get` at once; one result per distinct id, never throws.
    func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>]
    /// `users.messages.attachments.get`.
    func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody
    /// `users.messages.send` of a complete RFC 2822 message (CRLF line ends).
    func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage
    /// `users.labels.create` with the label shown in lists.
    func createLabel(name: String) async throws -> GmailLabel
    /// `users.labels.create` with the label shown in lists and, when given, a palette color.
    /// A name Gmail has already answers 409 (or 400; gmail-api.md §2.10).
    func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel
    /// `users.labels.patch`: the fields given change (a new name keeps every message's label).
    func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel
    /// `users.labels.delete`: removes the label from every message and thread (§2.10).
    /// `.notFound` when Gmail has no such label.
    func deleteLabel(id: String) async throws
}

extension GmailAPI {
    /// Every record after `startHistoryID` (no label filter).
    public func listHistory(startHistoryID: String, pageToken: String?) async throws -> HistoryPage {
        try await listHistory(startHistoryID: startHistoryID, pageToken: pageToken, labelID: nil)
    }
}

/// Supplies OAuth access tokens to the client.
///
/// Contract: `accessToken()` returns the current token, refreshing it first when the provider
/// knows it has expired. `refreshAccessToken()` obtains a new one unconditionally (the client
/// calls it once after a 401) and afterwards `accessToken()` returns that new token. Several
/// requests may hit a 401 at once, so implementations should coalesce concurrent refreshes.
/// A refused refresh (`invalid_grant`) should be thrown as `GmailError.authorizationRevoked`
/// or as an error conforming to `GmailErrorConvertible`; other errors reach callers as
/// `GmailError.unauthorized`. Implementations must never put a token in an error.
public protocol AccessTokenProvider: Sendable {
    func accessToken() async throws -> String
    func refreshAccessToken() async throws -> String
}

/// An error that knows which `GmailError` it amounts to, so a token provider's own error types
/// reach the client's callers with the right classification.
public protocol GmailErrorConvertible: Error {
    var gmailError: GmailError { get }
}

/// A token provider with a fixed sequence of tokens: `accessToken()` returns the current one and
/// each `refreshAccessToken()` moves to the next (staying on the last). Counts its refreshes.
public final class StaticAccessTokenProvider: AccessTokenProvider, @unchecked Sendable {
    private struct State {
        var tokens: [String]
        var index = 0
        var refreshes = 0
    }

    // NSLock rather than Synchronization.Mutex, which would require macOS 15 on Apple platforms.
    private let lock = NSLock()
    private var state: State
    private let refreshError: GmailError?

    /// - Parameters:
    ///   - tokens: the initial token followed by what successive refreshes return.
    ///   - refreshError: when set, every refresh throws it (e.g. `.authorizationRevoked`).
    public init(tokens: [String], refreshError: GmailError? = nil) {
        state = State(tokens: tokens.isEmpty ? [""] : tokens)
        self.refreshError = refreshError
    }

    /// A provider whose single token is returned forever, also after refreshes.
    public convenience init(token: String) {
        self.init(tokens: [token])
    }

    public func accessToken() async throws -> String {
        locked { $0.tokens[$0.index] }
    }

    public func refreshAccessToken() async throws -> String {
        let token = locked { state -> String in
            state.refreshes += 1
            state.index = min(state.index + 1, state.tokens.count - 1)
            return state.tokens[state.index]
        }
        if let refreshError { throw refreshError }
        return token
    }

    /// How many times `refreshAccessToken()` was called.
    public var refreshCount: Int {
        locked { $0.refreshes }
    }

    private func locked<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}
