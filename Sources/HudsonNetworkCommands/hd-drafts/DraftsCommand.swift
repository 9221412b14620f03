/*!
 `hd-drafts`: the drafts Gmail keeps (gmail-api.md §2.12), which the web and mobile apps
 show. `list` and `show` read the store (sync brings drafts like any message); `send` and
 `delete` act on Gmail. A draft is saved or updated with `hd-send --draft` or
 `hd-send --update-draft`, through the outbox. Sending a draft goes through the outbox too
 (kind 'draft-send'): queued durably first, then `drafts.send` once, with the probe of
 OutboxSender after an unknown outcome; Gmail also keeps a draft from being sent twice, since
 a sent draft no longer exists. Deleting is idempotent: a draft already gone (404) is done.
 */
import Glibc
import GmailIDShape
import HudsonCLI
import HudsonGmail
import HudsonMail
import HudsonOutput
import HudsonStore
import HudsonSync

@MainActor
public enum DraftsCommand {
    /// `draft:ID` or a bare draft id, of the shape every Gmail id has (GmailIDShape): the id
    /// goes into the request's path, where `draft:..` once sent `DELETE …/users/me/`.
    static func draftID(_ text: String) throws -> String {
        let id = text.hasPrefix("draft:") ? String(text.dropFirst("draft:".count)) : text
        if let problem = GmailID.problem(with: id, as: .draft) {
            throw UsageError("\(TerminalSafety.quoted(text)): not a draft (draft:ID): \(problem)")
        }
        return id
    }

    /// The account: --account (or $HUDSON_ACCOUNT), else the only one.
    static func account(_ cli: Invocation, _ store: Store) throws -> Account {
        if let selected = try cli.selectedAccount(in: store, strict: true) { return selected }
        let accounts = try store.accounts()
        switch accounts.count {
        case 0: throw CommandFailure(.notAuthorized, "no accounts; run hd-auth login")
        case 1: return accounts[0]
        default: throw UsageError("several accounts: choose one with --account EMAIL")
        }
    }

    public static func list(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try account(cli, store)
        let sink = cli.makeSink()
        var listed = 0
        for draft in try store.drafts(accountID: account.id) {
            try sink.emit(Records.draft(draft, account: account.email))
            listed += 1
        }
        // Saved offline: on their way to Gmail's drafts.
        let now = LocalTime.nowMilliseconds
        for entry in try store.pendingOutbox(accountID: account.id) where entry.kind == .draft && entry.state != .sent {
            try sink.emit(Records.outboxDraft(entry, now: now))
            listed += 1
        }
        try sink.finish()
        if listed == 0 { cli.noteForTerminal("no drafts") }
        return listed == 0 ? .noMatch : .success
    }

    public static func show(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try account(cli, store)
        let id = try draftID(cli.arguments.operands[0])
        guard let draft = try store.draft(id: id, accountID: account.id) else {
            throw CommandFailure(.dataError, "draft:\(id): no such draft in the store (hd-sync brings drafts made elsewhere)")
        }
        guard let message = try store.messageDetails(.message(draft.gmailID), accountID: account.id).first else {
            throw CommandFailure(.dataError, "draft:\(id): saved, but not synced yet; run hd-sync")
        }
        try cli.stdout.write(TerminalSafety.field("draft:\(id)") + "\n" + MessageView.text(message, labels: try LabelNames(store: store)))
        return .success
    }

    public static func send(_ cli: Invocation) async throws -> ExitStatus {
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try account(cli, store)
        let id = try draftID(cli.arguments.operands[0])
        // The draft as Gmail has it now (it may have been edited on another device).
        let access = try GmailAccess(email: account.email, configDirectory: try cli.configDirectory(),
                                     endpoints: try GmailEndpoints(environment: cli.environment))
        let draft: GmailDraft
        do {
            draft = try await access.interactive.getDraft(id: id, format: "raw")
        } catch GmailError.notFound {
            throw CommandFailure(.dataError, "draft:\(id): Gmail has no such draft (sent or deleted elsewhere?)")
        }
        let raw = Base64.decode(draft.message?.raw ?? "")
        let message: PreparedMessage
        // hd-drafts send stays as documented: the draft is read as before, line ends as
        // Gmail gave them (the bare-CR refusal is for a message the user gives hd-send).
        do { message = try RawMessage.prepare(raw, date: "", judgingLineEnds: false) { "" } } catch {
            // Gmail sends to what its header says; Hudson must read it the same way to
            // record where it went (the strict rule of OutgoingAddresses).
            throw CommandFailure(.dataError, "draft:\(id): its header cannot be read one way only (\(error)); send it from Gmail")
        }
        guard RawMessage.isSearchableMessageID(message.messageID) else {
            throw CommandFailure(.dataError, "draft:\(id): its Message-ID cannot be searched for, so a lost answer could not be checked; send it from Gmail")
        }
        guard !message.recipients.isEmpty else { throw CommandFailure(.dataError, "draft:\(id): the draft has no recipients") }
        let entry = try store.enqueueOutbox(NewOutboxMessage(
            accountID: account.id, raw: raw, messageID: message.messageID, threadID: draft.message?.threadId,
            recipients: message.recipients.map(\.address), subject: message.subject, kind: .draftSend, draftID: id,
            // What was read is what is sent: the sender checks the draft still has this message.
            draftBaseGmailID: draft.message?.id))
        try cli.stdout.write("\(entry.reference)\n")
        try cli.stdout.flush()
        let database = SharedStore(try cli.openStore(.readWrite, durable: true))
        let crashes = TestHooks.outboxCrashes(environment: cli.environment)
        let after = await OutboxAttempt.run(cli, database: database, id: entry.id, email: account.email,
                                            timeout: OutboxAttempt.timeout(forBytes: raw.count),
                                            afterSend: crashes.afterSend, afterDraftCheck: crashes.afterDraftCheck)
        switch after?.state {
        case .sent?:
            if let sent = after?.gmailID { try cli.stdout.write(TerminalSafety.field("message:\(sent)") + "\n") }
        case .failed?:
            throw CommandFailure(.dataError, "\(entry.reference): \(after?.lastError ?? "rejected by Gmail")")
        default:
            cli.warn("queued; the next hd-sync will send it")
        }
        return .success
    }

    public static func delete(_ cli: Invocation) async throws -> ExitStatus {
        let store = try cli.openStore(.readWrite)
        let account = try account(cli, store)
        let id = try draftID(cli.arguments.operands[0])
        let access = try GmailAccess(email: account.email, configDirectory: try cli.configDirectory(),
                                     endpoints: try GmailEndpoints(environment: cli.environment))
        do {
            try await access.interactive.deleteDraft(id: id)
        } catch GmailError.notFound {
            cli.warn("draft:\(id): Gmail no longer has it (deleted or sent already)")
        }
        // What sync would learn: the draft and its message are gone.
        if let known = try store.draft(id: id, accountID: account.id) {
            try store.deleteVanishedMessage(gmailID: known.gmailID, accountID: account.id)
        }
        try store.forgetDraft(id: id, accountID: account.id)
        return .success
    }
}
