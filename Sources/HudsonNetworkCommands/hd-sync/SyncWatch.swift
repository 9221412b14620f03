/*!
 `hd-sync --watch`: passes until SIGINT or SIGTERM, then exit 0. A watch is what keeps a
 store current unattended (a systemd user service, a terminal left open), so it stops
 only when told to: whatever keeps an account from syncing is said once on standard
 error, looked at again every pass, and the account syncs again by itself once it is
 gone. Each pass, for each account of the store (or the one `--account` names, read again
 every pass, so an account added or removed meanwhile is seen):

 - Its credentials are read again. A file removed (`hd-auth remove`), too open, not a
   regular file or corrupt stops the account, since a one-shot `hd-sync` would refuse it
   too; a file that holds another grant (`hd-auth login` in another terminal) replaces
   the clients the account used. The access token another process cached in the file is
   not a new grant.
 - Its sync lock (SyncLock) is taken if this watch does not hold it. Held by another
   process (a second watch, a one-shot `hd-sync` from cron), the account waits: the lock
   is asked for again every second while the watch pauses, so the account is taken over
   at once when that process ends, however it ends (kill -9 included: the kernel drops
   the lock). A lock whose file was removed or replaced is no longer held (LockFile).
 - A pass runs. Failures the exit table calls temporary (75) are told and retried with a
   growing pause (SyncRunner). A pass that Google refuses for the account's grant (77:
   `invalid_grant`, a missing scope) or its credentials (78) stops the account and lets
   go of its lock: that grant is not tried again until the credentials file holds another
   one, or after a long while in case the refusal passes (`refusedGrantRetry`). The same
   refusal met only by the queue or the outbox (a narrowed scope still lets history be
   read) is told once and the account goes on syncing: new mail keeps arriving.

 Each reason is told once, as `hd-sync: EMAIL: why; what happens next`, and
 `EMAIL: syncing now` when the account syncs again after one was told; a reason that
 changes is told again. The report line of an account that did not sync is the all-zero
 one, printed only with `--verbose`, as for any pass that did nothing.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore
import HudsonSync

@MainActor
final class SyncWatch {
    /// One account of the watch, from pass to pass.
    final class Account {
        let email: String
        /// The rules file's rules for the account, loaded once; nil until loaded.
        var rules: [MailRule]??
        var lock: SyncLock?
        var worker: AccountWorker?
        /// The credentials `worker` was built from, less the cached access token.
        var grant: OAuthCredential?
        /// A grant refused for good by Google, not tried again before `retryAt` unless
        /// the credentials file changes.
        var refusedGrant: OAuthCredential?
        var retryAt = ContinuousClock.now
        var refusals = 0
        /// Whether `--lookback-days` and `--retry-parked` were applied (once, under the lock).
        var setUp = false
        /// Why the account does not sync, as last told; nil while it syncs.
        var idleReason: String?
        /// Whether the account waits for another process's sync lock.
        var waitsForLock = false
        /// The lasting failure of the queue or outbox last told while the account syncs.
        var toldStepFailure: String?

        init(email: String) { self.email = email }
    }

    /// How long a refused grant waits before it is tried again without a change of the
    /// credentials file: the first time, doubling up to `refusedGrantRetryLimit`. One
    /// token request each time; Google's refusal (`invalid_grant`) does not pass by
    /// itself, but a scope given back on the account page does.
    static let refusedGrantRetry: Duration = .seconds(300)
    static let refusedGrantRetryLimit: Duration = .seconds(3600)

    let runner: SyncRunner
    let database: SharedStore
    let storePath: String
    let configDirectory: String
    let endpoints: GmailEndpoints
    let sink: any Sink
    let credentials: CredentialStore
    private var accounts: [Account] = []
    private var invocation: Invocation { runner.invocation }

    init(runner: SyncRunner, database: SharedStore, storePath: String, configDirectory: String,
         endpoints: GmailEndpoints, sink: any Sink) {
        self.runner = runner
        self.database = database
        self.storePath = storePath
        self.configDirectory = configDirectory
        self.endpoints = endpoints
        self.sink = sink
        credentials = CredentialStore(configDirectory: configDirectory)
    }

    /// Passes until interrupted. `emails` are the accounts at start; a rules file that does
    /// not load for one of them stops the watch here (78), before anything is fetched.
    func run(emails: [String]) async throws {
        for email in emails {
            let account = Account(email: email)
            account.rules = try runner.loadRules(email: email, database: database)
            accounts.append(account)
        }
        let hook = runner.newMailCommand.map {
            NewMailHook(command: $0, environment: invocation.environment, storePath: storePath,
                        configDirectory: configDirectory, since: LocalTime.nowMilliseconds)
        }
        let idlePause = TestHooks.watchPause(environment: invocation.environment) ?? 30
        // A pass that changes nothing prints nothing: on a terminal, say the watch is on.
        if Terminal.stderrIsTerminal {
            let names = emails.isEmpty ? "every account" : emails.joined(separator: ", ")
            invocation.warn("watching \(TerminalSafety.field(names)): a pass every \(idlePause) s once caught up, a line when one does something; Ctrl-C stops")
        }
        var failedInARow = 0
        while !stopRequested.load(ordering: .relaxed) {
            try refreshAccountList()
            var catchingUp = false
            var failed = false
            for account in accounts {
                let worker: AccountWorker
                do {
                    guard let prepared = try prepare(account) else {
                        if runner.verbose {
                            try sink.emit(PassTotals().record(email: account.email))
                            try invocation.stdout.flush()
                        }
                        continue
                    }
                    worker = prepared
                } catch let error where SyncRunner.temporary(error) != nil {
                    invocation.warn("\(account.email): \(SyncRunner.temporary(error) ?? ""); retrying")
                    failed = true
                    continue
                }
                do {
                    let (totals, stepFailure) = try await worker.pass(maxPages: runner.maxPages)
                    worker.progress.finish()
                    if totals.didWork || runner.verbose {
                        try sink.emit(totals.record(email: worker.email))
                        try invocation.stdout.flush()
                    }
                    syncing(account)
                    catchingUp = try await worker.hasDueWork() || catchingUp
                    if let hook {
                        let fresh = try hook.takeNew(email: worker.email, database: worker.database)
                        if !fresh.isEmpty, let failure = hook.run(references: fresh, email: worker.email) {
                            invocation.warn("\(worker.email): --exec: \(failure)")
                        }
                    }
                    if let stepFailure, let lasting = Self.lasting(stepFailure) {
                        // History was read: the account syncs on, only the queue waits.
                        if account.toldStepFailure != lasting {
                            account.toldStepFailure = lasting
                            invocation.warn("\(account.email): \(lasting); queued changes and messages wait, new mail still arrives")
                        }
                    } else if let stepFailure {
                        throw stepFailure
                    } else if try totals.flushed + totals.sent > 0 || worker.queueIsEmpty() {
                        // Gmail took queued work again (a pass whose queue was only waiting
                        // out its back-off says nothing either way).
                        account.toldStepFailure = nil
                    }
                } catch let error where SyncRunner.temporary(error) != nil {
                    worker.progress.finish()
                    invocation.warn("\(worker.email): \(SyncRunner.temporary(error) ?? ""); retrying")
                    failed = true
                } catch let error where Self.lasting(error) != nil {
                    worker.progress.finish()
                    refuse(account, because: Self.lasting(error) ?? "")
                } catch let error where !(error is OutputFailed) && !(error is CancellationError) {
                    // Anything else one account met (a request Gmail refuses, an answer it
                    // cannot read as documented) is that account's, and may pass: told, and
                    // tried again after the back-off, as hd-sync(1) promises a watch does.
                    worker.progress.finish()
                    let classified = NetworkExit.classify(error) ?? Exit.classify(error, debug: false)
                    invocation.warn("\(worker.email): \(classified.message); retrying")
                    failed = true
                }
                if stopRequested.load(ordering: .relaxed) { return }
            }
            failedInARow = failed ? failedInARow + 1 : 0
            let pause = failed ? min(300, 2 << min(failedInARow - 1, 8)) : catchingUp ? 2 : idlePause
            for tick in 0..<(pause * 10) where !stopRequested.load(ordering: .relaxed) {
                // Every second, the locks other processes held: the account is taken over
                // as soon as they end, not one whole pause later.
                if tick % 10 == 9, takeFreedLocks() { break }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// The message of a failure that waiting cannot get past (the exit table's 77 and 78:
    /// credentials, a grant Google refuses, a lock file that cannot be opened), or nil.
    static func lasting(_ error: any Error) -> String? {
        let classified = NetworkExit.classify(error) ?? Exit.classify(error, debug: false)
        return [.notAuthorized, .configuration].contains(classified.status) ? classified.message : nil
    }

    // MARK: - Accounts

    /// Reads the accounts again: those added since are watched from now on, those gone
    /// are let go (told once). A busy store keeps the list as it was.
    private func refreshAccountList() throws {
        let invocation = self.invocation
        let emails: [String]
        do {
            emails = try database.read { store in
                try invocation.selectedAccount(in: store).map { [$0.email] } ?? store.accounts().map(\.email)
            }
        } catch where SyncRunner.temporary(error) != nil {
            return
        } catch where Self.lasting(error) != nil {
            emails = []  // the account --account names was removed
        }
        for account in accounts where !emails.contains(account.email) {
            release(account)
            invocation.warn("\(account.email): no longer in the store (hd-auth remove --purge); not synced")
        }
        accounts = emails.map { email in accounts.first { $0.email == email } ?? Account(email: email) }
    }

    /// The account's worker, ready for a pass; nil, with the reason told once, when the
    /// account cannot sync now.
    private func prepare(_ account: Account) throws -> AccountWorker? {
        let email = account.email
        if account.rules == nil {
            do { account.rules = try runner.loadRules(email: email, database: database) } catch where Self.lasting(error) != nil {
                idle(account, "\(Self.lasting(error) ?? ""); not synced until the rules file loads and the watch is restarted")
                return nil
            }
        }
        let credential: OAuthCredential
        do {
            credential = try credentials.load(email: email)
        } catch where Self.lasting(error) != nil || SyncRunner.temporary(error) != nil {
            release(account)
            idle(account, "\(Self.lasting(error) ?? SyncRunner.temporary(error) ?? ""); this watch syncs the account again once its credentials can be used")
            return nil
        }
        let grant = credential.grant
        if let refused = account.refusedGrant {
            if refused == grant && ContinuousClock.now < account.retryAt { return nil }
            account.refusedGrant = nil
        }
        if let lock = account.lock, !lock.isCurrent { account.lock = nil }
        if account.lock == nil {
            do {
                account.lock = try SyncLock(storePath: storePath, email: email)
            } catch where Self.lasting(error) != nil {
                release(account)
                idle(account, "\(Self.lasting(error) ?? ""); tried again every pass")
                return nil
            }
            guard account.lock != nil else {
                release(account)
                account.waitsForLock = true
                idle(account, "another hd-sync is syncing this account; this watch takes over when it stops")
                return nil
            }
            account.waitsForLock = false
        }
        if let worker = account.worker, account.grant == grant { return worker }
        do {
            if !account.setUp {
                try runner.setUp(email: email, database: database)
                account.setUp = true
            }
            let access = try GmailAccess(email: email, credential: credential, store: credentials, endpoints: endpoints,
                                         patience: .unattended)
            let worker = runner.makeWorker(email: email, access: access, database: database, storePath: storePath,
                                           rules: account.rules ?? nil)
            account.worker = worker
            account.grant = grant
            return worker
        } catch where Self.lasting(error) != nil {
            refuse(account, grant: grant, because: Self.lasting(error) ?? "")
            return nil
        }
    }

    /// A pass refused for the account's grant or credentials: the account stops, lets go of
    /// its lock, and waits for other credentials (or `retryAt`).
    private func refuse(_ account: Account, grant: OAuthCredential? = nil, because reason: String) {
        let refused = grant ?? account.grant
        account.refusals = refused == account.refusedGrant ? account.refusals + 1 : 1
        account.refusedGrant = refused
        let wait = min(Self.refusedGrantRetryLimit, Self.refusedGrantRetry * (1 << min(account.refusals - 1, 8)))
        account.retryAt = ContinuousClock.now + wait
        release(account)
        idle(account, "\(reason); this watch syncs the account again once its credentials change")
    }

    /// Lets go of the account's lock and clients.
    private func release(_ account: Account) {
        account.worker?.progress.finish()
        account.worker = nil
        account.grant = nil
        account.lock = nil
        account.waitsForLock = false
    }

    /// Tells why the account does not sync, unless that was the last thing told.
    private func idle(_ account: Account, _ reason: String) {
        guard account.idleReason != reason else { return }
        account.idleReason = reason
        invocation.warn("\(account.email): \(reason)")
    }

    /// After a pass: the account syncs, which is told when a reason it did not was.
    private func syncing(_ account: Account) {
        account.refusals = 0
        guard account.idleReason != nil else { return }
        account.idleReason = nil
        invocation.warn("\(account.email): syncing now")
    }

    /// Takes the sync locks of the accounts waiting for another process's; true when one
    /// was taken (a pass is then due at once).
    private func takeFreedLocks() -> Bool {
        var taken = false
        for account in accounts where account.waitsForLock {
            guard let lock = try? SyncLock(storePath: storePath, email: account.email) else { continue }
            account.lock = lock
            account.waitsForLock = false
            taken = true
        }
        return taken
    }
}

extension OAuthCredential {
    /// The credential less the access token cached with it: what tells one grant from
    /// another. Any process refreshing the access token rewrites the file; only a login
    /// changes this.
    var grant: OAuthCredential {
        var grant = self
        grant.accessToken = nil
        grant.accessTokenExpiresAt = nil
        return grant
    }
}
