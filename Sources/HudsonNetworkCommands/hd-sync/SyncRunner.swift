/*!
 `hd-sync`'s loop: for each account, under a cross-process lock, a pass is
 send → flush → syncOnce → retire (the outbox goes first, under the account's send lock,
 because a person is waiting for that mail; then the label queue, so triage reaches Gmail
 before more is fetched; retirement follows the poll that brings the echoes, which also
 bring the sent messages into the store). Modes: one pass,
 `--catch-up` (passes until backfill is complete, bodies in the window are stored and
 the queue is empty), and `--watch` (2 s between passes while catching up, 30 s after,
 until SIGINT or SIGTERM, which stop between passes — a pass is bounded, so that is soon).
 A watch outlives every failure the exit table calls temporary (75: a server error, a
 garbled answer, the network, a busy store): it says so and tries again, waiting twice
 as long after each failed pass in a row, up to five minutes; what needs the user
 (another process on the account, credentials, a refused grant) it says once and waits
 out, account by account (SyncWatch).

 No step stops the history poll (issue 17 §0): a send or a flush that fails is told
 after the poll has run, so new mail keeps arriving whatever the queue meets. Messages
 Gmail would not serve are parked by the engine and told once each, with their error,
 on standard error; the report counts them (`--json` lists them) and `hd-pending
 --parked` shows them. A catch-up asks again at once for those parked before it began,
 and gives those parked during it two more tries before it says it is not caught up.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore
import HudsonSync
import Synchronization

public struct PassTotals: Sendable, Equatable {
    public var backfilled = 0
    public var eventsApplied = 0
    public var bodiesHydrated = 0
    public var backfillComplete = false
    public var flushed = 0
    public var retired = 0
    public var dropped = 0
    /// Outbox entries Gmail has now (sent, or found by the probe).
    public var sent = 0
    /// Outbox entries Gmail refused for good.
    public var sendFailures = 0
    /// The messages parked after a failure when the pass ended.
    public var parked: [ParkedMessage] = []
    /// The actions the rules file took on new mail (hd-filters(1)), for hd-undo.
    public var ruleActions: [Int64] = []
    /// The changes those actions queued.
    public var ruleChanges = 0
    /// Ids of a wrong shape in Gmail's answers, set aside and never requested (issue 37 §2).
    public var unusableIDs = 0
    /// The action of the snoozed threads this pass woke (SnoozeWake.swift), for hd-undo.
    public var wakeActions: [Int64] = []

    public init() {}

    var didWork: Bool { ruleChanges + backfilled + eventsApplied + bodiesHydrated + flushed + retired + dropped + sent + sendFailures > 0 }

    mutating func add(_ report: SyncReport, _ flush: FlushReport, retired extra: Int, outbox: OutboxReport) {
        sent += outbox.sent + outbox.confirmed
        sendFailures += outbox.failed
        backfilled += report.backfilledThisPass
        eventsApplied += report.eventsApplied
        bodiesHydrated += report.bodiesHydrated
        backfillComplete = report.backfillComplete
        flushed += flush.flushed
        retired += flush.retired + extra
        dropped += flush.dropped
        unusableIDs += report.unusableIDs
    }


    public func record(email: String) -> Record {
        Record(
            type: "sync", id: email,
            fields: [("backfilled", .int(Int64(backfilled))), ("events_applied", .int(Int64(eventsApplied))),
                     ("bodies_hydrated", .int(Int64(bodiesHydrated))), ("backfill_complete", .bool(backfillComplete)),
                     ("flushed", .int(Int64(flushed))), ("retired", .int(Int64(retired))), ("dropped", .int(Int64(dropped))),
                     ("sent", .int(Int64(sent))), ("send_failures", .int(Int64(sendFailures))),
                     ("parked", .int(Int64(parked.count))), ("parked_messages", .array(parked.map { Records.parked($0, now: LocalTime.nowMilliseconds).json })),
                     ("rule_actions", .array(ruleActions.map { .string("action:\($0)") })), ("rule_changes", .int(Int64(ruleChanges))),
                     ("unusable_ids", .int(Int64(unusableIDs)))],
            columns: ["\(backfilled) backfilled", "\(eventsApplied) events", "\(bodiesHydrated) bodies",
                      backfillComplete ? "backfill complete" : "backfill in progress",
                      "\(flushed) flushed", "\(retired) retired", "\(dropped) dropped", "\(sent) sent",
                      "\(parked.count) parked"]
                + (ruleActions.isEmpty ? [] : ["rules: \(ruleActions.map { "action:\($0)" }.joined(separator: " ")) (\(ruleChanges) changes)"]))
    }
}

/// Set by SIGINT/SIGTERM; the loop stops between passes.
let stopRequested = Atomic<Bool>(false)

public enum SyncMode: Sendable { case once, catchUp, watch }

@MainActor
public final class SyncRunner {
    let invocation: Invocation
    let mode: SyncMode
    let prefetchDays: Int
    let maxPages: Int
    let lookbackDays: Int?
    let verbose: Bool
    let retryParked: Bool
    /// `--exec CMD`: run after each pass of a watch that stored new mail.
    let newMailCommand: String?

    /// The page cache of a catch-up's connection.
    static let catchUpCacheKiB = 64 * 1024
    /// The page cache of a pass or a watch: SQLite's default (2,000 KiB), not the 64 MiB
    /// other writing commands get, so a long-running watch stays small.
    static let passCacheKiB = 2_000
    /// WAL pages (4 KiB) between a catch-up's checkpoints.
    static let catchUpCheckpointPages = 16 * 1024

    /// - Parameter retryParked: make every parked message due before the first pass
    ///   (`--retry-parked`); a catch-up always does.
    public init(invocation: Invocation, mode: SyncMode, prefetchDays: Int, maxPages: Int, lookbackDays: Int?, verbose: Bool,
                retryParked: Bool = false, newMailCommand: String? = nil) {
        self.newMailCommand = newMailCommand
        self.invocation = invocation
        self.mode = mode
        self.prefetchDays = prefetchDays
        self.maxPages = maxPages
        self.lookbackDays = lookbackDays
        self.verbose = verbose
        self.retryParked = retryParked
    }

    public func run() async throws -> ExitStatus {
        signal(SIGINT) { _ in
            stopRequested.store(true, ordering: .relaxed)
            signal(SIGINT, SIG_DFL)  // a second ^C stops at once
        }
        signal(SIGTERM) { _ in
            stopRequested.store(true, ordering: .relaxed)
            signal(SIGTERM, SIG_DFL)
        }
        let storePath = try invocation.storePath()
        // A catch-up writes the full-text index's segments and merges them; with SQLite's
        // 2 MiB page cache it kept reading back pages it had just written. 64 MiB is a
        // fixed cost, whatever the size of the mailbox. It also checkpoints every 64 MiB
        // of WAL instead of every 4 MiB: the pages it rewrites often (the index's
        // structure, rollups) are copied to the database once per checkpoint, not sixteen
        // times, and there are sixteen times fewer fsyncs.
        let catchUp = mode == .catchUp
        let cacheKiB = catchUp ? Self.catchUpCacheKiB : Self.passCacheKiB
        // The cache's memory, reserved before the first open: every `hd-mark` push (another
        // process writing) empties the cache, and refilled from malloc it grew a catch-up by
        // tens of MiB per refill (Store.reservePageCache).
        Store.reservePageCache(kibibytes: cacheKiB)
        let database = SharedStore(try invocation.openStore(
            .readWrite, cacheKiB: cacheKiB,
            checkpointPages: catchUp ? Self.catchUpCheckpointPages : nil))
        let invocation = self.invocation
        let emails = try database.read { store in
            try invocation.selectedAccount(in: store).map { [$0.email] } ?? store.accounts().map(\.email)
        }
        guard !emails.isEmpty else { throw CommandFailure(.notAuthorized, "no accounts; run hd-auth login") }
        let endpoints = try GmailEndpoints(environment: invocation.environment)
        let configDirectory = try invocation.configDirectory()
        let sink = invocation.makeSink()

        if mode == .watch {
            try await SyncWatch(runner: self, database: database, storePath: storePath, configDirectory: configDirectory,
                                endpoints: endpoints, sink: sink).run(emails: emails)
            try sink.finish()
            return .success
        }

        var workers: [AccountWorker] = []
        var locks: [SyncLock] = []
        for email in emails {
            guard let lock = try SyncLock(storePath: storePath, email: email) else {
                // Another hd-sync is on this account: this one coalesces to an empty pass.
                if verbose { invocation.warn("\(email): another hd-sync is running") }
                try sink.emit(PassTotals().record(email: email))
                continue
            }
            locks.append(lock)
            let access = try GmailAccess(email: email, configDirectory: configDirectory, endpoints: endpoints,
                                         patience: mode == .once ? .interactive : .unattended)
            try setUp(email: email, database: database)
            // The rules file, checked against the account's labels: one that does not load
            // stops hd-sync here (exit 78), before anything is fetched (hd-filters(1)).
            let rules = try loadRules(email: email, database: database)
            workers.append(makeWorker(email: email, access: access, database: database, storePath: storePath, rules: rules))
        }

        switch mode {
        case .once:
            var failure: (any Error)?
            for worker in workers {
                let (totals, stepFailure) = try await worker.pass(maxPages: maxPages)
                worker.progress.finish()
                try sink.emit(totals.record(email: worker.email))
                failure = failure ?? stepFailure
            }
            // The report is out and every account was polled; now the exit status says what failed.
            if let failure {
                try sink.finish()
                throw failure
            }
        case .catchUp:
            for worker in workers {
                let totals = try await worker.catchUp(maxPages: maxPages)
                try sink.emit(totals.record(email: worker.email))
                if stopRequested.load(ordering: .relaxed) { break }
                // Caught up, mail older than the prefetch window has no body: said here, with
                // what storing them costs, not only by a search that then misses words.
                let email = worker.email
                let missing = try worker.database.read { store in
                    try store.account(email: email).map { try store.messagesWithoutBody(accountID: $0.id) } ?? 0
                }
                if missing > 0 && prefetchDays > 0 {
                    invocation.warn("\(email): \(missing) message(s) have no stored body (bodies are fetched for the last \(prefetchDays) days),"
                                    + " so their words are found only in subjects, addresses and snippets; " + SearchNotes.bodyCost(messages: missing))
                }
            }
        case .watch:
            break  // SyncWatch, above
        }
        try sink.finish()
        _ = locks
        return .success
    }

    /// What the options ask of an account once, under its sync lock, before its first
    /// pass: `--lookback-days` widens its window, `--retry-parked` (and every catch-up)
    /// makes its parked messages due.
    func setUp(email: String, database: SharedStore) throws {
        if let lookbackDays {
            try database.write { store in
                try store.widenBackfillWindow(accountID: try store.requireAccount(email: email).id, lookbackDays: lookbackDays)
            }
        }
        if retryParked || mode == .catchUp {
            try database.write { store in _ = try store.makeParkedDue(accountID: try store.requireAccount(email: email).id) }
        }
    }

    /// The rules file's rules, checked against the account's labels (nil without a rules file).
    func loadRules(email: String, database: SharedStore) throws -> [MailRule]? {
        let invocation = self.invocation
        return try database.read { store in
            try RulesFileLoader.load(invocation, store: store, accountID: try store.requireAccount(email: email).id)
        }
    }

    /// The engine, flusher and outbox sender of one account, sized for the mode.
    func makeWorker(email: String, access: GmailAccess, database: SharedStore, storePath: String,
                    rules: [MailRule]?) -> AccountWorker {
        AccountWorker(email: email, access: access, database: database, storePath: storePath, rules: rules,
                      prefetchDays: prefetchDays,
                      pageSize: mode == .catchUp ? AccountWorker.catchUpPageSize : 100,
                      hydrationBatch: mode == .catchUp ? AccountWorker.catchUpHydrationBatch : 25,
                      invocation: invocation,
                      progress: ProgressLine(enabled: Terminal.stderrIsTerminal || verbose, verbose: verbose,
                                             ceiling: ProgressLine.ceiling(of: access.quota.configuration)))
    }
}

extension SyncRunner {
    /// The message of an error the exit table calls temporary (75, "safe to retry"), or
    /// nil: the same classifiers every network command exits through.
    nonisolated static func temporary(_ error: any Error) -> String? {
        let classified = NetworkExit.classify(error) ?? Exit.classify(error, debug: false)
        return classified.status == .temporaryFailure ? classified.message : nil
    }
}

/// One account's engine, flusher and outbox sender.
final class AccountWorker: Sendable {
    let email: String
    let engine: SyncEngine
    let flusher: MutationFlusher
    let outbox: OutboxSender
    /// The account's drafts (drafts.list), on the background lane like the poll.
    let drafts: any GmailDraftsAPI
    let database: SharedStore
    let storePath: String
    /// The rules file's rules, run on new mail after each poll; nil without a rules file.
    let rules: [MailRule]?
    let progress: ProgressLine
    let warn: @Sendable (String) -> Void
    /// The account's quota, shared with its other processes through the ledger.
    let quota: QuotaBucket
    /// Now, in epoch seconds, for the snooze wake check (TestHooks.timerNow).
    let timerNow: @Sendable () -> Int64
    /// Whether the quota's fall-back to this process alone was told already.
    private let toldQuotaFallback = Atomic<Bool>(false)

    /// Bodies per pass with `--catch-up`. A pass in the background stays small (25, the
    /// engine's default) so it never holds the store or the quota for long; a catch-up is
    /// what the user is waiting for, and a pass's fixed costs (a history poll, the queue,
    /// the bookkeeping writes, one commit) are then paid once per 500 bodies instead of
    /// once per 25. The fetch still goes out in batches of 25, four at a time.
    static let catchUpHydrationBatch = 500
    /// Backfill pages with `--catch-up`: 500, the most messages.list gives, so a page,
    /// and its one commit, carries five times the messages (still one commit per page).
    static let catchUpPageSize = 500

    @MainActor
    init(email: String, access: GmailAccess, database: SharedStore, storePath: String, rules: [MailRule]? = nil, prefetchDays: Int,
         pageSize: Int, hydrationBatch: Int, invocation: Invocation, progress: ProgressLine) {
        self.email = email
        self.database = database
        self.storePath = storePath
        self.rules = rules
        self.progress = progress
        quota = access.quota
        let environment = invocation.environment
        timerNow = { TestHooks.timerNow(environment: environment) }
        let name = invocation.name
        warn = { writeError("\(name): \($0)\n") }
        var report: (@Sendable (SyncProgress) -> Void)?
        if progress.enabled { report = { progress.update($0) } }
        engine = SyncEngine(
            api: access.background, database: database, account: email, pageSize: pageSize, hydrationBatch: hydrationBatch,
            prefetchWindowDays: prefetchDays, onDemandAPI: access.interactive, progress: report)
        flusher = MutationFlusher(api: access.interactive, database: database, account: email,
                                  lock: FileFlushLock(storePath: storePath, email: email),
                                  checkpoint: TestHooks.flushCheckpoint(environment: invocation.environment))
        // Exclusive: it runs only while this process holds the account's send lock.
        outbox = OutboxSender(api: access.interactive, database: database, account: email, exclusive: true)
        drafts = access.background
    }

    /// send → flush → syncOnce → retire. A failure of the send or the flush is returned,
    /// not thrown, so the poll runs anyway: what the queue meets must never keep new mail
    /// out (issue 17 §0). The poll's own failures are thrown. Messages parked for the
    /// first time are told on standard error, once each.
    func pass(maxPages: Int) async throws -> (PassTotals, (any Error)?) {
        var totals = PassTotals()
        var stepFailure: (any Error)?
        let waitsCutBefore = RetryAfterCap.timesApplied
        var sent = OutboxReport()
        releaseScheduledSendsReporting()
        do { sent = try await sendOutbox() } catch { stepFailure = error }
        // A draft this send saved may be of a schedule already due (approved while its
        // draft waited to be saved, or its time came meanwhile): released and sent now,
        // not a pass later.
        if stepFailure == nil && releaseScheduledSendsReporting() > 0 {
            do { sent.add(try await sendOutbox()) } catch { stepFailure = error }
        }
        var flush = FlushReport()
        do { flush = try await flusher.flushOnce() } catch { stepFailure = stepFailure ?? error }
        // Rules first run on what an interrupted pass stored, then on what this one stores.
        applyRulesReporting(&totals)
        let report = try await engine.syncOnce(maxBackfillPages: maxPages)
        applyRulesReporting(&totals)
        if !totals.ruleActions.isEmpty {
            // The rules' changes go out with this pass, not the next one.
            do { let more = try await flusher.flushOnce(); flush.flushed += more.flushed; flush.retired += more.retired }
            catch { stepFailure = stepFailure ?? error }
        }
        // Which draft names which message: read again only when drafts changed.
        do { try await DraftSync.refresh(api: drafts, database: database, email: email) } catch { stepFailure = stepFailure ?? error }
        // After this pass's sends (a draft saved for a schedule cancelled meanwhile) and the
        // map's refresh (a draft deleted elsewhere is not asked for).
        await deleteCancelledDraftsReporting()
        let retired = try await flusher.retireConfirmed()
        // After retirement: a change of ours still in flight would hide what another device did.
        wakeSnoozesReporting(&totals)
        if !totals.wakeActions.isEmpty {
            do { let more = try await flusher.flushOnce(); flush.flushed += more.flushed; flush.retired += more.retired }
            catch { stepFailure = stepFailure ?? error }
        }
        totals.add(report, flush, retired: retired, outbox: sent)
        let email = self.email
        let (parked, fresh, refusal, labelRefusal) = try database.write { store in
            let accountID = try store.requireAccount(email: email).id
            return (try store.parkedMessages(accountID: accountID), try store.takeUnreportedParked(accountID: accountID),
                    flush.dropped > flush.refusedLabelChanges ? try store.rejectedChanges(accountID: accountID).first?.reason : nil,
                    flush.refusedLabelChanges > 0 ? try store.rejectedLabelChanges(accountID: accountID).first?.reason : nil)
        }
        totals.parked = parked
        tellParked(fresh)
        if case .fellBack(let failure) = await quota.sharing, !toldQuotaFallback.exchange(true, ordering: .relaxed) {
            progress.finish()
            warn("\(email): the quota is not shared with other Hudson processes (\(failure)); scheduling alone")
        }
        if let refusal {
            progress.finish()
            warn("\(flush.dropped - flush.refusedLabelChanges) change(s) refused by Gmail (\(refusal)); hd-pending --rejected lists them")
        }
        if let labelRefusal {
            progress.finish()
            warn("\(flush.refusedLabelChanges) label operation(s) refused by Gmail (\(labelRefusal)); hd-pending --rejected lists them")
        }
        if report.unusableIDs > 0 {
            progress.finish()
            warn("\(email): \(report.unusableIDs) id(s) in Gmail's answers are not of a Gmail id's shape; set aside, never requested")
        }
        if RetryAfterCap.timesApplied > waitsCutBefore {
            progress.finish()
            warn("\(email): Gmail asked to wait longer than \(Int(RetryAfterCap.seconds / 60)) minutes (Retry-After); "
                 + "Hudson waits at most that long, then tries again")
        }
        return (totals, stepFailure)
    }

    /// `applyRules`, whose failure (a label a rule names deleted meanwhile, a busy store)
    /// is told and left for the next pass: the mail it was running on stays unjudged and
    /// is judged then, and the poll goes on (what the rules meet never keeps mail out).
    private func applyRulesReporting(_ totals: inout PassTotals) {
        do { try applyRules(&totals) } catch {
            progress.finish()
            warn("\(email): rules: \(Exit.classify(error, debug: false).message); tried again next pass")
        }
    }

    /// Runs the rules on the account's new mail they have not run on (Store.applyRulesToNewMail),
    /// in one transaction with the record that they ran; tells the action on standard error.
    private func applyRules(_ totals: inout PassTotals) throws {
        let email = self.email
        guard let rules, !rules.isEmpty else {
            // Without rules, arriving mail is not judged: rules that come back later start
            // from then, not from when they first ran (Store.forgetRulesStart). Read first:
            // a pass writes nothing for rules it does not have.
            let started = try database.read { store in try store.rulesStarted(accountID: try store.requireAccount(email: email).id) }
            if started {
                try database.write { store in try store.forgetRulesStart(accountID: try store.requireAccount(email: email).id) }
            }
            return
        }
        let outcome = try database.write { store in
            try store.applyRulesToNewMail(rules, accountID: try store.requireAccount(email: email).id,
                                          options: SearchInput.options(accountID: nil), description: "hd-sync rules")
        }
        guard let outcome, let actionID = outcome.result.actionID else { return }
        totals.ruleActions.append(actionID)
        totals.ruleChanges += outcome.result.deltas.count
        progress.finish()
        let matched = zip(rules, outcome.matches).filter { !$1.isEmpty }.map { "\($0.name) (\($1.count))" }
        warn("\(email): rules: action \(actionID): \(outcome.result.deltas.count) change(s) on \(outcome.considered ?? 0) new message(s) "
             + "by \(matched.joined(separator: ", ")); hd-undo \(actionID) takes them back")
    }

    /// Newly parked messages told on standard error, one line each up to this many, then
    /// one line for the rest: a Gmail failing hundreds at once does not flood the terminal.
    static let parkedLinesShown = 5

    private func tellParked(_ fresh: [ParkedMessage]) {
        guard !fresh.isEmpty else { return }
        progress.finish()
        for entry in fresh.prefix(Self.parkedLinesShown) {
            warn("message:\(entry.gmailID): parked (\(entry.stage.rawValue)): \(entry.error); retried later (hd-pending --parked)")
        }
        if fresh.count > Self.parkedLinesShown {
            warn("\(fresh.count - Self.parkedLinesShown) more message(s) parked; hd-pending --parked lists them")
        }
    }

    /// The due outbox entries, when no other process (an `hd-send`) is sending for the
    /// account right now; what that process leaves, the next pass sends. A message Gmail
    /// refused is reported on standard error with the reason.
    func sendOutbox() async throws -> OutboxReport {
        guard let lock = try SendLock(storePath: storePath, email: email) else { return OutboxReport() }
        let report = try await outbox.sendDue(takeOverClaimsSince: lock.claimsTakeableSince)
        withExtendedLifetime(lock) {}
        for id in report.rejected {
            let entry = try database.read { try $0.outboxEntry(id: id) }
            warn("outbox:\(id): not sent: \(entry?.lastError ?? "rejected by Gmail")")
        }
        // A draft changed elsewhere: the update was kept as a new draft beside it (issue 37 §5).
        for id in report.kept {
            if let note = try database.read({ try $0.outboxEntry(id: id) })?.keptNote { warn(note) }
        }
        return report
    }

    func isCaughtUp() async throws -> Bool {
        try await engine.isCaughtUp() && queueIsEmpty()
    }

    /// Whether a pass now would have work to do (a parked message waiting for its
    /// back-off is not work yet).
    func hasDueWork() async throws -> Bool {
        try await engine.hasDueWork() || !queueIsEmpty()
    }

    func queueIsEmpty() throws -> Bool {
        let email = self.email
        let (queued, unsent, labels) = try database.read { store in
            let accountID = try store.requireAccount(email: email).id
            return (try store.queuedMutationCount(accountID: accountID), try store.unsentOutboxCount(accountID: accountID),
                    try store.pendingLabelChanges(accountID: accountID).count)
        }
        return queued == 0 && unsent == 0 && labels == 0
    }

    /// Passes until caught up. A run of passes that do nothing while work remains (the
    /// queue waiting out a server's backoff) ends it with a temporary failure.
    ///
    /// The full-text index merges lazily while the catch-up runs; once caught up after a
    /// large load (messages listed plus bodies stored: at least `mergeAfterMessages` and
    /// a tenth of the store), it is merged down to one segment in short steps, so reads
    /// walk one segment instead of dozens.
    func catchUp(maxPages: Int) async throws -> PassTotals {
        try database.write { try $0.setBulkIndexing(true) }
        defer { try? database.write { try $0.setBulkIndexing(false) } }
        let totals = try await catchUpPasses(maxPages: maxPages)
        let loaded = totals.backfilled + totals.bodiesHydrated
        // The store's size is counted (a read of a whole index) only after a large load.
        if loaded >= Self.mergeAfterMessages, try loaded * 10 >= database.read({ try $0.messageCount() }) {
            while !stopRequested.load(ordering: .relaxed), try database.write({ try $0.mergeFullTextStep() }) {}
        }
        return totals
    }

    /// The least a catch-up must have loaded before it merges the index.
    static let mergeAfterMessages = 5_000

    /// Further tries a catch-up gives messages parked while it runs, after 2 s, then 4 s.
    static let catchUpParkedRetries = 2

    private func catchUpPasses(maxPages: Int) async throws -> PassTotals {
        var totals = PassTotals()
        var idle = 0
        var parkedRetries = 0
        while !stopRequested.load(ordering: .relaxed) {
            let (pass, stepFailure) = try await self.pass(maxPages: maxPages)
            totals.add(pass)
            if let stepFailure {
                progress.finish()
                throw stepFailure
            }
            if try await isCaughtUp() { break }
            if try await !hasDueWork() && !pass.parked.isEmpty {
                // All that is left waits for a parked message's back-off.
                guard parkedRetries < Self.catchUpParkedRetries else {
                    progress.finish()
                    throw CommandFailure(
                        .temporaryFailure,
                        "\(email): not caught up: \(pass.parked.count) message(s) Gmail would not serve are parked; "
                            + "hd-pending --parked lists them, hd-sync fetches them again later, and hd-pending --parked --drop gives up on them")
                }
                parkedRetries += 1
                try await Task.sleep(for: .seconds(1 << parkedRetries))
                let email = self.email
                try database.write { store in _ = try store.makeParkedDue(accountID: try store.requireAccount(email: email).id) }
                continue
            }
            idle = pass.didWork ? 0 : idle + 1
            if idle >= 30 {
                progress.finish()
                throw CommandFailure(.temporaryFailure, "\(email): not caught up: changes wait for Gmail; run hd-sync again later")
            }
            if !pass.didWork { try await Task.sleep(for: .seconds(1)) }
        }
        progress.finish()
        return totals
    }
}

extension PassTotals {
    mutating func add(_ other: PassTotals) {
        backfilled += other.backfilled
        eventsApplied += other.eventsApplied
        bodiesHydrated += other.bodiesHydrated
        backfillComplete = other.backfillComplete
        flushed += other.flushed
        retired += other.retired
        dropped += other.dropped
        sent += other.sent
        sendFailures += other.sendFailures
        parked = other.parked
        ruleActions += other.ruleActions
        ruleChanges += other.ruleChanges
        unusableIDs += other.unusableIDs
    }
}
