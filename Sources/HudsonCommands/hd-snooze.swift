// hd-snooze: the snoozed threads and their wake times; the wake check for cron.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-snooze",
    abstract: "List snoozed threads and reminders; wake the ones that are due.",
    discussion: """
        hd-mark snooze=WHEN and remind=WHEN set threads aside (hd-mark(1)). With no
        command, or list, one record per snoozed thread, soonest first, with its wake
        time. wake brings back every thread that is due, or that a message from someone
        else woke early (a reminder is cancelled by it instead), as one action hd-undo
        takes back, and sends the change to Gmail (hd-sync --push). hd-sync and
        hd-sync --watch run the same check after each pass; wake is for a cron job or a
        systemd timer when no watch runs (docs/scripting.md, "Timing").
        """,
    options: OutputOptions.all,
    subcommands: [
        CommandSpec(name: "list", abstract: "List snoozed threads, soonest first.", options: OutputOptions.all,
                    access: .readOnly, exitStatuses: [.usage, .temporaryFailure, .configuration]),
        CommandSpec(name: "wake", abstract: "Bring back the threads that are due, as one action.",
                    options: OutputOptions.all + [.flag("no-flush", help: "Only queue the change; do not try to send it now.")],
                    access: .readWrite, exitStatuses: [.usage, .temporaryFailure, .configuration]),
    ],
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .configuration],
    subcommandOptional: true)

/// hd-snooze's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdSnooze() -> Never { Main.run(spec) { cli in
    switch cli.arguments.subcommandPath.first {
    case "wake":
        let store = try cli.openStore(.readWrite, durable: true)
        let accounts = try cli.selectedAccount(in: store).map { [$0] } ?? store.accounts()
        let now = TimerOperand.now(cli) * 1000
        let sink = cli.makeSink()
        var deltas: [TriageDelta] = []
        for account in accounts {
            let report = try store.wakeSnoozes(accountID: account.id, now: now)
            for (thread, outcome) in report.outcomes {
                try sink.emit(Records.wake(threadID: thread, outcome: outcome, accountEmail: account.email, actionID: report.actionID))
            }
            deltas += report.deltas
        }
        try sink.finish()
        if !deltas.isEmpty && !cli.arguments.flag("no-flush") { cli.pushQueuedChanges(for: deltas, in: store) }
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
