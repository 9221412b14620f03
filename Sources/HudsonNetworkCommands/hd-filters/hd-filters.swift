// hd-filters: Gmail's own filters, and a rules file of your own, applied to the mail you have.
import HudsonCLI

private let applyOptions: [OptionSpec] = [
    .value("query", short: "q", name: "QUERY", kind: .query, help: "Only the messages this query selects too."),
    .flag("dry-run", short: "n", help: "Print every change it would queue and change nothing."),
    .flag("no-flush", help: "Only queue the changes; do not try to send them now."),
] + OutputOptions.all

private let changeStatuses: [ExitStatus] = [.partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration]

private let spec = CommandSpec(
    name: "hd-filters",
    abstract: "Replay Gmail's filters, and your own rules, on the mail in the store.",
    discussion: """
        Gmail applies its filters only to arriving mail. list shows each filter as a query
        of hudson-query(7) and hd-mark actions, and says what cannot be done locally (a
        forward); apply runs them, all or the ones named, on the stored messages they
        select, as one action that hd-undo takes back. list and apply read the filters
        from Gmail. The rules file ($XDG_CONFIG_HOME/hudson/rules) holds rules of your own,
        one a line: [NAME] QUERY => ACTION...; hd-sync runs them on new mail, once per
        message; rules check, apply and test work offline. See hd-filters(1).
        """,
    subcommands: [
        CommandSpec(name: "list", abstract: "List Gmail's filters as queries and hd-mark actions.",
                    options: OutputOptions.all, access: .readOnly,
                    exitStatuses: [.noMatch, .usage, .temporaryFailure, .notAuthorized, .configuration]),
        CommandSpec(name: "apply", abstract: "Apply Gmail's filters (all, or those named) to the stored mail, as one action.",
                    options: applyOptions,
                    operands: [OperandSpec("FILTER", kind: .string, arity: .many, help: "filter:ID (hd-filters list shows them).")],
                    access: .readWrite, exitStatuses: changeStatuses),
        CommandSpec(
            name: "rules", abstract: "The rules file: check, apply or test it.",
            subcommands: [
                CommandSpec(name: "check", abstract: "Parse the rules file and print each rule.", options: OutputOptions.all,
                            access: .none, exitStatuses: [.usage, .configuration]),
                CommandSpec(name: "apply", abstract: "Apply the rules to the stored mail, as one action.", options: applyOptions,
                            access: .readWrite, exitStatuses: changeStatuses),
                CommandSpec(name: "test", abstract: "Print which rules match the given messages or .eml files.",
                            operands: [OperandSpec("REF", kind: .file, arity: .many,
                                                   help: "message:ID, thread:ID, or an .eml file; - or none for standard input.")],
                            access: .readOnly, exitStatuses: [.noMatch, .partialFailure, .usage, .configuration]),
            ],
            access: .none, exitStatuses: [.usage, .configuration]),
    ],
    access: .none,
    exitStatuses: [.noMatch, .partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-filters' whole run: its own executable and the multi-call binary call it.
@MainActor
public func hdFilters() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    switch cli.arguments.subcommandPath {
    case ["list"]: return try await FiltersCommand.list(cli)
    case ["apply"]: return try await FiltersCommand.apply(cli)
    case ["rules", "check"]: return try FiltersCommand.rulesCheck(cli)
    case ["rules", "apply"]: return try FiltersCommand.rulesApply(cli)
    case ["rules", "test"]: return try FiltersCommand.rulesTest(cli)
    default: throw UsageError("expected list, apply, or rules check|apply|test")
    }
}}
