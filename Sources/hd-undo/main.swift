// hd-undo: undo the last hd-mark (or a given action) by queueing its inverse.
import HudsonCLI
import HudsonNetworkCLI
import HudsonStore

let spec = CommandSpec(
    name: "hd-undo",
    abstract: "Undo the last hd-mark, or the action ACTION-ID.",
    discussion: """
        Queues the inverse of every change the action made. A change not yet sent is simply
        cancelled; one already sent is reversed at Gmail. Undoing an action twice does
        nothing the second time. hd-pending shows action ids.
        """,
    options: [.flag("no-flush", help: "Only queue the undo; do not try to send it now.")],
    operands: [OperandSpec("ACTION-ID", kind: .integer, arity: .optional, help: "The action to undo (default: the last one).")],
    access: .readWrite,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    var actionID: Int64?
    if let text = cli.arguments.operands.first {
        let digits = text.hasPrefix("action:") ? String(text.dropFirst("action:".count)) : text
        guard let id = Int64(digits), id > 0 else { throw UsageError("\(text): not an action id") }
        actionID = id
    }
    let store = try cli.openStore(.readWrite, durable: true)
    let result = try store.undo(actionID: actionID)
    if result.alreadyUndone {
        cli.warn("action \(result.actionID) was already undone")
        return .success
    }
    if Terminal.stderrIsTerminal { cli.warn("undid action \(result.actionID): \(result.deltas.count) change(s)") }
    if !cli.arguments.flag("no-flush") && !result.deltas.isEmpty {
        let emails = Set(result.deltas.map(\.accountID)).compactMap { id in try? store.account(id: id)?.email }
        await FlushAttempt.run(cli, accounts: emails.sorted())
    }
    return .success
}
