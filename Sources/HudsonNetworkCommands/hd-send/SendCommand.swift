/*!
 `hd-send`'s run: compose, queue durably (one transaction, `synchronous=FULL`: the message
 exists nowhere else until Gmail has it), print `outbox:N`, then — unless `--no-send` or a
 `--delay` undo window holds it — one short attempt through the interactive lane, printing
 `message:ID` when Gmail took it. Offline, or when Gmail's answer does not come back, the
 entry stays in the outbox and the next `hd-sync` finishes it (probing first when a request
 may have reached Gmail): exit 0 with a note. A message Gmail refuses fails with its reason.
 */
import Glibc
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonStore
import HudsonSync

@MainActor
public enum SendCommand {
    public static func run(_ cli: Invocation) async throws -> ExitStatus {
        let delay = try cli.arguments.int("delay", range: 0...604_800) ?? 0
        let dryRun = cli.arguments.flag("dry-run")
        let store = try cli.openStore(dryRun ? .readOnly : .readWrite, durable: !dryRun)
        let composer = Composer(invocation: cli, store: store)
        var composed = try await composer.compose()
        // --at, --if-late, --remind, or the X-Hudson-Send-At header (removed here).
        let timing = try SendTiming(cli, message: &composed.message)
        if timing.sendAt != nil && (composed.isDraft || delay > 0 || cli.arguments.flag("no-send")) {
            throw UsageError("--at goes without --draft, --update-draft, --delay and --no-send")
        }
        if timing.remindAt != nil && composed.isDraft { throw UsageError("--remind goes without --draft and --update-draft") }
        NearMissWarning.warn(cli, store: store, recipients: composed.message.recipients.map(\.address), accountID: composed.account.id)
        if dryRun {
            try cli.stdout.write(envelopeText(composed, timing: timing))
            return .success
        }
        // A sendmail program prints nothing when all is well (its caller shows what it prints).
        let quiet = composer.isSendmail
        let message = composed.message
        let outgoing = NewOutboxMessage(
            accountID: composed.account.id, raw: message.raw, messageID: message.messageID, threadID: composed.threadID,
            recipients: message.recipients.map(\.address), subject: message.subject, delayMilliseconds: Int64(delay) * 1000,
            kind: composed.isDraft ? .draft : .send, draftID: composed.draftID, draftBaseGmailID: composed.draftBaseGmailID)
        let entry: OutboxEntry
        if let sendAt = timing.sendAt {
            // Saved as a Gmail draft now (the attempt below), sent at the time (ScheduledSends.swift).
            entry = try store.enqueueScheduledSend(outgoing, sendAt: sendAt, ifLate: timing.ifLate, remindAt: timing.remindAt)
        } else if let remindAt = timing.remindAt, !composed.isDraft {
            entry = try store.enqueueOutbox(outgoing, replacing: composed.replacesOutboxID, remindAt: remindAt)
        } else {
            entry = try store.enqueueOutbox(outgoing, replacing: composed.replacesOutboxID)
        }
        // The id first, at once: whatever happens next, the user can find the entry.
        if !quiet {
            try cli.stdout.write("\(entry.reference)\n")
            try cli.stdout.flush()
        }

        if cli.arguments.flag("no-send") {
            cli.warn("queued; the next hd-sync will send it")
            return .success
        }
        if delay > 0 {
            cli.warn("queued; held for \(delay) s (hd-undo \(entry.reference) cancels it), then sent by the next hd-sync")
            return .success
        }
        let crashes = TestHooks.outboxCrashes(environment: cli.environment)
        // The sender's own connection: the command's stays on the main actor.
        let database = SharedStore(try cli.openStore(.readWrite, durable: true))
        let after = await OutboxAttempt.run(cli, database: database, id: entry.id, email: composed.account.email,
                                            timeout: OutboxAttempt.timeout(forBytes: message.raw.count), afterSend: crashes.afterSend,
                                            afterDraftCheck: crashes.afterDraftCheck)
        // A draft changed elsewhere meanwhile: both versions are kept, and the user is told.
        if let note = after?.keptNote { cli.warn(note) }
        if let sendAt = timing.sendAt, !quiet {
            cli.warn("to be sent \(WhenText.describe(sendAt / 1000)); hd-undo \(entry.reference) cancels it")
        }
        switch after?.state {
        case .sent? where composed.isDraft || timing.sendAt != nil:
            if let id = after?.draftID, !quiet { try cli.stdout.write(TerminalSafety.field("draft:\(id)") + "\n") }
        case .sent?:
            if let id = after?.gmailID, !quiet { try cli.stdout.write(TerminalSafety.field("message:\(id)") + "\n") }
        case .failed?:
            throw CommandFailure(.dataError, "\(entry.reference): \(after?.lastError ?? "rejected by Gmail")")
        default:
            let what = composed.isDraft || timing.sendAt != nil ? "save it as a draft" : "send it"
            cli.warn(quiet ? "\(entry.reference): queued; the next hd-sync will \(what)" : "queued; the next hd-sync will \(what)")
        }
        return .success
    }

    /// `--dry-run`: where the message goes, read back from the bytes that would be queued
    /// (Composer decides recipients once, with the strict parser), one address a line, each
    /// as a header would name it; then the subject and the size, and for a send-later its
    /// time and the Gmail draft it would wait as (what a real run does first). Nothing is
    /// queued or sent.
    static func envelopeText(_ composed: ComposedMessage, timing: SendTiming) -> String {
        let message = composed.message
        var lines: [String] = []
        // Each address as the message holds it (quoted, encoded), not decoded: a decoded
        // `"Eve, <eve@example.net>" <ada@example.org>` reads as two recipients. Anything a
        // terminal would act on is escaped visibly, never removed.
        func shown(_ address: MailAddress) -> String { TerminalSafety.quoted(HeaderField.written(address), limit: .max) }
        if let from = message.from { lines.append("From: " + shown(from)) }
        for (field, list) in [("To", message.to), ("Cc", message.cc), ("Bcc", message.bcc)] {
            for address in list { lines.append("\(field): " + shown(address)) }
        }
        lines.append("Subject: " + TerminalSafety.quoted(message.subject, limit: .max))
        if composed.isDraft { lines.append("Draft: " + (composed.draftID.map { TerminalSafety.field("draft:\($0)") } ?? "new")) }
        if let sendAt = timing.sendAt {
            lines.append("Send-At: " + WhenText.describe(sendAt / 1000))
            lines.append("Draft: new (saved as a Gmail draft now, sent from it at that time)")
        }
        if let remindAt = timing.remindAt { lines.append("Remind: " + WhenText.describe(remindAt / 1000)) }
        lines.append("Size: \(message.raw.count) bytes")
        return lines.joined(separator: "\n") + "\n"
    }
}
