/*!
 After `hd-mark` or `hd-undo` commits its change locally, one short attempt to send it
 (CONTRACT.md "Triage"). Offline, without credentials, or failing, the change simply
 stays queued and the next `hd-sync` sends it: that is success with a note, not an error.
 `hd-mark` and `hd-undo`, which link no network code, run it as `hd-sync --push`
 (`push`, HudsonCLI/QueuePush.swift).
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonStore
import HudsonSync

@MainActor
public enum FlushAttempt {
    /// Tries to send the queue of each account for at most `timeout`. Returns the
    /// accounts whose changes are still queued, and the exit status that says why when it
    /// is not temporary: 78 for credentials that cannot be used (a directory, a device, too
    /// open), 77 for none or a revoked grant. Retrying cannot fix those.
    @discardableResult
    static func run(_ invocation: Invocation, accounts emails: [String],
                    timeout: Duration = .seconds(4)) async -> (stillQueued: [String], lasting: ExitStatus?) {
        var stillQueued: [String] = []
        var lasting: ExitStatus?
        guard !emails.isEmpty else { return ([], nil) }
        guard let endpoints = try? GmailEndpoints(environment: invocation.environment),
              let configDirectory = try? invocation.configDirectory(),
              let store = try? invocation.openStore(.readWrite, durable: true)
        else { return (emails, nil) }
        let database = SharedStore(store)
        for email in emails {
            do {
                let access = try GmailAccess(email: email, configDirectory: configDirectory, endpoints: endpoints)
                let flusher = MutationFlusher(
                    api: access.interactive, database: database, account: email,
                    lock: FileFlushLock(storePath: try invocation.storePath(), email: email),
                    checkpoint: TestHooks.flushCheckpoint(environment: invocation.environment))
                let report = try await withThrowingTaskGroup(of: FlushReport?.self) { group in
                    group.addTask { try await flusher.flushOnce() }
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        throw CancellationError()
                    }
                    let first = try await group.next() ?? nil
                    group.cancelAll()
                    return first
                }
                let remaining = try database.read { store in
                    let accountID = try store.requireAccount(email: email).id
                    return try store.queuedMutations(accountID: accountID).filter { $0.state == .pending && !$0.held }.count
                        + store.pendingLabelChanges(accountID: accountID).filter { $0.state == .pending }.count
                }
                if remaining > 0 {
                    stillQueued.append(email)
                    if let interruption = report?.interruptedBy { noteStoppedServer(interruption, email: email, invocation) }
                }
            } catch {
                if noteStoppedServer(error, email: email, invocation) {
                    // Said: the Gmail on this machine is not running.
                } else if let classified = NetworkExit.lasting(error) {
                    invocation.warn("\(email): \(classified.message)")
                    // The daily quota passes by itself (75); credentials do not (78, 77).
                    if [.configuration, .notAuthorized].contains(classified.status), lasting != .configuration {
                        lasting = classified.status
                    }
                } else if invocation.debug {
                    invocation.warn("\(email): not sent: \(error)")
                }
                stillQueued.append(email)
            }
        }
        if !stillQueued.isEmpty {
            invocation.warn("queued; the next hd-sync will send it")
        }
        return (stillQueued, lasting)
    }

    /// Says, when `error` is a refused connection to a Gmail on this machine (the demo's fake,
    /// stopped), so and how the demo's starts again: the one line of this attempt that
    /// `hd-mark` and `hd-undo`, which run it as a child, pass on (`StoppedLocalGmail`).
    @discardableResult
    private static func noteStoppedServer(_ error: any Error, email: String, _ invocation: Invocation) -> Bool {
        guard let classified = NetworkExit.classify(error), classified.message.hasSuffix(StoppedLocalGmail.restart) else {
            return false
        }
        invocation.warn("\(email): \(classified.message)")
        return true
    }

    /// `hd-sync --push`: the attempt for the selected account, or every account. Exit 75
    /// (temporary failure) when something is still queued, 78 or 77 when the credentials
    /// are the reason, 0 when all was sent.
    public static func push(_ invocation: Invocation) async throws -> ExitStatus {
        let store = try invocation.store()
        let emails = try invocation.selectedAccount(in: store).map { [$0.email] } ?? store.accounts().map(\.email)
        let (stillQueued, lasting) = await run(invocation, accounts: emails)
        return stillQueued.isEmpty ? .success : lasting ?? .temporaryFailure
    }
}
