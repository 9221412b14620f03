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
        Reads the store only, but for --drop.
        """,
    options: [
        .flag("count", short: "c", help: "Print only the number of records (queued changes and messages, or with --parked or --rejected, those)."),
        .flag("rejected", help: "List the changes Gmail refused for good in the last week, with its reason."),
        .flag("parked", help: "List the messages hd-sync parked after Gmail would not serve them."),
        .flag("drop", help: "With --parked: stop fetching the parked messages named, for good."),
    ] + OutputOptions.all,
    operands: [OperandSpec("REF", kind: .reference, arity: .many, help: "With --drop: message:ID or a message id; - for standard input.")],
    access: .readOnly,
    exitStatuses: [.partialFailure, .usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-pending's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdPending() -> Never { Main.run(spec) { cli in
    if cli.arguments.flag("drop") { return try dropParked(cli) }
    if !cli.arguments.operands.isEmpty { throw UsageError("operands go with --parked --drop") }
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let now = LocalTime.nowMilliseconds
    if cli.arguments.flag("parked") && cli.arguments.flag("rejected") {
        throw UsageError("--parked and --rejected cannot be combined")
    }
    let records: [Record]
    if cli.arguments.flag("rejected") {
        records = try store.rejectedLabelChanges(accountID: account?.id).map { Records.rejectedLabelChange($0, now: now) }
            + store.rejectedChanges(accountID: account?.id).map { Records.rejected($0, now: now) }
    } else if cli.arguments.flag("parked") {
        records = try store.parkedMessages(accountID: account?.id, includingDropped: true).map { Records.parked($0, now: now) }
    } else {
        records = try store.pendingLabelChanges(accountID: account?.id).map { Records.labelChange($0, now: now) }
            + store.queuedMutations(accountID: account?.id).map { Records.queued($0, now: now) }
            + store.pendingOutbox(accountID: account?.id).map { Records.outbox($0, now: now) }
    }
    if cli.arguments.flag("count") {
        try cli.stdout.write("\(records.count)\n")
        return .success
    }
    let sink = cli.makeSink()
    for record in records { try sink.emit(record) }
    try sink.finish()
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
