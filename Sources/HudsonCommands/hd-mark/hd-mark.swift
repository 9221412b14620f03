// hd-mark: triage — archive, read, star, trash, spam, label — instantly and offline-safe.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-mark",
    abstract: "Archive, mark read or unread, star, trash, report spam, or label threads and messages.",
    discussion: """
        ACTION is archive, unarchive, read, unread, star, unstar, trash, untrash, spam,
        unspam, important, unimportant, +LABEL or -LABEL (by name), snooze=WHEN or
        remind=WHEN. snooze=WHEN archives the thread and labels it Snoozed (made on first
        use) until WHEN, when it comes back to the inbox unread (checked by hd-sync and
        hd-snooze wake); a message from someone else wakes it early. remind=WHEN does the
        same to a thread awaiting a reply, and a reply cancels it. WHEN is
        YYYY-MM-DDTHH:MM, YYYY-MM-DD, +Nm, +Nh, +Nd, +Nw, tomorrow, tonight or a weekday,
        in local time (hudson-query(7)). trash and spam move a
        message out of the inbox and out of every list and search but in:trash, in:spam and
        in:anywhere; untrash and unspam put it back in the inbox. On a thread, star, unstar
        and unread apply to the newest message, every other action to every message that
        needs the change. References come from the
        operands or, with none, from standard input (the first field of each line, or an
        NDJSON object's id). The whole invocation is one local transaction that every
        command sees at once; it is then sent to Gmail (by hd-sync --push), or queued for
        the next hd-sync. With --hold, the change is held instead: every command shows it
        at once (hd-pending lists it as held), but nothing goes to Gmail until
        hd-pending --approve releases it; hd-undo discards it.
        """,
    options: [
        .flag("no-flush", help: "Only queue the change; do not try to send it now."),
        .flag("dry-run", short: "n", help: "Print what would be queued and change nothing."),
        .flag("json", help: "With --dry-run, print NDJSON records."),
        .flag("verbose", help: "Report the action and how long its local transaction took, even to a pipe."),
        .flag("hold", help: "Hold the change for approval (hd-pending --approve); send nothing."),
        .flag("create", help: "Create each +LABEL that does not exist (and say so) instead of failing."),
        CheckpointHelper.option,
    ],
    operands: [
        OperandSpec("ACTION", kind: .action, arity: .oneOrMore, help: "archive unarchive read unread star unstar trash untrash spam unspam important unimportant snooze=WHEN remind=WHEN +LABEL -LABEL"),
        OperandSpec("REF", kind: .reference, arity: .many, help: "thread:ID, message:ID, or a message id; - for standard input."),
    ],
    access: .readWrite,
    dashOperands: true,
    exitStatuses: [.partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-mark's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdMark() -> Never { Main.run(spec) { cli in
    var operands = cli.arguments.operands[...]
    var actions: [TriageAction] = []
    var timer: TimerOperand?
    while let first = operands.first, first != "-" {
        if let parsed = try TimerOperand(parsing: first, now: TimerOperand.now(cli)) {
            guard timer == nil else { throw UsageError("one snooze= or remind= per invocation") }
            timer = parsed
        } else if let action = TriageAction(parsing: first) {
            actions.append(action)
        } else {
            break
        }
        operands = operands.dropFirst()
    }
    guard !actions.isEmpty || timer != nil else {
        throw UsageError("no action (\(TriageAction.names.joined(separator: ", ")), snooze=WHEN, remind=WHEN, +LABEL, -LABEL)")
    }
    if timer != nil && (cli.arguments.flag("hold") || cli.arguments.flag("dry-run")) {
        throw UsageError("snooze= and remind= go without --hold and --dry-run")
    }
    if cli.arguments.flag("json") && !cli.arguments.flag("dry-run") { throw UsageError("--json goes with --dry-run") }
    var failures = 0
    var references: [Reference] = []
    for text in try cli.referenceTexts(Array(operands)) {
        if let reference = Reference(parsing: text) {
            references.append(reference)
        } else {
            cli.warn("\(TerminalSafety.quoted(text)): not a reference")
            failures += 1
        }
    }
    let dryRun = cli.arguments.flag("dry-run")
    let store = try cli.openStore(.readWrite, durable: true, checkpointAfterExit: !dryRun)
    let account = try cli.selectedAccount(in: store)
    let clock = ContinuousClock()
    let started = clock.now
    let creating = cli.arguments.flag("create")
    // The +LABELs no account of the references has yet: --create makes them, and says so.
    var missing: [String] = []
    if creating {
        let accounts = try account.map { [$0] } ?? store.accounts()
        for case .addLabel(let name) in actions where try accounts.contains(where: { try store.label(named: name, accountID: $0.id) == nil }) {
            if !missing.contains(name) { missing.append(name) }
        }
    }
    let holding = cli.arguments.flag("hold")
    let result: TriageResult
    if let timer {
        // A snooze's label belongs to one mailbox: the account chosen, or the only one.
        let owner = try cli.labelAccount(in: store)
        result = try store.snooze(timer.kind, until: timer.wakeAt * 1000, actions: actions, on: references, accountID: owner.id,
                                  description: ([timer.description] + actions.map(\.description)).joined(separator: " "),
                                  createLabels: creating)
    } else {
        result = try store.perform(actions, on: references, accountID: account?.id, dryRun: dryRun, createLabels: creating,
                                   held: holding)
    }
    let transaction = clock.now - started
    for name in missing { cli.warn("\(dryRun ? "would create" : "created") label \(TerminalSafety.quoted(Records.labelText(name)))") }
    for reference in result.unknownReferences {
        cli.warn("\(reference): no such \(reference.kindName)")
        failures += 1
    }
    if dryRun {
        let names = try LabelNames(store: store)
        let sink = cli.makeSink()
        for delta in result.deltas { try sink.emit(Records.delta(delta, labels: names)) }
        try sink.finish()
    } else if let actionID = result.actionID {
        // A moved wake time is a change with no label delta: counted on its own.
        let moved = result.snoozesSet > 0 && result.deltas.isEmpty ? ", \(result.snoozesSet) wake time(s) moved" : ""
        if holding {
            cli.warn("action \(actionID): \(result.deltas.count) change(s) held; hd-pending --approve action:\(actionID) sends them")
        } else if cli.arguments.flag("verbose") {
            cli.warn("action \(actionID): \(result.deltas.count) change(s) on \(result.threadCount) thread(s)\(moved), committed in \(transaction.millisecondsText)")
        } else if Terminal.stderrIsTerminal {
            cli.warn("action \(actionID): \(result.deltas.count) change(s)\(moved)")
        }
        if !cli.arguments.flag("no-flush") && !holding {
            cli.pushQueuedChanges(for: result.deltas, in: store)
        }
    } else if cli.arguments.flag("verbose") {
        cli.warn("nothing to change, in \(transaction.millisecondsText)")
    }
    return failures > 0 ? .partialFailure : .success
}}
