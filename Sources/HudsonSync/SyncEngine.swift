/*!
 The read-path actor (sync-engine-reference.md): one bounded pass, in this order,

   ensureCursor → pollHistory → backfill (≤ maxBackfillPages) → settle a re-list → hydrateBodies (≤ hydrationBatch)

 so the caller controls cadence and nothing runs unbounded in the background. It owns
 no state of its own between passes: the cursor, the backfill window and token, and the
 bodies still missing all live in the store, so a crash resumes from what it says.
 Single-flight: a second call while a pass runs returns an empty report at once
 (actors are re-entrant, so the guard is explicit).
 */
import Foundation
import HudsonGmail
import HudsonStore

public struct SyncReport: Sendable, Equatable {
    public var backfilledThisPass = 0
    public var eventsApplied = 0
    public var bodiesHydrated = 0
    public var backfillComplete = false

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
    let database: HudsonDatabase
    let email: String
    let pageSize: Int
    let hydrationBatch: Int
    let prefetchWindowDays: Int
    let now: @Sendable () -> Date
    let progress: (@Sendable (SyncProgress) -> Void)?
    /// How often labels.list is refreshed (1 unit; names change rarely).
    let labelRefreshInterval: TimeInterval = 600

    private var isSyncing = false
    /// Messages whose body fetch failed in this process; skipped so they cannot stall
    /// the work-list. They are tried again by the next process.
    private var failedHydrations = Set<String>()

    /// - Parameters:
    ///   - api: the client for background work (polling, backfill, hydration).
    ///   - onDemandAPI: the client for `hydrate(messageID:)`, someone is waiting on it
    ///     (the interactive quota lane); `api` when nil.
    ///   - prefetchWindowDays: bodies are prefetched for mail this recent; 0 = all.
    ///
    /// The backfill window is not a parameter: it is fixed in the account row at consent
    /// (`after:<consented_at - lookback>`), so every pass and every process lists the same range.
    public init(
        api: any GmailAPI, database: HudsonDatabase, account: String,
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
        report.bodiesHydrated = try await hydrateBodies(account)
        let accountID = account.id
        try database.write { try $0.recordSyncPass(accountID: accountID) }
        // Between passes, so a WAL that readers or a long reader kept from starting over
        // does not grow from pass to pass; a reader still holding it just waits for the next.
        // Only once the WAL has outgrown automatic checkpoints (Store.checkpointWALIfOutgrown):
        // a checkpoint every pass would undo a catch-up's 64 MiB checkpoint interval.
        // `database.write` only takes the process's store mutex: no transaction is open on
        // the connection here, as a checkpoint requires (Connection.checkpointTruncating).
        _ = try database.write { try $0.checkpointWALIfOutgrown() }
        return report
    }

    /// Whether this account is caught up: backfill complete, a re-list settled, and no
    /// body missing in the prefetch window (except those that failed in this process).
    public func isCaughtUp() throws -> Bool {
        let account = try currentAccount()
        guard account.backfillState == .complete else { return false }
        let since = prefetchCutoff()
        let accountID = account.id
        if try !database.read({ try $0.messagesUnconfirmedByRelist(accountID: accountID, limit: 1) }).isEmpty { return false }
        let failed = failedHydrations
        let remaining = try database.read {
            try $0.messagesNeedingBodies(accountID: accountID, since: since, limit: failed.count + 1)
        }
        return remaining.allSatisfy { failed.contains($0) }
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

    func refreshLabelsIfDue(_ account: Account) async throws {
        let accountID = account.id
        let unnamed = try database.read { store in
            try store.labels(accountID: accountID).contains { $0.name == nil }
        }
        let nowMilliseconds = Int64(now().timeIntervalSince1970 * 1000)
        let due = account.labelsSyncedAt.map { nowMilliseconds - $0 > Int64(labelRefreshInterval * 1000) } ?? true
        guard due || unnamed else { return }
        let labels = try await api.listLabels().map {
            LabelInfo(id: $0.id, name: $0.name, kind: $0.type.flatMap(LabelInfo.Kind.init(rawValue:)),
                      messageListVisibility: $0.messageListVisibility, labelListVisibility: $0.labelListVisibility,
                      textColor: $0.color?.textColor, backgroundColor: $0.color?.backgroundColor)
        }
        try database.write { try $0.replaceLabels(accountID: accountID, with: labels) }
    }

    // MARK: - pollHistory

    /// Pages through history from the stored cursor with one fixed `startHistoryId`,
    /// applies each page (cursor untouched), then advances the cursor exactly once.
    /// Returns true when the cursor had expired and was reset.
    func pollHistory(_ account: Account, report: inout SyncReport) async throws -> Bool {
        guard let cursor = account.historyID else { return false }
        let start = String(cursor)
        let accountID = account.id
        var pageToken: String?
        var latest: Int64?
        var seenTokens = Set<String>()
        repeat {
            let page: HistoryPage
            do {
                page = try await api.listHistory(startHistoryID: start, pageToken: pageToken)
            } catch GmailError.notFound {
                // Only a 404 from history.list means the cursor aged out ("Cursor expiry").
                let fresh = try parseHistoryID(try await api.getProfile().historyId)
                try database.write { try $0.resetForExpiredCursor(accountID: accountID, freshHistoryID: fresh) }
                return true
            }
            let changes = try HistoryMapping.changes(from: page.history)
            let applied = try database.write { try $0.applyHistoryChanges(changes, accountID: accountID) }
            report.eventsApplied += applied.applied
            if !applied.unknownMessageIDs.isEmpty {
                report.eventsApplied += try await fetchAndApply(applied.unknownMessageIDs, accountID: accountID)
            }
            if let id = page.historyId { latest = max(latest ?? 0, try parseHistoryID(id)) }
            pageToken = page.nextPageToken
            if let token = pageToken, !seenTokens.insert(token).inserted { break }  // a looping server
        } while pageToken != nil
        if let latest {
            try database.write { try $0.advanceCursor(accountID: accountID, to: latest) }
        }
        return false
    }

    /// Fetches messages a history page mentioned but the store lacks (format=metadata)
    /// and applies them. A 404 is expected and silent: the message vanished between the
    /// event and the fetch. Other failures throw, so the cursor stays and the next pass
    /// re-polls.
    private func fetchAndApply(_ ids: [String], accountID: Int64) async throws -> Int {
        let results = await api.getMessages(ids: ids, format: "metadata")
        var snapshots: [MessageSnapshot] = []
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                if let snapshot = SnapshotMapping.snapshot(from: message) { snapshots.append(snapshot) }
            case .failure(.notFound)?, nil:
                continue
            case .failure(let error)?:
                throw error
            }
        }
        let report = try database.write { try $0.applySnapshots(snapshots, accountID: accountID) }
        return report.applied
    }

    // MARK: - backfill

    /// One listed page, fetched and mapped, not yet stored.
    struct FetchedPage: Sendable {
        var listed: Int
        var snapshots: [MessageSnapshot]
        var nextPageToken: String?
        var estimate: Int?
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
        var next: Task<Result<FetchedPage, any Error>, Never>? = fetchPage(token: account.backfillPageToken, query: query)
        defer { next?.cancel() }
        for index in 0..<maxPages {
            guard let pending = next else { break }
            let page = try await Self.result(of: pending).get()
            next = page.nextPageToken != nil && index + 1 < maxPages
                ? fetchPage(token: page.nextPageToken, query: query) : nil
            let snapshots = page.snapshots
            let applied = try database.write {
                try $0.applyBackfillPage(snapshots, accountID: accountID, nextPageToken: page.nextPageToken,
                                         listed: page.listed, estimate: page.estimate)
            }
            report.backfilledThisPass += applied.applied
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
    /// Bounded per pass; a transient failure leaves the rest for the next pass. Returns
    /// the number of messages changed.
    func settleRelist(_ account: Account, limit: Int = 500) async throws -> Int {
        let accountID = account.id
        let ids = try database.read { try $0.messagesUnconfirmedByRelist(accountID: accountID, limit: limit) }
        guard !ids.isEmpty else { return 0 }
        let results = await api.getMessages(ids: ids, format: "metadata")
        var changed = 0
        var settled: [String] = []
        var snapshots: [MessageSnapshot] = []
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                if let snapshot = SnapshotMapping.snapshot(from: message) { snapshots.append(snapshot) }
                settled.append(id)
            case .failure(.notFound)?:
                if try database.write({ try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }) { changed += 1 }
            case .failure(.invalidResponse(let detail))?:
                throw GmailError.invalidResponse(detail)  // a garbled answer: ask again next pass
            case .failure(let error)? where error.isRetryable || error == .cancelled:
                throw error
            case .failure?, nil:
                settled.append(id)  // Gmail will not serve it: keep what is stored
            }
        }
        let applied = try database.write { store -> Int in
            let report = try store.applySnapshots(snapshots, accountID: accountID)
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
        for id in ids {
            switch results[id] {
            case .success(let message)?:
                if let snapshot = SnapshotMapping.snapshot(from: message) { snapshots.append(snapshot) }
            case .failure(let error)? where error.isRetryable || error == .cancelled:
                // Not this message's fault: leave the token where it is and re-list later.
                throw error
            case .failure(.invalidResponse(let detail))?:
                // A garbled answer (a proxy's page, a cut body) says nothing about the
                // message: skipping it would lose it for good, as the listing moves on.
                throw GmailError.invalidResponse(detail)
            case .failure?, nil:
                continue  // gone (404) or a message Gmail cannot serve: skip it, keep going
            }
        }
        return FetchedPage(listed: ids.count, snapshots: snapshots, nextPageToken: page.nextPageToken,
                           estimate: page.resultSizeEstimate)
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
        var failed: [String] = []
        var cancelled = false
    }

    /// Fetches bodies newest first within the prefetch window, `hydrationBatch` per pass.
    /// Errors are caught per message — one bad id must never stall the other 24 — and a
    /// 404 tombstones the message, or it would head the work-list forever.
    ///
    /// Pipelined like backfill: chunks of `hydrationChunk` are fetched and mapped off the
    /// actor while the previous chunk is stored, each chunk in one transaction with a
    /// savepoint per message.
    func hydrateBodies(_ account: Account) async throws -> Int {
        let accountID = account.id
        let since = prefetchCutoff()
        let failed = failedHydrations
        let batch = hydrationBatch
        let ids = Array(try database.read {
            try $0.messagesNeedingBodies(accountID: accountID, since: since, limit: batch + failed.count)
        }.filter { !failed.contains($0) }.prefix(batch))
        guard !ids.isEmpty else { return 0 }
        let chunks = stride(from: 0, to: ids.count, by: Self.hydrationChunk).map {
            Array(ids[$0..<min($0 + Self.hydrationChunk, ids.count)])
        }
        var next: Task<FetchedBodies, Never>? = fetchBodies(chunks[0])
        defer { next?.cancel() }
        var hydrated = 0
        for index in chunks.indices {
            guard let pending = next else { break }
            let fetched = await Self.result(of: pending)
            next = index + 1 < chunks.count ? fetchBodies(chunks[index + 1]) : nil
            for id in fetched.notFound {
                try database.write { _ = try $0.deleteVanishedMessage(gmailID: id, accountID: accountID) }
            }
            for id in fetched.failed { failedHydrations.insert(id) }
            // One commit for the chunk, a savepoint per message: a message whose write
            // fails is rolled back alone and skipped, like one whose fetch failed.
            let hydrations = fetched.hydrations
            let stored = hydrations.isEmpty ? HydrationReport() : try database.write {
                try $0.applyHydrations(hydrations, accountID: accountID)
            }
            for failure in stored.failures { failedHydrations.insert(failure.messageID) }
            hydrated += stored.saved.count
            if fetched.cancelled { throw CancellationError() }
        }
        if let progress {
            // Counting what remains walks the work-list: only when someone shows it.
            let remaining = try database.read { try $0.countMessagesNeedingBodies(accountID: accountID, since: since) }
            progress(SyncProgress(account: email, backfilled: account.backfillListed, backfillEstimate: account.backfillEstimate,
                                  bodiesHydrated: hydrated, bodiesRemaining: remaining))
        }
        return hydrated
    }

    /// Starts fetching and mapping one chunk of bodies off the actor.
    private func fetchBodies(_ ids: [String]) -> Task<FetchedBodies, Never> {
        let api = self.api
        return Task.detached {
            let results = await api.getMessages(ids: ids, format: "full")
            var fetched = FetchedBodies()
            for id in ids {
                switch results[id] {
                case .success(let message)?:
                    fetched.hydrations.append(Hydration(gmailID: id, snapshot: SnapshotMapping.snapshot(from: message),
                                                        body: BodyMapping.body(from: message)))
                case .failure(.notFound)?:
                    fetched.notFound.append(id)
                case .failure(.cancelled)?:
                    fetched.cancelled = true
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
                    } catch {
                        fetched.failed.append(id)
                    }
                case .failure?, nil:
                    fetched.failed.append(id)
                }
            }
            return fetched
        }
    }

    /// The same pipeline for one message, on demand (someone opened it). It rethrows
    /// everything but a 404, which tombstones the message and returns false: a single
    /// call has no "next id" to fall through to.
    public func hydrate(messageID: String) async throws -> Bool {
        let accountID = try currentAccount().id
        do {
            let message: GmailMessage
            do {
                message = try await onDemandAPI.getMessage(id: messageID, format: "full")
            } catch GmailError.invalidResponse {
                return try await persistRaw(messageID, accountID: accountID, api: onDemandAPI)
            }
            return try persistFull(message, accountID: accountID)
        } catch GmailError.notFound {
            try database.write { _ = try $0.deleteVanishedMessage(gmailID: messageID, accountID: accountID) }
            return false
        }
    }

    /// The body from `format=raw`, for a message whose `format=full` answer cannot be
    /// decoded: Foundation's JSON decoder refuses nesting as deep as a MIME bomb's parts
    /// (hundreds of levels), while RFC822's parser bounds the depth itself. Only the body
    /// is stored; the message's labels and headers stay as the last snapshot gave them.
    private func persistRaw(_ id: String, accountID: Int64, api: any GmailAPI) async throws -> Bool {
        let message = try await api.getMessage(id: id, format: "raw")
        guard let raw = message.raw else { throw GmailError.invalidResponse("no raw message in the response") }
        let body = BodyMapping.body(fromRaw: raw)
        return try database.write { try $0.applyHydration(nil, body: body, gmailID: id, accountID: accountID) }
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
