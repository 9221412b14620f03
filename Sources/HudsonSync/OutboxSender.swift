/*!
 The send path's actor: delivers the outbox to Gmail without ever sending a message twice or
 losing one (docs/architecture.md, "The outbox and the probe protocol"). Per entry:

   claim → was a request already out (state sending)? → probe: search rfc822msgid:<id> in:anywhere
             found → sent, with the id found; nothing is sent again
             not found → (after the settle time) send again
         → mark sending (committed before the request) → messages.send → sent, with Gmail's id

 Gmail's answers decide what happens next (gmail-api.md §4): a 400 or 404 is a definite
 rejection of the message, recorded with its reason and never retried; a refused token or a
 403 that is not a rate limit (missing scope, domain policy, the project's daily quota) is
 the account's, not the message's (`GmailError.isAccountWide`): nothing went out, the entry
 waits for the account to be put right and the pass stops with that error; a 429 or
 rate-limit 403 means Gmail did not act, so the entry is queued again behind a backoff; a timeout, a 5xx or a
 connection lost after the request was written may or may not have sent it — §4: "Don't
 blindly retry non-idempotent calls (messages.send) after a timeout or 5xx" — so the entry
 stays in 'sending' and is probed before anything else. GmailClient itself repeats `send` only
 after a rate-limit refusal (GmailMethod.isIdempotent), which keeps this true below us.

 Gmail's search may not show a message the instant it is stored (its index can lag), so
 the probe does not rely on it alone: it also reads history from the account's cursor as
 it was when the first attempt began (`attempt_history_id`) — Gmail's log of what it
 stored, where a message it accepted appears as messageAdded — and compares the Message-ID
 of each message added to SENT since. Found either way, the entry is sent. Found neither
 way soon after the attempt began, the probe waits out the rest of a settle time and
 looks once more before the message is sent again. A history too old to read (404) leaves
 the search to decide.

 Drafts are checked before they are written (issue 37 §5). `drafts.update` and
 `drafts.send` replace or send whatever the draft holds, with no precondition
 (gmail-api.md §2.12), so an update or a send of a draft first reads the draft
 (`drafts.get`, format=metadata) and compares its message id with the one the entry was
 based on (`draft_base_gmail_id`). Unchanged — or holding a version this outbox wrote
 itself — it is written. Changed or gone elsewhere, nothing is overwritten: an update is
 saved as a new draft instead (both versions kept, with a note: `OutboxReport.kept`,
 `OutboxEntry.keptNote`), and a send is refused with the reason (65 for hd-drafts send,
 said by hd-sync). The draft already holding the entry's own Message-ID means an earlier
 update went through and its answer was lost: the entry is done. A race remains between
 the read and the write (the API offers nothing shorter); it is one request long.
 */
import Foundation
import GmailIDShape
import HudsonGmail
import HudsonMail
import HudsonStore

public struct OutboxReport: Sendable, Equatable {
    /// Sent now: Gmail answered with the new message.
    public var sent = 0
    /// Found by the probe: an earlier attempt had reached Gmail after all.
    public var confirmed = 0
    /// Refused for good; the reason is on the entry.
    public var failed = 0
    /// The entries refused in this pass.
    public var rejected: [Int64] = []
    /// Draft updates kept beside their draft in this pass, because it changed elsewhere
    /// (their `keptNote` says so).
    public var kept: [Int64] = []
    /// Left for a later pass: rate limited, or an attempt whose outcome is not known yet.
    public var deferred = 0

    public init() {}

    /// Adds another send's report to this one (two sends in one pass).
    public mutating func add(_ other: OutboxReport) {
        sent += other.sent
        confirmed += other.confirmed
        failed += other.failed
        rejected += other.rejected
        kept += other.kept
        deferred = other.deferred  // the later send retried what the first left

    }
}

public actor OutboxSender {
    let api: any GmailAPI
    /// Drafts (GmailDrafts.swift): the same client, when it implements them.
    let drafts: (any GmailDraftsAPI)?
    let database: SharedStore
    let email: String
    let exclusive: Bool
    let settle: Duration
    let afterSendBeforeRecording: @Sendable () -> Void
    let afterDraftCheck: @Sendable () -> Void

    /// - Parameters:
    ///   - api: the client on the interactive quota lane: a person is waiting for the send.
    ///   - exclusive: the caller holds the account's send lock, so no other sender is alive
    ///     and claims left in the store belong to senders that died.
    ///   - settle: how long after an attempt a probe that finds nothing is trusted.
    ///   - afterSendBeforeRecording: runs when Gmail has answered and before the answer is
    ///     recorded: the seam crash tests use to die at the worst moment.
    ///   - afterDraftCheck: runs when a draft has been read and found unchanged, before it
    ///     is written: the crash tests' seam between the check and the write.
    public init(api: any GmailAPI, database: SharedStore, account: String, exclusive: Bool = false,
                settle: Duration = .seconds(5), afterSendBeforeRecording: @escaping @Sendable () -> Void = {},
                afterDraftCheck: @escaping @Sendable () -> Void = {}, drafts: (any GmailDraftsAPI)? = nil) {
        self.api = api
        self.drafts = drafts ?? (api as? any GmailDraftsAPI)
        self.database = database
        self.email = account
        self.exclusive = exclusive
        self.settle = settle
        self.afterSendBeforeRecording = afterSendBeforeRecording
        self.afterDraftCheck = afterDraftCheck
    }

    /// What one entry's turn did to the rest of the pass.
    enum Turn {
        case next
        /// Gmail or the network is in trouble: the other entries wait for the next pass.
        case stop
    }

    /// Sends the due entries (only `ids`, when given), oldest first.
    /// `takeOverClaimsSince`: with an `exclusive` sender, only the claims made at or after
    /// this moment (epoch ms) are taken over now: those made under the send lock file the
    /// caller holds (SendLock); older ones wait until their claim expires.
    public func sendDue(only ids: [Int64]? = nil, limit: Int = 20, takeOverClaimsSince: Int64? = nil) async throws -> OutboxReport {
        let accountID = try accountID()
        let exclusive = self.exclusive
        let claims = try database.write {
            try $0.claimDueOutbox(accountID: accountID, ids: ids, limit: limit, takeOverClaims: exclusive,
                                  takeOverClaimsSince: takeOverClaimsSince)
        }
        var report = OutboxReport()
        var done = Set<Int64>()
        defer {
            // A claim not settled (the pass stopped, or threw) goes back for the next pass.
            for claim in claims where !done.contains(claim.entry.id) {
                try? database.write { try $0.releaseOutboxClaim(id: claim.entry.id, token: claim.token) }
            }
        }
        for claim in claims {
            let turn = try await deliver(claim, report: &report)
            done.insert(claim.entry.id)
            if case .stop = turn { break }
        }
        return report
    }

    // MARK: - One entry

    private func deliver(_ claim: OutboxClaim, report: inout OutboxReport) async throws -> Turn {
        var claim = claim
        if claim.entry.state == .sending {
            do {
                if try await probe(claim) {
                    report.confirmed += 1
                    return .next
                }
            } catch let error as GmailError {
                // Without an answer to "was it sent?" nothing may be sent: try again later.
                try uncertain(claim, error: "probe: \(error)", delay: error.isRetryable ? backoff(claim) : 0)
                report.deferred += 1
                if error.isAccountWide { throw error }
                return error.isRetryable ? .stop : .next
            }
        }
        if let turn = try await checkDraft(&claim, report: &report) { return turn }
        let (id, token) = (claim.entry.id, claim.token)
        var threadID = claim.entry.threadID
        if threadID == nil && claim.entry.kind != .draftSend {
            switch try replyThread(claim) {
            case .thread(let thread):
                threadID = thread
            case .pendingParent(let parent) where parent != id:
                // A reply waits for the message it answers: its thread is known once Gmail has it.
                try database.write { try $0.releaseOutboxClaim(id: id, token: token) }
                report.deferred += 1
                return .next
            default:
                break
            }
        }
        // Committed before the request: after a crash from here on, the store says a
        // request may have reached Gmail, and the next sender probes first.
        guard try database.write({ try $0.markOutboxSending(id: id, token: token) }) else { return .next }
        let response: Delivered
        do {
            response = try await request(claim, threadID: threadID)
        } catch let error as GmailError {
            return try refused(claim, error: error, report: &report)
        } catch {
            // Cancelled mid-request, or anything else: the request may have gone out.
            try? uncertain(claim, error: "interrupted: the message may have been sent", delay: 0)
            throw error
        }
        afterSendBeforeRecording()
        guard !response.id.isEmpty, claim.entry.kind != .draft || !(response.draftID ?? "").isEmpty else {
            try uncertain(claim, error: "Gmail's answer had no message id", delay: 0)
            report.deferred += 1
            return .next
        }
        guard GmailID.isWellFormed(response.id, as: .message), response.threadID.map({ GmailID.isWellFormed($0, as: .thread) }) ?? true,
              response.draftID.map({ GmailID.isWellFormed($0, as: .draft) }) ?? true else {
            // Not an answer as documented: what Gmail did is not known, so the entry is probed.
            try uncertain(claim, error: "Gmail's answer had an id of the wrong shape", delay: 0)
            report.deferred += 1
            return .next
        }
        try database.write {
            try $0.markOutboxSent(id: id, gmailID: response.id, threadID: response.threadID, draftID: response.draftID)
        }
        report.sent += 1
        return .next
    }

    /// What Gmail answered: the message it stored (for a draft, the draft's message) and
    /// the draft.
    struct Delivered: Sendable {
        var id: String
        var threadID: String?
        var draftID: String?
    }

    /// The one request an entry makes: `messages.send`, `drafts.create` or `drafts.update`,
    /// or `drafts.send`.
    private func request(_ claim: OutboxClaim, threadID: String?) async throws -> Delivered {
        switch claim.entry.kind {
        case .send:
            let message = try await api.send(raw: claim.raw, threadID: threadID)
            return Delivered(id: message.id, threadID: message.threadId)
        case .draft:
            let drafts = try draftsAPI()
            let draft: GmailDraft
            if let existing = claim.entry.draftID {
                draft = try await drafts.updateDraft(id: existing, raw: claim.raw, threadID: threadID)
            } else {
                draft = try await drafts.createDraft(raw: claim.raw, threadID: threadID)
            }
            return Delivered(id: draft.message?.id ?? "", threadID: draft.message?.threadId, draftID: draft.id)
        case .draftSend:
            guard let id = claim.entry.draftID else { throw GmailError.invalidResponse("no draft to send") }
            let message = try await draftsAPI().sendDraft(id: id)
            return Delivered(id: message.id, threadID: message.threadId, draftID: id)
        }
    }

    /// The check before a draft is updated or sent (see the file comment). Nil: go on and
    /// write (`claim` may now create a new draft instead of updating); else the turn ends.
    private func checkDraft(_ claim: inout OutboxClaim, report: inout OutboxReport) async throws -> Turn? {
        let entry = claim.entry
        guard entry.kind == .draft || entry.kind == .draftSend, let draftID = entry.draftID,
              let base = entry.draftBaseGmailID else { return nil }
        let current: GmailMessage?
        do {
            // Only a 404 says the draft is gone: an answer without its message's id is not
            // one Gmail documents, and decides nothing.
            guard let read = try await draftsAPI().getDraft(id: draftID, format: "metadata").message,
                  GmailID.isWellFormed(read.id, as: .message), read.threadId.map({ GmailID.isWellFormed($0, as: .thread) }) ?? true else {
                throw GmailError.invalidResponse("drafts.get gave no message id, or one of the wrong shape")
            }
            current = read
        } catch GmailError.notFound {
            current = nil
        } catch let error as GmailError {
            // Without the answer nothing may be written: the entry waits — behind a backoff
            // when Gmail is in trouble, for the next pass when the network is down.
            let delay: Double
            if case .network = error { delay = 0 } else { delay = error.isRetryable ? backoff(claim) : 0 }
            try uncertain(claim, error: "draft check: \(error)", delay: delay)
            report.deferred += 1
            if error.isAccountWide { throw error }
            return error.isRetryable ? .stop : .next
        }
        let accountID = entry.accountID
        if let current {
            let currentID = current.id
            let oursAlready = try entry.kind == .draft
                && database.read { try $0.outboxWroteDraftMessage(gmailID: currentID, accountID: accountID) }
            if currentID == base || oursAlready {
                afterDraftCheck()
                return nil
            }
            if entry.kind == .draft, entry.state == .sending,
               current.header(named: "Message-ID")?.trimmingCharacters(in: .whitespaces) == entry.messageID {
                // An earlier update went through; its answer was lost.
                let id = entry.id
                try database.write { try $0.markOutboxSent(id: id, gmailID: current.id, threadID: current.threadId, draftID: draftID) }
                report.confirmed += 1
                return .next
            }
        }
        let why = current == nil ? "deleted or sent on another device" : "changed on another device"
        let (id, token) = (entry.id, claim.token)
        if entry.kind == .draftSend {
            // drafts.send deletes the draft: after a request of this entry's that may have
            // reached Gmail (its answer lost; the probe did not find it in Sent yet), a
            // vanished draft may be that send. Never sent again on a guess; said as it is.
            let reason = entry.state == .sending && current == nil
                ? "draft:\(draftID) is gone: an earlier attempt of this send, whose answer was lost, may have sent it, or it was deleted or sent on another device; not sent again (look in Sent before sending it again)"
                : "draft:\(draftID) was \(why) after hd-drafts send read it; not sent (hd-drafts show it, then send it again)"
            try database.write { try $0.refuseOutboxUnsent(id: id, token: token, reason: reason) }
            report.failed += 1
            report.rejected.append(id)
            return .next
        }
        guard try database.write({ try $0.keepDraftEditBeside(id: id, token: token, why: why) }) else { return .next }
        claim.entry.keptBesideDraftID = draftID
        claim.entry.draftID = nil
        claim.entry.note = why
        report.kept.append(id)
        return nil
    }

    private func draftsAPI() throws -> any GmailDraftsAPI {
        guard let drafts else { throw GmailError.invalidResponse("this client has no drafts API") }
        return drafts
    }

    /// The thread a queued message with no thread of its own joins, from its In-Reply-To and
    /// References, as the store and the outbox know them now: a reply queued before the
    /// message it answers was sent (both offline, or a series sent at once) learns the
    /// thread when its turn comes (gmail-api.md §2.7).
    private func replyThread(_ claim: OutboxClaim) throws -> Store.ReplyThread {
        let parents = RawMessage.parentMessageIDs(RFC822.parseHeaders(claim.raw))
        guard !parents.isEmpty else { return .unknown }
        let accountID = claim.entry.accountID
        return try database.read { try $0.replyThread(accountID: accountID, parents: parents) }
    }

    /// Looks for the entry at Gmail (`find`); when it finds nothing soon after the attempt
    /// began, waits out the settle time and looks once more. Marks it sent and returns true
    /// when Gmail has it.
    private func probe(_ claim: OutboxClaim) async throws -> Bool {
        var found = try await find(claim)
        if found == nil {
            let now = try database.read { $0.now }
            // Never negative: after the wall clock steps back, the wait is at most `settle`.
            let elapsed = Duration.milliseconds(max(0, now - (claim.entry.attemptStartedAt ?? 0)))
            if elapsed < settle {
                try await Task.sleep(for: settle - elapsed)
                found = try await find(claim)
            }
        }
        guard let found else { return false }
        let id = claim.entry.id
        try database.write {
            try $0.markOutboxSent(id: id, gmailID: found.id, threadID: found.threadID, draftID: found.draftID)
        }
        return true
    }

    /// The entry's message at Gmail, if Gmail has it: searched for by Message-ID in the
    /// whole mailbox (Sent, Spam and Trash included: the user may already have deleted
    /// it), then looked for in history since the first attempt.
    ///
    /// A draft is looked for among the drafts (`drafts.list` takes a query): found, it was
    /// saved, and is not saved twice. The sending of a draft is looked for in Sent only:
    /// elsewhere the draft itself carries the same Message-ID.
    private func find(_ claim: OutboxClaim) async throws -> (id: String, threadID: String?, draftID: String?)? {
        if claim.entry.kind == .draft {
            let page = try await draftsAPI().listDrafts(pageToken: nil, query: "rfc822msgid:\(claim.entry.messageID)")
            let found = page.drafts.first { $0.id == claim.entry.draftID } ?? page.drafts.first
            guard let found, let message = found.message, !message.id.isEmpty else { return nil }
            guard GmailID.isWellFormed(found.id, as: .draft), GmailID.isWellFormed(message.id, as: .message),
                  message.threadId.map({ GmailID.isWellFormed($0, as: .thread) }) ?? true else {
                throw GmailError.invalidResponse("drafts.list gave an id of the wrong shape")
            }
            return (message.id, message.threadId, found.id)
        }
        let query = "rfc822msgid:\(claim.entry.messageID) " + (claim.entry.kind == .draftSend ? "in:sent" : "in:anywhere")
        let page = try await api.listMessages(pageToken: nil, maxResults: 10, query: query)
        if let found = page.messages.first {
            guard GmailID.isWellFormed(found.id, as: .message), found.threadId.map({ GmailID.isWellFormed($0, as: .thread) }) ?? true else {
                throw GmailError.invalidResponse("messages.list gave an id of the wrong shape")
            }
            return (found.id, found.threadId, claim.entry.draftID)
        }
        return try await findInHistory(claim).map { ($0.id, $0.threadID, claim.entry.draftID) }
    }

    /// At most this many messages added to SENT since the attempt are read for their
    /// Message-ID: the newest, since the history read starts at the last sync, before the
    /// attempt, while the probe comes soon after it. More than that, and the search
    /// decides alone.
    static let historyProbeLimit = 100

    /// The message Gmail stored for the entry, from history: every messageAdded of a SENT
    /// message after the cursor of the first attempt, each read (format=metadata) for its
    /// Message-ID. Nil when none matches, when history from there has expired (404), or
    /// when the entry has no recorded cursor.
    private func findInHistory(_ claim: OutboxClaim) async throws -> (id: String, threadID: String?)? {
        guard let start = claim.entry.attemptHistoryID else { return nil }
        var added: [String] = []
        var seen = Set<String>()
        var token: String?
        var seenTokens = Set<String>()
        repeat {
            let page: HistoryPage
            do {
                page = try await api.listHistory(startHistoryID: String(start), pageToken: token, labelID: "SENT")
            } catch GmailError.notFound {
                return nil
            }
            for record in page.history {
                for change in record.messagesAdded {
                    if let id = change.message?.id, !id.isEmpty, seen.insert(id).inserted { added.append(id) }
                }
            }
            token = page.nextPageToken
            if let next = token, !seenTokens.insert(next).inserted { break }
        } while token != nil
        let candidates = Array(added.suffix(Self.historyProbeLimit))
        guard !candidates.isEmpty else { return nil }
        let results = await api.getMessages(ids: candidates, format: "metadata")
        let wanted = claim.entry.messageID
        for id in candidates {
            switch results[id] {
            case .success(let message)?:
                if message.header(named: "Message-ID")?.trimmingCharacters(in: .whitespaces) == wanted {
                    guard GmailID.isWellFormed(message.id, as: .message),
                          message.threadId.map({ GmailID.isWellFormed($0, as: .thread) }) ?? true else {
                        throw GmailError.invalidResponse("messages.get gave an id of the wrong shape")
                    }
                    return (message.id, message.threadId)
                }
            case .failure(.notFound)?:
                continue  // gone since: not the entry's message
            case .failure(let error)?:
                // Without this answer "not found" is not known (a 5xx, a refused account, a
                // batch that failed as a whole): ask again later rather than send twice.
                throw error
            case nil:
                throw GmailError.invalidResponse("Gmail's batch answer left out a message the probe asked for")
            }
        }
        return nil
    }

    /// Records what a failed `send` means for the entry (see the file comment).
    private func refused(_ claim: OutboxClaim, error: GmailError, report: inout OutboxReport) throws -> Turn {
        let id = claim.entry.id
        switch error {
        case .batchFailed(let failure):
            return try refused(claim, error: failure, report: &report)
        case .badRequest(let message):
            try database.write { try $0.markOutboxFailed(id: id, reason: "rejected by Gmail: \(message)") }
            report.failed += 1
            report.rejected.append(id)
            return .next
        case .notFound where claim.entry.kind == .draft && claim.entry.draftID != nil:
            // The draft went between the check and the update: nothing was written (404), so
            // the update is kept as a new draft, made by the next pass.
            let token = claim.token
            if try database.write({ try $0.keepDraftEditBeside(id: id, token: token, why: "deleted or sent on another device",
                                                               requeue: true) }) {
                try database.write { try $0.releaseOutboxClaim(id: id, token: token) }
                report.kept.append(id)
            }
            report.deferred += 1
            return .next
        case .notFound:
            let reason = error.description
            try database.write { try $0.markOutboxFailed(id: id, reason: reason) }
            report.failed += 1
            report.rejected.append(id)
            return .next
        case .rateLimited(let retryAfter):
            let delay = max(backoff(claim), retryAfter ?? 0)
            let token = claim.token
            try database.write {
                try $0.deferOutbox(id: id, token: token, error: error.description, retryAfterMilliseconds: Int64(delay * 1000))
            }
            report.deferred += 1
            return .stop
        case .unauthorized, .authorizationRevoked, .forbidden:
            // The account's, refused before anything was done (GmailError.isAccountWide):
            // nothing went out, and the message waits until the account is put right.
            let token = claim.token
            try database.write { try $0.deferOutbox(id: id, token: token, error: error.description, retryAfterMilliseconds: 0) }
            throw error
        case .server:
            try uncertain(claim, error: error.description, delay: backoff(claim))
            report.deferred += 1
            return .stop
        case .network:
            // The network is down or the answer was lost: the next pass probes at once.
            try uncertain(claim, error: error.description, delay: 0)
            report.deferred += 1
            return .stop
        case .invalidResponse, .cancelled:
            try uncertain(claim, error: error.description, delay: 0)
            report.deferred += 1
            return .next
        }
    }

    private func uncertain(_ claim: OutboxClaim, error: String, delay: Double) throws {
        let (id, token) = (claim.entry.id, claim.token)
        try database.write {
            try $0.recordOutboxUncertainty(id: id, token: token, error: error, retryAfterMilliseconds: Int64(delay * 1000))
        }
    }

    /// 5 s, 10 s, 20 s … up to 15 min, with jitter, as the mutation flusher backs off.
    private func backoff(_ claim: OutboxClaim) -> Double {
        min(900.0, 5.0 * pow(2.0, Double(min(claim.entry.attempts, 20)))) * Double.random(in: 0.5...1.0)
    }

    private func accountID() throws -> Int64 {
        let email = self.email
        guard let account = try database.read({ try $0.account(email: email) }) else {
            throw SyncError.unknownAccount(email)
        }
        return account.id
    }
}
