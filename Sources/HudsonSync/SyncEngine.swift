/*!
 The read-path actor (sync-engine-reference.md): one bounded pass, in this order,

   ensureCursor → pollHistory → backfill (≤ maxBackfillPages) → settle a re-list
     → retry parked messages → hydrateBodies (≤ hydrationBatch)

 so the caller controls cadence and nothing runs unbounded in the background. It owns
 no state of its own between passes: the cursor, the backfill window and token, the
 bodies still missing and the messages parked after a failure all live in the store, so
 a crash resumes from what it says.

 One bad message never stalls the account (issue 17 §2). A fetch that fails for a reason
 of the message's own (a 5xx after the client's retries, a 4xx other than 404, an answer
 that cannot be read or mapped) parks the message in the store with its error, in the
 same transaction as the page or poll it came from, and the pass goes on: history is
 applied and the cursor advances, the listing moves on, hydration takes the next body.
 Parked messages are fetched again when their back-off is over, in later passes and
 processes, until the user drops them (`hd-pending --parked --drop`). A failure that is
 not the message's (the network, a rate limit, a token Gmail refuses) stops the pass
 before the cursor or the listing moves: nothing is lost, and the next pass resumes.

 An id Gmail itself calls gone (404) or invalid (400), and one Hudson would not send
 (GmailIDShape), is confirmed gone like a deleted message (issue 37 §2): it is never
 parked, so it cannot keep a catch-up from completing. Ids of a wrong shape in a list
 page or a history record were set aside when the answer was read, and are counted in
 the report (`unusableIDs`).
 Single-flight: a second call while a pass runs returns an empty report at once
 (actors are re-entrant, so the guard is explicit).
 */
import Foundation
import HudsonGmail
import HudsonMail
import HudsonStore

public struct SyncReport: Sendable, Equatable {
    public var backfilledThisPass = 0
    public var eventsApplied = 0
    public var bodiesHydrated = 0
    public var backfillComplete = false
    /// Messages of the account parked after a failure when the pass ended (not those
    /// the user dropped).
    public var parked = 0
    /// Ids of a wrong shape in Gmail's answers this pass (list pages, history records),
    /// set aside and never requested (HudsonGmail's WireValidation).
    public var unusableIDs = 0

    public init() {}
}

/// What a pass has done so far, for a progress line.
public struct SyncProgress: Sendable, Equatable {
    public var account: String
    public var backfilled: Int
    public var backfillEstimate: Int?
    public var bodiesHydrated: Int
    public var bodiesRemaining: Int
}

public actor SyncEngine {
    let api: any GmailAPI
    let onDemandAPI: any GmailAPI
    let database: SharedStore
    let email: String
    let pageSize: Int
    let hydrationBatch: Int
    let prefetchWindowDays: Int
    let now: @Sendable () -> Date
    let progress: (@Sendable (SyncProgress) -> Void)?
    private var isSyncing = false
    /// When this engine last asked Gmail's has:attachment (AttachmentCensus).
    private var lastCensus: Date?
    static let censusInterval: TimeInterval = 600
    /// Parked messages fetched again per pass, at most.
    static let parkedRetryBatch = 100

    /// - Parameters:
    ///   - api: the client for background work (polling, backfill, hydration).
    ///   - onDemandAPI: the client for `hydrate(messageID:)`, someone is waiting on it
    ///     (the interactive quota lane); `api` when nil.
    ///   - prefetchWindowDays: bodies are prefetched for mail this recent; 0 = all.
    ///
    /// The backfill window is not a parameter: it is fixed in the account row at consent
    /// (`after:<consented_at - lookback>`), so every pass and every process lists the same range.
    public init(
        api: any GmailAPI, database: SharedStore, account: String,
        pageSize: Int = 100, hydrationBatch: Int = 25, prefetchWindowDays: Int = 90,
        onDemandAPI: (any GmailAPI)? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) {
        self.api = api
        self.onDemandAPI = onDemandAPI ?? api
        self.database = database
        self.email = account
        self.pageSize = pageSize
        self.hydrationBatch = hydrationBatch
        self.prefetchWindowDays = prefetchWindowDays
        self.now = now
        self.progress = progress
    }

    /// One bounded pass. An all-zero report also means "coalesced": another pass was running.
    public func syncOnce(maxBackfillPages: Int = 5) async throws -> SyncReport {
        guard !isSyncing else { return SyncReport() }
        isSyncing = true
        defer { isSyncing = false }

        var report = SyncReport()
        var account = try await ensureCursor()
        try await refreshLabelsIfDue(account)
        let historyExpiredThisPass = try await pollHistory(account, report: &report)
        account = try currentAccount()
        // After an expiry the re-list is deferred to the next pass, so the caller sees the
        // reset before a backfill could flip it back to complete.
        if !historyExpiredThisPass && account.backfillState != .complete {
            try await backfill(account, maxPages: maxBackfillPages, report: &report)
            account = try currentAccount()
        }
        report.eventsApplied += try await settleRelist(account)
        report.backfillComplete = account.backfillState == .complete
        report.eventsApplied += try await retryParkedMessages(account)
        report.bodiesHydrated = try await hydrateBodies(account)
        // Gmail's own has:attachment for what backfill stored without a body (issue 37 §4):
        // a list call per 500 messages; a Gmail error leaves them guessed until a later pass.
        // After a pass that stored mail, else at most every ten minutes: a watch polls every
        // 30 s, and what a census could not decide would cost its list calls each time.
        let censusDue = lastCensus.map { now().timeIntervalSince($0) >= Self.censusInterval } ?? true
        if report.backfilledThisPass > 0 || report.eventsApplied > 0 || censusDue {
            lastCensus = now()
            _ = try await AttachmentCensus.decideGuessed(database: database, api: api, accountID: account.id)
        }
        let accountID = account.id
        report.parked = try database.write { store in
            try store.recordSyncPass(accountID: accountID)
            return try store.parkedCount(accountID: accountID)
        }
        // Between passes, so a WAL that readers or a long reader kept from starting over
        // does not grow from pass to pass; a reader still holding it just waits for the next.
        // Only once the WAL has outgrown automatic checkpoints (Store.checkpointWALIfOutgrown):
        // a checkpoint every pass would undo a catch-up's 64 MiB checkpoint interval.
        // `database.write` only takes the process's store mutex: no transaction is open on
        // the connection here, as a checkpoint requires (Connection.checkpointTruncating).
        _ = try database.write { try $0.checkpointWALIfOutgrown() }
        return report
    }

    /// Whether this account is caught up: backfill complete, a re-list settled, no body
    /// missing in the prefetch window and no message parked. A message or body that
    /// failed is not done: it waits for its retry (a parked body outside the window is
    /// forgotten by hydration, like any older body), unless the user dropped it: a
    /// dropped entry is never due, so it is in neither the work-list nor the count.
    public func isCaughtUp() throws -> Bool {
        let account = try currentAccount()
        guard account.backfillState == .complete else { return false }
        let since = prefetchCutoff()
        let accountID = account.id
        return try database.read { store in
            try store.messagesUnconfirmedByRelist(accountID: accountID, limit: 1).isEmpty
                && store.messagesNeedingBodies(accountID: accountID, since: since, limit: 1).isEmpty
                && store.parkedCount(accountID: accountID) == 0
        }
    }

    /// Whether a pass now would have work to do: backfill or a re-list unfinished, a body
    /// to fetch, or a parked message due. False when all that is left waits for a parked
    /// message's back-off (a watch then slows down, a catch-up stops).
    public func hasDueWork() throws -> Bool {
        let account = try currentAccount()
        guard account.backfillState == .complete else { return true }
        let since = prefetchCutoff()
        let accountID = account.id
        return try database.read { store in
            try !store.messagesUnconfirmedByRelist(accountID: accountID, limit: 1).isEmpty
                || !store.messagesNeedingBodies(accountID: accountID, since: since, limit: 1).isEmpty
                || !store.dueParkedMessages(accountID: accountID, stage: .message, limit: 1).isEmpty
        }
    }

    // MARK: - ensureCursor

    /// Records `profile.historyId` before the first list call: the cursor predates the
    /// listing, so no event can fall between them ("The cursor is recorded before the
    /// first list call, not after").
    func ensureCursor() async throws -> Account {
        let account = try currentAccount()
        if account.historyID != nil { return account }
        let profile = try await api.getProfile()
        let cursor = try parseHistoryID(profile.historyId)
        let accountID = account.id
        try database.write { _ = try $0.recordInitialCursor(accountID: accountID, historyID: cursor) }
        return try currentAccount()
    }

    /// labels.list, every pass (1 unit). History carries no record of a label created,
    /// renamed or deleted on another device (gmail-api.md §2.9, §2.10), so only a listing
    /// shows such a change, and it must show at once (issue 21 §2); the listing also
    /// confirms and retires this device's own label operations (Store.replaceLabels). Its
    /// start time goes with it: only a listing that began after Gmail answered an
    /// operation may retire it.
    func refreshLabelsIfDue(_ account: Account) async throws {
        let accountID = account.id
        let listedAt = try database.read { $0.now }
        let labels = try await api.listLabels().map {
            LabelInfo(id: $0.id, name: $0.name, kind: $0.type.flatMap(LabelInfo.Kind.init(rawValue:)),
                      messageListVisibility: $0.messageListVisibility, labelListVisibility: $0.labelListVisibility,
                      textColor: $0.color?.textColor, backgroundColor: $0.color?.backgroundColor)
        }
        try database.write { try $0.replaceLabels(accountID: accountID, with: labels, listedAt: listedAt) }
    }

    // MARK: - pollHistory

    /// Pages through history from the stored cursor with one fixed `startHistoryId`,
    /// applies each page (cursor untouched), then advances the cursor exactly once.
    /// Returns true when the cursor had expired and was reset.
    ///
    /// The cursor only ever moves to a history id Gmail gave as the mailbox's (the last
    /// page's `historyId`), never back, and never past what `getProfile` reports (issue 37
    /// §2): a page without one, with one before the cursor or the previous page's, or with
    /// one the profile contradicts fails the poll (`SyncError.invalidHistoryID`, 75) before
    /// anything of that page is written; a page HudsonGmail cannot read as documented fails
    /// it the same way. The one way back is the documented one: a cursor the profile shows
    /// to be past the mailbox (stored by an older Hudson) is reset like an expired cursor. A profile that cannot be read must not stop polling (issue 17 §0):
    /// then no record id is trusted — every message the page names is fetched again, so new
    /// mail still arrives — and the cursor stays where it was.
    func pollHistory(_ account: Account, report: inout SyncReport) async throws -> Bool {
        guard let cursor = account.historyID else { return false }
        let start = String(cursor)
        let accountID = account.id
        var pageToken: String?
        var latest = cursor
        // The newest history id getProfile reported during this poll, and whether every
        // page so far was within one.
        var profileBound: Int64?
        var vouched = true
        var seenTokens = Set<String>()
        repeat {
            let page: HistoryPage
            do {
                page = try await api.listHistory(startHistoryID: start, pageToken: pageToken)
            } catch let error as GmailError where pageToken != nil && Self.refusesPageToken(error) {
                // Gmail refused the token of its own previous page: the poll fails (75) and
                // moves nothing; the next one starts again from the cursor.
                throw GmailError.invalidResponse("Gmail refused the page token it gave (\(error))")
            } catch GmailError.notFound {
                // Only a 404 from history.list means the cursor aged out ("Cursor expiry").
                let fresh = try parseHistoryID(try await api.getProfile().historyId)
                try database.write { try $0.resetForExpiredCursor(accountID: accountID, freshHistoryID: fresh) }
                return true
            }
            let pageHistoryID = try parseHistoryID(page.historyId)
            if pageHistoryID < latest {
                // The mailbox says it is before the cursor: this page is wrong, or the cursor
                // is (a store whose cursor an older Hudson moved past Gmail's, issue 37).
                // getProfile decides; a cursor past the mailbox's is reset like an expired
                // one, with the re-list that settles what it skipped.
                if pageToken == nil, let current = try await currentHistoryID(), current < cursor {
                    try database.write { try $0.resetForExpiredCursor(accountID: accountID, freshHistoryID: current) }
                    return true
                }
                throw SyncError.invalidHistoryID(page.historyId)
            }
            // A page that moves nothing (the mailbox still at the cursor, which a profile
            // vouched for when it was stored) needs no profile: an idle poll costs no unit more.
            if vouched && pageHistoryID > cursor && pageHistoryID > (profileBound ?? 0) {
                profileBound = try await currentHistoryID()
                // A page past what getProfile reports is not vouched for: Gmail does not
                // promise the two reads agree at once, so this is not a failure, but nothing
                // of the page is trusted (every message it names is fetched again) and the
                // cursor waits, as when the profile cannot be read.
                vouched = profileBound.map { pageHistoryID <= $0 } ?? false
            }
            let mapped = HistoryMapping.map(page.history, trusted: vouched)
            report.unusableIDs += page.unusableIDs.count
            let changes = mapped.changes
            let applied = try database.write { try $0.applyHistoryChanges(changes, accountID: accountID) }
            report.eventsApplied += applied.applied
            let toFetch = applied.unknownMessageIDs + mapped.refetch.filter { !applied.unknownMessageIDs.contains($0) }
            if !toFetch.isEmpty {
                report.eventsApplied += try await fetchAndApply(toFetch, accountID: accountID)
            }
            latest = pageHistoryID
            pageToken = page.nextPageToken
            if let token = pageToken, !seenTokens.insert(token).inserted { break }  // a looping server
        } while pageToken != nil
        if vouched && latest > cursor {
            let end = latest
            try database.write { try $0.advanceCursor(accountID: accountID, to: end) }
        }
        return false
    }

    /// The mailbox's current history id from `getProfile`, or nil when Gmail's answer does
    /// not give one (unreadable, missing, a server error). A failure of the whole account,
    /// or of the network or the task, is thrown: it stops the pass like any other request's.
    private func currentHistoryID() async throws -> Int64? {
        do {
            return try parseHistoryID(try await api.getProfile().historyId)
        } catch let error as GmailError where Self.stopsPass(error) {
            throw error.unwrapped
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return nil
        }
    }

    /// Fetches messages (format=metadata) that a history page mentioned and the store
    /// lacks, or a parked message due again, and applies them through the version guard.
    /// A message Gmail calls gone or invalid is tombstoned (`isGone`). A
    /// failure of the message's own parks it, in the same transaction as the rest; one
    /// that is not (`stopsPass`) throws before anything is written, so the cursor stays
    /// and the next pass re-polls. Returns the number of messages stored.
    private func fetchAndApply(_ ids: [String], accountID: Int64) async throws -> Int {
        let results = await api.getMessages(ids: ids, format: "metadata")
        var snapshots: [MessageSnapshot] = []
        var failures: [ParkingFailure] = []
        var vanished: [String] = []
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                do {
                    snapshots.append(try SnapshotMapping.mapped(message))
                } catch {
                    failures.append(ParkingFailure(gmailID: id, stage: .message, error: String(describing: error)))
                }
            case .failure(let error)? where Self.isGone(error):
                vanished.append(id)
            case .failure(let error)? where Self.stopsPass(error):
                throw error.unwrapped
            case .failure(let error)?:
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: error.description))
            case nil:
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: "Gmail's batch answer left it out"))
            }
        }
        let parking = failures
        let report = try database.write { try $0.applySnapshots(snapshots, accountID: accountID, parking: parking) }
        for id in vanished {
            try database.write { _ = try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }
        }
        return report.applied
    }

    /// Whether a failure to fetch one message is not that message's own, so the pass
    /// stops (nothing written, nothing lost) instead of parking it: the network, a rate
    /// limit, a cancelled task, a token or permission Gmail refuses for the account, or a
    /// batch request that failed as a whole. A 5xx that outlasted the client's retries, a
    /// 400 or another 4xx, and an answer that cannot be read, for that message's own
    /// request or part, are the message's: it is parked and the pass goes on.
    static func stopsPass(_ error: GmailError) -> Bool {
        switch error {
        case .network, .rateLimited, .cancelled, .batchFailed: return true
        case .unauthorized, .authorizationRevoked, .forbidden, .server, .badRequest, .invalidResponse, .notFound:
            return error.isAccountWide
        }
    }

    /// Whether a list call that carried a page token Gmail gave was refused for it: a 400
    /// ("Invalid pageToken") or a 404. Only the token varies between such a call and the
    /// first page's, which Gmail answered.
    static func refusesPageToken(_ error: GmailError) -> Bool {
        switch error {
        case .notFound, .badRequest: return true
        default: return false
        }
    }

    /// Whether the answer to one message's `messages.get` says Gmail will never serve that
    /// id, so the message is confirmed gone, as if deleted (issue 37 §2), rather than
    /// parked to be asked again for ever (`GmailError.saysMessageGone`: a 404, a 400 calling
    /// the id invalid, an id Hudson would not send). A batch that failed as a whole
    /// (`batchFailed`) says nothing of its items and is not one.
    static func isGone(_ error: GmailError) -> Bool {
        error.saysMessageGone
    }

    // MARK: - parked messages

    /// Fetches again the parked messages whose back-off is over (at most
    /// `parkedRetryBatch`): stored, they leave the parked set; failing again, they wait
    /// longer. Returns the number stored.
    func retryParkedMessages(_ account: Account) async throws -> Int {
        let accountID = account.id
        let due = try database.read { try $0.dueParkedMessages(accountID: accountID, stage: .message, limit: Self.parkedRetryBatch) }
        guard !due.isEmpty else { return 0 }
        return try await fetchAndApply(due, accountID: accountID)
    }

    // MARK: - backfill

    /// One listed page, fetched and mapped, not yet stored.
    struct FetchedPage: Sendable {
        var listed: Int
        var snapshots: [MessageSnapshot]
        /// Listed messages whose fetch failed for a reason of their own: parked with the page.
        var failures: [ParkingFailure]
        var nextPageToken: String?
        var estimate: Int?
        /// Listed ids of a wrong shape, set aside unrequested.
        var unusableIDs = 0
    }

    /// Lists up to `maxPages` pages of the fixed window, fetching each message at
    /// format=metadata, one commit per page with a savepoint per message. Progress is
    /// stored with the page, so a quit resumes where it left off.
    ///
    /// Pipelined: while a page is being stored, the next one is listed, fetched and mapped
    /// (off this actor, on another core), so the network and the store overlap. Nothing
    /// of the next page is written before this page has committed its token.
    func backfill(_ start: Account, maxPages: Int, report: inout SyncReport) async throws {
        guard maxPages > 0 else { return }
        var account = start
        let accountID = account.id
        let query = account.backfillQuery
        var pendingToken = account.backfillPageToken
        var next: Task<Result<FetchedPage, any Error>, Never>? = fetchPage(token: pendingToken, query: query)
        defer { next?.cancel() }
        for index in 0..<maxPages {
            guard let pending = next else { break }
            let page: FetchedPage
            do {
                page = try await Self.result(of: pending).get()
            } catch let error as GmailError where pendingToken != nil && Self.refusesPageToken(error) {
                // Gmail refused a page token it gave: the listing starts over next pass.
                try database.write { try $0.restartBackfillListing(accountID: accountID) }
                return
            }
            pendingToken = page.nextPageToken
            next = page.nextPageToken != nil && index + 1 < maxPages
                ? fetchPage(token: page.nextPageToken, query: query) : nil
            let snapshots = page.snapshots
            let failures = page.failures
            let applied = try database.write {
                try $0.applyBackfillPage(snapshots, accountID: accountID, nextPageToken: page.nextPageToken,
                                         listed: page.listed, estimate: page.estimate, parking: failures)
            }
            report.backfilledThisPass += applied.applied
            report.unusableIDs += page.unusableIDs
            account = try currentAccount()
            progress?(SyncProgress(account: email, backfilled: account.backfillListed,
                                   backfillEstimate: account.backfillEstimate, bodiesHydrated: 0, bodiesRemaining: 0))
            if page.nextPageToken == nil { break }
        }
    }

    // MARK: - settling a re-list

    /// Once the re-list after an expired cursor is complete, fetches (format=metadata)
    /// the stored messages it did not list: a 404 tombstones one (deleted while history
    /// was expired), a snapshot goes through the version guard (moved to spam or trash).
    /// A message Gmail will not serve, or whose answer cannot be stored, is parked (its
    /// retry brings Gmail's state later) and settled, so the re-list ends and its queued
    /// changes may retire; a failure that is not the message's stops here, to be asked
    /// again next pass. Bounded per pass. Returns the number of messages changed.
    func settleRelist(_ account: Account, limit: Int = 500) async throws -> Int {
        let accountID = account.id
        let ids = try database.read { try $0.messagesUnconfirmedByRelist(accountID: accountID, limit: limit) }
        guard !ids.isEmpty else { return 0 }
        let results = await api.getMessages(ids: ids, format: "metadata")
        var changed = 0
        var settled: [String] = []
        var snapshots: [MessageSnapshot] = []
        var failures: [ParkingFailure] = []
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                do {
                    snapshots.append(try SnapshotMapping.mapped(message))
                } catch {
                    failures.append(ParkingFailure(gmailID: id, stage: .message, error: String(describing: error)))
                }
                settled.append(id)
            case .failure(let error)? where Self.isGone(error):
                if try database.write({ try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }) { changed += 1 }
            case .failure(let error)? where Self.stopsPass(error):
                throw error.unwrapped  // not this message's fault: ask again next pass
            case .failure(let error)?:
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: error.description))
                settled.append(id)
            case nil:
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: "Gmail's batch answer left it out"))
                settled.append(id)
            }
        }
        let parking = failures
        let applied = try database.write { store -> Int in
            let report = try store.applySnapshots(snapshots, accountID: accountID, parking: parking)
            try store.confirmRelisted(settled, accountID: accountID)
            return report.applied
        }
        return changed + applied
    }

    /// Starts listing and fetching one page off the actor.
    private func fetchPage(token: String?, query: String?) -> Task<Result<FetchedPage, any Error>, Never> {
        let api = self.api
        let pageSize = self.pageSize
        return Task.detached {
            do {
                return .success(try await Self.fetchPage(api: api, token: token, pageSize: pageSize, query: query))
            } catch {
                return .failure(error)
            }
        }
    }

    private static func fetchPage(api: any GmailAPI, token: String?, pageSize: Int, query: String?) async throws -> FetchedPage {
        let page = try await api.listMessages(pageToken: token, maxResults: pageSize, query: query)
        let ids = page.messages.map(\.id)
        let results = ids.isEmpty ? [:] : await api.getMessages(ids: ids, format: "metadata")
        var snapshots: [MessageSnapshot] = []
        var failures: [ParkingFailure] = []
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                do {
                    snapshots.append(try SnapshotMapping.mapped(message))
                } catch {
                    failures.append(ParkingFailure(gmailID: id, stage: .message, error: String(describing: error)))
                }
            case .failure(let error)? where isGone(error):
                continue  // gone since it was listed, or an id Gmail calls invalid
            case .failure(let error)? where stopsPass(error):
                // Not this message's fault: leave the token where it is and re-list later.
                throw error.unwrapped
            case .failure(let error)?:
                // The message's own (a 5xx every time, a garbled answer, a 4xx): skipping it
                // would lose it for good as the listing moves on, and stopping would stall
                // the listing for as long as it fails. It is parked with the page.
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: error.description))
            case nil:
                failures.append(ParkingFailure(gmailID: id, stage: .message, error: "Gmail's batch answer left it out"))
            }
        }
        return FetchedPage(listed: ids.count, snapshots: snapshots, failures: failures, nextPageToken: page.nextPageToken,
                           estimate: page.resultSizeEstimate, unusableIDs: page.unusableIDs.count)
    }

    /// Waits for a prefetch, cancelling it if this task is cancelled meanwhile.
    private static func result<T: Sendable>(of task: Task<T, Never>) async -> T {
        await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    // MARK: - hydration

    func prefetchCutoff() -> Int64? {
        guard prefetchWindowDays > 0 else { return nil }
        return Int64((now().timeIntervalSince1970 - Double(prefetchWindowDays) * 86_400) * 1000)
    }

    /// Bodies fetched in one go of a hydration pipeline: at most this many are in memory
    /// and unstored while the previous ones are being stored.
    static let hydrationChunk = 100

    /// One chunk of format=full fetches, mapped, not yet stored.
    struct FetchedBodies: Sendable {
        var hydrations: [Hydration] = []
        var notFound: [String] = []
        var failed: [ParkingFailure] = []
        var cancelled = false
        /// A failure that is not one message's: the rest waits for the next pass.
        var stop: GmailError?
    }

    /// Fetches bodies newest first within the prefetch window, `hydrationBatch` per pass.
    /// Errors are caught per message — one bad id must never stall the other 24 — and a
    /// failed body is parked in the store (Parked.swift) with growing back-off, so it is
    /// retried by later passes and processes rather than forgotten or retried at once; a
    /// 404 tombstones the message, or it would head the work-list forever.
    ///
    /// Pipelined like backfill: chunks of `hydrationChunk` are fetched and mapped off the
    /// actor while the previous chunk is stored, each chunk in one transaction with a
    /// savepoint per message.
    func hydrateBodies(_ account: Account) async throws -> Int {
        let accountID = account.id
        let since = prefetchCutoff()
        let batch = hydrationBatch
        if let since { try database.write { try $0.unparkBodies(accountID: accountID, before: since) } }
        let ids = try database.read { try $0.messagesNeedingBodies(accountID: accountID, since: since, limit: batch) }
        guard !ids.isEmpty else { return 0 }
        let chunks = stride(from: 0, to: ids.count, by: Self.hydrationChunk).map {
            Array(ids[$0..<min($0 + Self.hydrationChunk, ids.count)])
        }
        let keepRaw = account.keepRaw
        var next: Task<FetchedBodies, Never>? = fetchBodies(chunks[0], keepRaw: keepRaw)
        defer { next?.cancel() }
        var hydrated = 0
        for index in chunks.indices {
            guard let pending = next else { break }
            let fetched = await Self.result(of: pending)
            next = index + 1 < chunks.count ? fetchBodies(chunks[index + 1], keepRaw: keepRaw) : nil
            for id in fetched.notFound {
                try database.write { _ = try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }
            }
            // One commit for the chunk, a savepoint per message: a message whose write
            // fails is rolled back alone and parked, like one whose fetch failed.
            let hydrations = fetched.hydrations
            let failed = fetched.failed
            let stored = hydrations.isEmpty && failed.isEmpty ? HydrationReport() : try database.write {
                try $0.applyHydrations(hydrations, accountID: accountID, parking: failed)
            }
            hydrated += stored.saved.count
            if fetched.cancelled { throw CancellationError() }
            if let stop = fetched.stop { throw stop }
        }
        if let progress {
            // Counting what remains walks the work-list: only when someone shows it.
            let remaining = try database.read { try $0.countMessagesNeedingBodies(accountID: accountID, since: since) }
            progress(SyncProgress(account: email, backfilled: account.backfillListed, backfillEstimate: account.backfillEstimate,
                                  bodiesHydrated: hydrated, bodiesRemaining: remaining))
        }
        return hydrated
    }

    /// Starts fetching and mapping one chunk of bodies off the actor. An account that keeps
    /// sources fetches `format=raw` instead of `format=full`: the same 5 units a message
    /// (gmail-api.md §3), the body parsed here, the source kept (issue 24 §1).
    private func fetchBodies(_ ids: [String], keepRaw: Bool) -> Task<FetchedBodies, Never> {
        let api = self.api
        return Task.detached {
            let results = await api.getMessages(ids: ids, format: keepRaw ? "raw" : "full")
            var fetched = FetchedBodies()
            for id in ids {
                switch results[id] {
                case .success(let message)? where keepRaw:
                    guard let raw = message.raw else {
                        fetched.failed.append(ParkingFailure(gmailID: id, stage: .body, error: "no raw message in the response"))
                        continue
                    }
                    let source = Base64.decode(raw)
                    fetched.hydrations.append(Hydration(gmailID: id, snapshot: nil, body: BodyMapping.body(fromSource: source),
                                                        source: source))
                case .success(let message)?:
                    fetched.hydrations.append(Hydration(gmailID: id, snapshot: SnapshotMapping.snapshot(from: message),
                                                        body: BodyMapping.body(from: message)))
                case .failure(let error)? where Self.isGone(error):
                    fetched.notFound.append(id)
                case .failure(.cancelled)?:
                    fetched.cancelled = true
                case .failure(let error)? where Self.stopsPass(error):
                    // Not this body's fault: it stays in the work-list for the next pass.
                    fetched.stop = fetched.stop ?? error
                case .failure(.invalidResponse)?:
                    // The format=full answer cannot be decoded (Foundation's JSON decoder
                    // refuses nesting as deep as a MIME bomb's parts): the body comes from
                    // format=raw, which RFC822's parser bounds itself. Only the body is
                    // stored; labels and headers stay as the last snapshot gave them.
                    do {
                        let message = try await api.getMessage(id: id, format: "raw")
                        guard let raw = message.raw else { throw GmailError.invalidResponse("no raw message in the response") }
                        fetched.hydrations.append(Hydration(gmailID: id, snapshot: nil, body: BodyMapping.body(fromRaw: raw)))
                    } catch GmailError.cancelled {
                        fetched.cancelled = true
                    } catch is CancellationError {
                        fetched.cancelled = true
                    } catch let error as GmailError where Self.stopsPass(error) {
                        fetched.stop = fetched.stop ?? error.unwrapped
                    } catch {
                        fetched.failed.append(ParkingFailure(gmailID: id, stage: .body, error: String(describing: error)))
                    }
                case .failure(let error)?:
                    fetched.failed.append(ParkingFailure(gmailID: id, stage: .body, error: error.description))
                case nil:
                    fetched.failed.append(ParkingFailure(gmailID: id, stage: .body, error: "Gmail's batch answer left it out"))
                }
            }
            return fetched
        }
    }

    /// The same pipeline for one message, on demand (someone opened it). It rethrows
    /// everything but an answer that says the message is gone (`isGone`), which tombstones
    /// it and returns false: a single call has no "next id" to fall through to.
    public func hydrate(messageID: String) async throws -> Bool {
        let account = try currentAccount()
        let accountID = account.id
        do {
            if account.keepRaw { return try await persistRaw(messageID, accountID: accountID, api: onDemandAPI, keep: true) }
            let message: GmailMessage
            do {
                message = try await onDemandAPI.getMessage(id: messageID, format: "full")
            } catch GmailError.invalidResponse {
                return try await persistRaw(messageID, accountID: accountID, api: onDemandAPI)
            }
            return try persistFull(message, accountID: accountID)
        } catch let error as GmailError where Self.isGone(error) {
            try database.write { _ = try $0.deleteVanishedMessage(gmailID: messageID, accountID: accountID) }
            return false
        }
    }

    /// The body from `format=raw`, for a message whose `format=full` answer cannot be
    /// decoded: Foundation's JSON decoder refuses nesting as deep as a MIME bomb's parts
    /// (hundreds of levels), while RFC822's parser bounds the depth itself. Only the body
    /// is stored; the message's labels and headers stay as the last snapshot gave them.
    /// With `keep`, the source is stored too (an account that keeps sources).
    private func persistRaw(_ id: String, accountID: Int64, api: any GmailAPI, keep: Bool = false) async throws -> Bool {
        let message = try await api.getMessage(id: id, format: "raw")
        guard let raw = message.raw else { throw GmailError.invalidResponse("no raw message in the response") }
        let source = Base64.decode(raw)
        let body = BodyMapping.body(fromSource: source)
        return try database.write {
            try $0.applyHydration(nil, body: body, gmailID: id, accountID: accountID, source: keep ? source : nil)
        }
    }

    /// Stores a format=full message: its snapshot (version-guarded) and its body.
    private func persistFull(_ message: GmailMessage, accountID: Int64) throws -> Bool {
        let snapshot = SnapshotMapping.snapshot(from: message)
        let body = BodyMapping.body(from: message)
        let id = message.id
        return try database.write { try $0.applyHydration(snapshot, body: body, gmailID: id, accountID: accountID) }
    }

    // MARK: - helpers

    func currentAccount() throws -> Account {
        let email = self.email
        guard let account = try database.read({ try $0.account(email: email) }) else {
            throw SyncError.unknownAccount(email)
        }
        return account
    }
}
