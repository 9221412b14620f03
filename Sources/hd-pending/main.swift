// hd-pending: every change queued and not yet confirmed by Gmail, and the outbox.
import HudsonCLI
import HudsonOutput
import HudsonStore

let spec = CommandSpec(
    name: "hd-pending",
    abstract: "List the changes and messages queued for Gmail and not yet confirmed.",
    discussion: """
        One record per queued label change: the message, the change (+LABEL or -LABEL), its
        state (pending: not sent yet; in_flight: sent, waiting for Gmail's history to
        confirm it), its age, attempts, the action that made it (for hd-undo), and the last
        error. Then one record per outbox entry (outbox:N, from hd-send): its state (queued;
        sending; unknown: a request went out and its answer was lost, so the next hd-sync
        looks for it before sending again; sent: waiting for hd-sync to bring it into the
        store; failed, with Gmail's reason), age, attempts, account, recipients, subject and
        last error. Reads the store only.
        """,
    options: [.flag("count", short: "c", help: "Print only the number of queued changes and messages.")] + OutputOptions.all,
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration])

Main.run(spec) { cli in
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let outbox = try store.pendingOutbox(accountID: account?.id)
    if cli.arguments.flag("count") {
        try cli.stdout.write("\(try store.queuedMutationCount(accountID: account?.id) + outbox.count)\n")
        return .success
    }
    let sink = cli.makeSink()
    let now = LocalTime.nowMilliseconds
    for row in try store.queuedMutations(accountID: account?.id) {
        try sink.emit(Records.queued(row, now: now))
    }
    for entry in outbox {
        try sink.emit(Records.outbox(entry, now: now))
    }
    try sink.finish()
    return .success
}
