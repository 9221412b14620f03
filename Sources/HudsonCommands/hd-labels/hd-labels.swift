// hd-labels: every label with its counts; create, rename and delete labels, local-first.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let statuses: [ExitStatus] = [.usage, .dataError, .temporaryFailure, .notAuthorized, .configuration]

private let spec = CommandSpec(
    name: "hd-labels",
    abstract: "List labels with their counts; create, rename and delete labels.",
    discussion: """
        With no command, one record per label with its message, thread and unread-thread
        counts. Counts include changes queued by hd-mark and not yet sent, and labels
        created, renamed or deleted here and not yet confirmed by Gmail, as every command
        shows them. create, rename and delete change what every command shows at once, offline
        too, and are sent to Gmail by hd-sync (tried at once unless --no-flush).
        """,
    options: OutputOptions.all,
    subcommands: [
        CommandSpec(
            name: "create", abstract: "Create a label; nest it with / (Travel/2026).",
            options: [
                .value("color", name: "TEXT:BACKGROUND",
                       help: "Text and background colors from Gmail's palette, e.g. #000000:#16a766."),
                .flag("no-flush", help: "Only record the label; do not try to send it now."),
            ],
            operands: [OperandSpec("NAME", help: "The label's name, as Gmail shows it.")],
            access: .readWrite, exitStatuses: statuses),
        CommandSpec(
            name: "rename", abstract: "Rename a label; every message keeps it.",
            options: [.flag("no-flush", help: "Only record the new name; do not try to send it now.")],
            operands: [OperandSpec("OLD", kind: .label, help: "The label's name."),
                       OperandSpec("NEW", help: "Its new name.")],
            access: .readWrite, exitStatuses: statuses),
        CommandSpec(
            name: "delete", abstract: "Delete a label; every message loses it.",
            discussion: "Says how many messages lose the label and asks first on a terminal; a script gives --yes.",
            options: [
                .flag("yes", short: "y", help: "Delete without asking (required when standard input is not a terminal)."),
                .flag("no-flush", help: "Only record the deletion; do not try to send it now."),
            ],
            operands: [OperandSpec("NAME", kind: .label, help: "The label's name.")],
            access: .readWrite, exitStatuses: statuses),
    ],
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration],
    subcommandOptional: true)

/// Sends the operation at once (unless --no-flush); when Gmail refused it for good,
/// says so with Gmail's reason and exits 65: it was undone locally.
private func push(_ cli: Invocation, _ store: Store, account: Account, labelID: String, since: Int64) throws -> ExitStatus {
    guard !cli.arguments.flag("no-flush") else { return .success }
    cli.pushQueuedChanges(account: account)
    guard let refusal = try store.rejectedLabelChanges(accountID: account.id)
        .first(where: { $0.labelID == labelID && $0.rejectedAt >= since }) else { return .success }
    cli.warn("Gmail refused it: \(refusal.reason); undone here (hd-pending --rejected lists it)")
    return .dataError
}

/// hd-labels's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdLabels() -> Never { Main.run(spec) { cli in
    let operands = cli.arguments.operands
    switch cli.arguments.subcommandPath.first {
    case "create":
        var color: LabelColorChoice?
        if let text = cli.arguments.string("color") {
            guard let parsed = LabelColorChoice(parsing: text) else {
                throw UsageError("--color: \(TerminalSafety.quoted(text)): expected TEXT:BACKGROUND, two colors of Gmail's palette (hd-labels(1))")
            }
            color = parsed
        }
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try cli.labelAccount(in: store)
        let started = store.now
        let label = try store.createLabel(name: operands[0], color: color, accountID: account.id)
        cli.warn("created label \(TerminalSafety.quoted(Records.labelText(label.displayName)))")
        return try push(cli, store, account: account, labelID: label.id, since: started)
    case "rename":
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try cli.labelAccount(in: store)
        let started = store.now
        let (old, new) = try store.renameLabel(operands[0], to: operands[1], accountID: account.id)
        cli.warn("renamed label \(TerminalSafety.quoted(Records.labelText(old.displayName))) to \(TerminalSafety.quoted(Records.labelText(new.displayName)))")
        return try push(cli, store, account: account, labelID: old.id, since: started)
    case "delete":
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try cli.labelAccount(in: store)
        let impact = try store.labelDeletionImpact(operands[0], accountID: account.id)
        let name = TerminalSafety.quoted(Records.labelText(impact.label.displayName))
        if !cli.arguments.flag("yes"),
           !(try cli.confirm("delete label \(name)? \(impact.messages) message(s) lose it")) {
            cli.warn("not deleted")
            return .success
        }
        let started = store.now
        let deletion = try store.deleteLabel(operands[0], accountID: account.id)
        cli.warn("deleted label \(name): \(deletion.messages) message(s) lose it")
        return try push(cli, store, account: account, labelID: deletion.label.id, since: started)
    default:
        let store = try cli.store()
        let account = try cli.selectedAccount(in: store)
        let names = try LabelNames(store: store)
        let sink = cli.makeSink()
        sink.heading(["LABEL", "MESSAGES", "THREADS", "UNREAD", "ACCOUNT"])
        for count in try store.labelCounts(accountID: account?.id) {
            try sink.emit(Records.label(count, labels: names))
        }
        try sink.finish()
    }
    return .success
}}
