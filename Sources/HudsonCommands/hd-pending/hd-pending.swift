// hd-pending: every change queued and not yet confirmed by Gmail, and the outbox.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-pending",
    abstract: "List the changes and messages queued for Gmail and not yet confirmed.",
    discussion: """
        First one record per label operation (hd-labels create, rename, delete; hd-mark
        --create) not yet confirmed by Gmail: label:NAME, what it does, its state (pending;
        sent: Gmail answered, waiting for its label list to agree), age, attempts, account
        and last error. Then one record per queued label change: the message, the change (+LABEL or -LABEL), its
        state (pending: waiting to be sent; in_flight: sent, waiting for Gmail's history to
        confirm it), its age, attempts, the action that made it (for hd-undo), and the last
        error. A pending change whose request went out and whose answer was lost or refused
        for now may already be at Gmail (--json: attempted): it is sent again, and an undo
        reverses it at Gmail rather than cancelling it. Then one record per outbox entry
        (outbox:N, from hd-send): its state (queued; sending; unknown: a request went out
        and its answer was lost, so the next hd-sync looks for it before sending again;
        sent: waiting for hd-sync to bring it into the store; failed, with Gmail's reason),
        age, attempts, account, recipients, subject and last error. With --rejected,
        instead, one record per label operation and per change Gmail refused for good in the
        last week (it was dropped: the label and the message show Gmail's state): the change, rejected, its age, the
        action, account and Gmail's reason. With --parked, one record per message Gmail
        would not serve (parked by hd-sync): its stage (message: not in the store yet;
        body: its body), attempts, when it is tried again (or dropped), account and error.
        With --parked --drop, instead, the parked messages named (message:ID, operands or
        standard input) are dropped: hd-sync stops fetching them, and they no longer keep
        hd-sync --catch-up from completing; the listing still shows them, as dropped. A
        dropped message that Gmail's history names again is fetched like any other.
        Each change and outbox entry says who made it (origin: agent, from hd-mcp, or
        user) and whether it is held: shown at once by every command, but not sent to
        Gmail until approved. With --held, only the held ones. With --approve, instead,
        the held changes of the actions named (action:N) and the held sends named
        (outbox:N), or with --all every held one, are released: the changes are sent now
        (hd-sync --push) or by the next hd-sync, the messages by the next hd-sync. A
        held change is discarded with hd-undo action:N, a held send with hd-undo outbox:N.
        Reads the store only, but for --drop and --approve.
        """,
    options: [
        .flag("count", short: "c", help: "Print only the number of records (queued changes and messages, or with --parked or --rejected, those)."),
        .flag("rejected", help: "List the changes Gmail refused for good in the last week, with its reason."),
        .flag("parked", help: "List the messages hd-sync parked after Gmail would not serve them."),
        .flag("drop", help: "With --parked: stop fetching the parked messages named, for good."),
        .flag("held", help: "List only the changes and sends held for approval."),
        .flag("approve", help: "Release the held changes of action:N and the held sends outbox:N named (or --all)."),
        .flag("all", help: "With --approve: release every held change and send."),
        .flag("no-flush", help: "With --approve: do not try to send the released changes now."),
    ] + OutputOptions.all,
    operands: [OperandSpec("REF", kind: .reference, arity: .many,
                           help: "With --drop: message:ID or a message id; with --approve: action:N or outbox:N; - for standard input.")],
    access: .readOnly,
    exitStatuses: [.partialFailure, .usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-pending's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdPending() -> Never { Main.run(spec) { cli in
    if cli.arguments.flag("drop") { return try dropParked(cli) }
    if cli.arguments.flag("approve") { return try approveHeld(cli) }
    if cli.arguments.flag("all") { throw UsageError("--all goes with --approve") }
    if !cli.arguments.operands.isEmpty { throw UsageError("operands go with --parked --drop or --approve") }
    if cli.arguments.flag("held") && (cli.arguments.flag("parked") || cli.arguments.flag("rejected")) {
        throw UsageError("--held cannot be combined with --parked or --rejected")
    }
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let now = LocalTime.nowMilliseconds
    if cli.arguments.flag("parked") && cli.arguments.flag("rejected") {
        throw UsageError("--parked and --rejected cannot be combined")
    }

    let records: [Record]
    let empty: String
    var heading: [String]?
    if cli.arguments.flag("rejected") {
        records = try store.rejectedLabelChanges(accountID: account?.id).map { Records.rejectedLabelChange($0, now: now) }
            + store.rejectedChanges(accountID: account?.id).map { Records.rejected($0, now: now) }
        empty = "nothing rejected in the last week"
    } else if cli.arguments.flag("parked") {
        records = try store.parkedMessages(accountID: account?.id, includingDropped: true).map { Records.parked($0, now: now) }
        empty = "nothing parked"
    } else {
        let heldOnly = cli.arguments.flag("held")
        records = try PendingRecords.list(store, accountID: account?.id, heldOnly: heldOnly, now: now)
        empty = heldOnly ? "nothing held" : "nothing waiting for Gmail"
        heading = PendingRecords.heading
    }
    if cli.arguments.flag("count") {
        try cli.stdout.write("\(records.count)\n")
        return .success
    }
    let sink = cli.makeSink()
    if let heading { sink.heading(heading) }
    for record in records { try sink.emit(record) }
    try sink.finish()
    if records.isEmpty { cli.noteForTerminal(empty) }
    return .success
}}

/// `--parked --drop REF...`: drops the parked messages named (Store.dropParked) and prints
/// each as it is now; a reference that names no parked message is told, and makes it 2.
private func dropParked(_ cli: Invocation) throws -> ExitStatus {
    guard cli.arguments.flag("parked") else { throw UsageError("--drop goes with --parked") }
    if cli.arguments.flag("count") { throw UsageError("--drop and --count cannot be combined") }
    var failures = 0
    var ids: [String] = []
    for text in try cli.referenceTexts(cli.arguments.operands) {
        if case .message(let id)? = Reference(parsing: text) {
            ids.append(id)
        } else {
            cli.warn("\(TerminalSafety.quoted(text)): not a message (message:ID)")
            failures += 1
        }
    }
    let store = try cli.openStore(.readWrite)
    let account = try cli.selectedAccount(in: store)
    let dropped = try store.dropParked(gmailIDs: ids, accountID: account?.id)
    let found = Set(dropped.map(\.gmailID))
    for id in ids where !found.contains(id) {
        cli.warn("message:\(id): not parked")
        failures += 1
    }
    let now = LocalTime.nowMilliseconds
    let sink = cli.makeSink()
    for entry in dropped { try sink.emit(Records.parked(entry, now: now)) }
    try sink.finish()
    return failures > 0 ? .partialFailure : .success
}

/// `--approve action:N… outbox:N…|--all`: releases held changes and sends
/// (Store.approveHeld) and pushes the changes; a name with nothing held is told, and makes it 2.
private func approveHeld(_ cli: Invocation) throws -> ExitStatus {
    for flag in ["parked", "rejected", "held", "count", "drop"] where cli.arguments.flag(flag) {
        throw UsageError("--approve and --\(flag) cannot be combined")
    }
    let all = cli.arguments.flag("all")
    if all && !cli.arguments.operands.isEmpty { throw UsageError("--all takes no operands") }
    if !all && cli.arguments.operands.isEmpty { throw UsageError("--approve needs action:N or outbox:N operands, or --all") }
    var actions: [Int64] = [], outbox: [Int64] = []
    for text in all ? [] : try cli.referenceTexts(cli.arguments.operands) {
        if let id = HeldReference.action(text) {
            actions.append(id)
        } else if let id = HeldReference.outbox(text) {
            outbox.append(id)
        } else {
            throw UsageError("\(TerminalSafety.quoted(text)): not action:N or outbox:N")
        }
    }
    let store = try cli.openStore(.readWrite, durable: true)
    let account = try cli.selectedAccount(in: store)
    let approval = try store.approveHeld(actions: all ? nil : actions, outbox: all ? nil : outbox, accountID: account?.id)
    var failures = 0
    for id in approval.notHeldActions {
        cli.warn("action:\(id): nothing held")
        failures += 1
    }
    for id in approval.notHeldOutbox {
        cli.warn("outbox:\(id): not held")
        failures += 1
    }
    if Terminal.stderrIsTerminal {
        cli.warn("approved \(approval.changes) change(s) and \(approval.outbox.count) send(s)")
    }
    // hd-pending links no network code: a released send goes by hd-sync's outbox sender,
    // at once in one pass for its account (which also sends the account's released
    // changes), unless --no-flush; other accounts' released changes by a push.
    let sendNow = !cli.arguments.flag("no-flush")
    let sendingAccounts = Set(try approval.outbox.compactMap { try store.outboxEntry(id: $0)?.accountID })
    if sendNow {
        for id in sendingAccounts.sorted() {
            if let approved = try store.account(id: id) { _ = cli.runSyncPass(accountEmail: approved.email) }
        }
    }
    for id in approval.outbox {
        let delivery = sendNow ? try store.deliveryEntry(outbox: id) : nil
        switch delivery?.state {
        case .sent?: cli.warn("outbox:\(id): approved and sent")
        case .failed?:
            // Gmail refused it for good (a held draft deleted on another device: 404).
            failures += 1
            cli.warn("outbox:\(id): approved, not sent: \(TerminalSafety.quoted(delivery?.lastError ?? "refused by Gmail", limit: 200))")
        default: cli.warn("outbox:\(id): approved; the next hd-sync sends it")
        }
    }
    if approval.changes > 0 && sendNow {
        for id in approval.accountIDs.sorted() where !sendingAccounts.contains(id) {
            if let approved = try store.account(id: id) { _ = cli.pushQueuedChanges(account: approved) }
        }
    }
    return failures > 0 ? .partialFailure : .success
}
