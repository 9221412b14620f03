// hd-undo: undo the last hd-mark (or a given action) by queueing its inverse, or cancel a
// queued hd-send.
import HudsonCLI
import HudsonNetworkCLI
import HudsonStore

let spec = CommandSpec(
    name: "hd-undo",
    abstract: "Undo the last hd-mark, or the action ACTION-ID; or cancel the send outbox:N.",
    discussion: """
        Queues the inverse of every change the action made. A change not yet sent is simply
        cancelled; one already sent is reversed at Gmail. Undoing an action twice does
        nothing the second time. hd-pending shows action ids. With outbox:N, a message
        from hd-send that is still queued (in its --delay window, offline, or failed) is
        cancelled and never sent; one already sent, or being sent, cannot be undone (65).
        """,
    options: [.flag("no-flush", help: "Only queue the undo; do not try to send it now.")],
    operands: [OperandSpec("ACTION-ID", kind: .string, arity: .optional,
                           help: "The action to undo (default: the last one), or outbox:N to cancel a send.")],
    access: .readWrite,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

await Main.run(spec, classifiers: [NetworkExit.classify, OutboxAttempt.classify]) { cli in
    let operand = cli.arguments.operands.first
    if let operand, operand.hasPrefix("outbox:") {
        guard let id = Int64(operand.dropFirst("outbox:".count)), id > 0 else { throw UsageError("\(operand): not an outbox id") }
        let store = try cli.openStore(.readWrite, durable: true)
        if try store.cancelOutbox(id: id) == .alreadyCancelled {
            cli.warn("\(operand) was already cancelled")
        } else if Terminal.stderrIsTerminal {
            cli.warn("cancelled \(operand); it will not be sent")
        }
        return .success
    }
    var actionID: Int64?
    if let text = operand {
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
