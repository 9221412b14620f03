// hd-pending: every change queued and not yet confirmed by Gmail.
import HudsonCLI
import HudsonOutput
import HudsonStore

let spec = CommandSpec(
    name: "hd-pending",
    abstract: "List the changes queued for Gmail and not yet confirmed.",
    discussion: """
        One record per queued label change: the message, the change (+LABEL or -LABEL), its
        state (pending: not sent yet; in_flight: sent, waiting for Gmail's history to
        confirm it), its age, attempts, the action that made it (for hd-undo), and the last
        error. Reads the store only.
        """,
    options: [.flag("count", short: "c", help: "Print only the number of queued changes.")] + OutputOptions.all,
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration])

Main.run(spec) { cli in
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    if cli.arguments.flag("count") {
        try cli.stdout.write("\(try store.queuedMutationCount(accountID: account?.id))\n")
        return .success
    }
    let sink = cli.makeSink()
    let now = LocalTime.nowMilliseconds
    for row in try store.queuedMutations(accountID: account?.id) {
        try sink.emit(Records.queued(row, now: now))
    }
    try sink.finish()
    return .success
}
