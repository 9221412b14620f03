// hd-undo: undo the last hd-mark (or a given action) by queueing its inverse, or cancel a
// queued hd-send.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-undo",
    abstract: "Undo the last hd-mark, or the action ACTION-ID; or cancel the send outbox:N.",
    discussion: """
        Queues the inverse of every change the action made. A change not yet sent is simply
        cancelled; one already sent is reversed at Gmail. Undoing an action twice does
        nothing the second time. hd-pending shows action ids. With outbox:N, a message
        from hd-send that is still queued (in its --delay window, offline, or failed) is
        cancelled and never sent; one already sent, or being sent, cannot be undone (65).
        A held change (hd-mark --hold, or an agent's through hd-mcp) that was never sent
        is discarded by its undo; a held send (outbox:N) is cancelled. --list says who
        made each action (agent or user) and how many of its changes are held.
        """,
    options: [
        .flag("no-flush", help: "Only queue the undo; do not try to send it now."),
        .flag("list", help: "List the recent actions (newest first) instead of undoing one."),
        .value("limit", short: "n", name: "N", kind: .integer, help: "With --list, show at most N actions.", default: "20"),
        CheckpointHelper.option,
    ] + OutputOptions.all,
    operands: [OperandSpec("ACTION-ID", kind: .string, arity: .optional,
                           help: "The action to undo (default: the last one), or outbox:N to cancel a send.")],
    access: .readWrite,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-undo's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdUndo() -> Never { Main.run(spec) { cli in
    let operand = cli.arguments.operands.first
    if cli.arguments.flag("list") {
        let store = try cli.openStore(.readOnly)
        let account = try cli.selectedAccount(in: store)
        let sink = cli.makeSink()
        let limit = try cli.arguments.int("limit", range: 1...1_000_000) ?? 20
        for action in try store.recentActions(limit: limit, accountID: account?.id) {
            try sink.emit(Records.action(action))
        }
        try sink.finish()
        return .success
    }
    if let operand, operand.hasPrefix("outbox:") {
        guard let id = Int64(operand.dropFirst("outbox:".count)), id > 0 else { throw UsageError("\(TerminalSafety.quoted(operand)): not an outbox id") }
        let store = try cli.openStore(.readWrite, durable: true)
        if let scheduled = try store.cancelScheduledSend(draftEntry: id) {
            // A send-later (hd-send --at): cancelled here first, then its Gmail draft deleted.
            if !scheduled.cancelled { cli.warn("\(operand) was already cancelled") }
            if let draft = scheduled.draftID, !cli.deleteScheduledDraft(draft, in: store, entry: id) {
                cli.warn("cancelled \(operand); its Gmail draft draft:\(draft) could not be deleted now; the next hd-sync deletes it")
            } else if scheduled.cancelled && Terminal.stderrIsTerminal {
                cli.warn("cancelled \(operand); it will not be sent")
            }
            return .success
        }
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
        guard let id = Int64(digits), id > 0 else { throw UsageError("\(TerminalSafety.quoted(text)): not an action id") }
        actionID = id
    }
    let store = try cli.openStore(.readWrite, durable: true, checkpointAfterExit: true)
    let result = try store.undo(actionID: actionID, accountID: try cli.selectedAccount(in: store)?.id)
    if result.alreadyUndone {
        cli.warn("action \(result.actionID) was already undone")
        return .success
    }
    if Terminal.stderrIsTerminal {
        let restored = result.snoozesRestored > 0 ? ", \(result.snoozesRestored) wake time(s) put back" : ""
        cli.warn("undid action \(result.actionID): \(result.deltas.count) change(s)\(restored)")
    }
    if !cli.arguments.flag("no-flush") && !result.deltas.isEmpty {
        cli.pushQueuedChanges(for: result.deltas, in: store)
    }
    return .success
}}
