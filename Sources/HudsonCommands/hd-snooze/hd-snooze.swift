// hd-snooze: the snoozed threads and their wake times; the wake check for cron; late sends.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-snooze",
    abstract: "List snoozed threads and reminders; wake the ones that are due, and send scheduled mail.",
    discussion: """
        hd-mark snooze=WHEN and remind=WHEN set threads aside (hd-mark(1)). With no
        command, or list, one record per snoozed thread, soonest first, with its wake
        time. wake brings back every thread that is due, or that a message from someone
        else woke early (a reminder is cancelled by it instead), as one action hd-undo
        takes back, and sends the change to Gmail (hd-sync --push). wake also sends the
        messages hd-send --at scheduled whose time came (by running one hd-sync pass).
        hd-sync and hd-sync --watch do the same in each pass; wake is for a cron job or a
        systemd timer when no watch runs (docs/scripting.md, "Timing"). release outbox:N
        sends a scheduled message held for being late (hd-send --if-late hold); hd-undo
        outbox:N drops it.
        """,
    options: OutputOptions.all,
    subcommands: [
        CommandSpec(name: "list", abstract: "List snoozed threads, soonest first.", options: OutputOptions.all,
                    access: .readOnly, exitStatuses: [.usage, .temporaryFailure, .configuration]),
        CommandSpec(name: "wake", abstract: "Bring back the threads that are due, as one action.",
                    options: OutputOptions.all + [.flag("no-flush", help: "Only queue the change; do not try to send it now.")],
                    access: .readWrite, exitStatuses: [.usage, .temporaryFailure, .configuration]),
        CommandSpec(name: "release", abstract: "Send a scheduled message held for being late, now.",
                    options: [.flag("no-flush", help: "Only queue the change; do not try to send it now.")],
                    operands: [OperandSpec("OUTBOX", help: "outbox:N, as hd-send --at printed it.")],
                    access: .readWrite, exitStatuses: [.usage, .dataError, .temporaryFailure, .configuration]),
    ],
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .configuration],
    subcommandOptional: true)

/// hd-snooze's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdSnooze() -> Never { Main.run(spec) { cli in
    switch cli.arguments.subcommandPath.first {
    case "release":
        let text = cli.arguments.operands[0]
        guard text.hasPrefix("outbox:"), let id = Int64(text.dropFirst("outbox:".count)), id > 0 else {
            throw UsageError("\(TerminalSafety.quoted(text)): not outbox:N")
        }
        let store = try cli.openStore(.readWrite, durable: true)
        let send = try store.sendHeldLate(draftEntry: id)
        if !cli.arguments.flag("no-flush"), let email = try store.outboxEntry(id: send)?.accountEmail {
            _ = cli.runSyncPass(accountEmail: email)
        }
        // Said as it is after the pass (or without one): sent only once Gmail has it.
        let entry = try store.outboxEntry(id: send)
        if entry?.state == .sent {
            cli.warn("outbox:\(id) is sent as outbox:\(send)")
        } else if entry?.state == .failed {
            throw CommandFailure(.dataError, "outbox:\(id), sent as outbox:\(send): \(entry?.lastError ?? "rejected by Gmail")")
        } else {
            cli.warn("outbox:\(id) is queued to send as outbox:\(send); the next hd-sync will send it")
        }
    case "wake":
        let store = try cli.openStore(.readWrite, durable: true)
        let accounts = try cli.selectedAccount(in: store).map { [$0] } ?? store.accounts()
        let now = TimerOperand.now(cli) * 1000
        let sink = cli.makeSink()
        var deltas: [TriageDelta] = []
        var sending: [String] = [], unpushed: [Account] = []
        for account in accounts {
            let release = try store.releaseDueScheduledSends(accountID: account.id, now: now)
            // Also what an earlier check released or woke but did not get to send (killed,
            // offline): nothing else of a cron-only setup would ever send it.
            let unsent = try store.pendingOutbox(accountID: account.id)
                .contains { $0.kind == .draftSend && ($0.state == .queued || $0.state == .sending) }
            // And the drafts of sends cancelled offline, which only a pass deletes.
            let leftDrafts = try !store.cancelledScheduledDrafts(accountID: account.id).isEmpty
            if !release.released.isEmpty || unsent || leftDrafts { sending.append(account.email) }
            if try store.queuedMutations(accountID: account.id).contains(where: { !$0.held && $0.state == .pending }) {
                unpushed.append(account)
            }
            for id in release.heldLate {
                cli.warn("outbox:\(id): over an hour late, held (--if-late hold): hd-snooze release outbox:\(id) sends it, hd-undo outbox:\(id) drops it")
            }
            try store.settleSendReminders(accountID: account.id) { WhenText.describe($0 / 1000) }
            let report = try store.wakeSnoozes(accountID: account.id, now: now)
            for (thread, outcome) in report.outcomes {
                try sink.emit(Records.wake(threadID: thread, outcome: outcome, accountEmail: account.email, actionID: report.actionID))
            }
            deltas += report.deltas
        }
        try sink.finish()
        if !cli.arguments.flag("no-flush") {
            // A pass sends the released messages and the label changes both; else a push.
            for email in sending where !cli.runSyncPass(accountEmail: email) { cli.warn("queued; the next hd-sync will send it") }
            let pushed = deltas.filter { delta in !sending.contains { (try? store.account(id: delta.accountID)?.email) == $0 } }
            if !pushed.isEmpty { cli.pushQueuedChanges(for: pushed, in: store) }
            for account in unpushed where !sending.contains(account.email) && !pushed.contains(where: { $0.accountID == account.id }) {
                cli.pushQueuedChanges(account: account)
            }
        }
    default:
        let store = try cli.store()
        let account = try cli.selectedAccount(in: store)
        let names = try LabelNames(store: store)
        let sink = cli.makeSink()
        sink.heading(["THREAD", "WAKES", "KIND", "SENDER", "SUBJECT", "ACCOUNT"])
        for snooze in try store.snoozedThreads(accountID: account?.id) {
            try sink.emit(Records.snoozed(snooze, labels: names))
        }
        try sink.finish()
    }
    return .success
}}
