/*!
 After `hd-send` has queued a message durably, one short attempt to send it now, through the
 interactive quota lane (CONTRACT.md "Triage": offline or failing, it stays queued and the
 next `hd-sync` sends it, which is success with a note, not an error). The attempt holds the
 account's send lock; if another process is sending for the account, that process or the
 next sync will deliver this entry too. Also the exit statuses of the outbox's refusals.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonStore
import HudsonSync

@MainActor
public enum OutboxAttempt {
    /// Tries to send entry `id` of account `email` for at most `timeout`, then returns the
    /// entry as the store has it (nil only when it cannot be read). `afterSend` is the
    /// sender's crash-test seam.
    public static func run(_ invocation: Invocation, database: SharedStore, id: Int64, email: String,
                           timeout: Duration, afterSend: @escaping @Sendable () -> Void = {},
                           afterDraftCheck: @escaping @Sendable () -> Void = {}) async -> OutboxEntry? {
        do {
            if let lock = try SendLock(storePath: try invocation.storePath(), email: email) {
                let access = try GmailAccess(email: email, configDirectory: try invocation.configDirectory(),
                                             endpoints: try GmailEndpoints(environment: invocation.environment),
                                             // An upload may be large; `timeout` already bounds the whole attempt.
                                             patience: .unattended)
                let sender = OutboxSender(api: access.interactive, database: database, account: email, exclusive: true,
                                          afterSendBeforeRecording: afterSend, afterDraftCheck: afterDraftCheck)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let since = lock.claimsTakeableSince
                    group.addTask { _ = try await sender.sendDue(only: [id], takeOverClaimsSince: since) }
                    group.addTask {
                        try await Task.sleep(for: timeout)
                        throw CancellationError()
                    }
                    try await group.next()
                    group.cancelAll()
                }
                withExtendedLifetime(lock) {}
            } else if invocation.debug {
                invocation.warn("\(email): another process is sending; leaving outbox:\(id) to it")
            }
        } catch {
            // What retrying at once cannot get past (a refused grant, a missing scope, the
            // daily quota, unusable credentials) is said: the message waits for it, not for
            // the network. Anything else is the next sync's to retry.
            if let classified = NetworkExit.lasting(error) {
                invocation.warn("\(email): \(classified.message)")
            } else if invocation.debug {
                invocation.warn("outbox:\(id): not sent now: \(error)")
            }
        }
        return try? database.read { try $0.outboxEntry(id: id) }
    }

    /// How long `hd-send` waits for Gmail before leaving the message to the next sync: a
    /// few seconds, plus time to upload a large message.
    public static func timeout(forBytes count: Int) -> Duration {
        .seconds(10 + count / 1_000_000)
    }
}
