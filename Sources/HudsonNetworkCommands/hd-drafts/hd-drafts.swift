// hd-drafts: Gmail drafts, listed, shown, sent once and deleted.
import HudsonCLI

private let draftOperand = OperandSpec("DRAFT", kind: .string, help: "The draft: draft:ID (hd-drafts list shows them).")

private let spec = CommandSpec(
    name: "hd-drafts",
    abstract: "Gmail drafts: list, show, send once, delete.",
    discussion: """
        Drafts are the ones Gmail's web and mobile apps show. hd-send --draft saves a new
        draft and hd-send --update-draft DRAFT replaces one, through the outbox (offline
        too); sync brings drafts made or edited elsewhere. list and show read the store;
        send sends a draft through the outbox, once, as hd-send sends; delete deletes it
        in Gmail for good.
        """,
    subcommands: [
        CommandSpec(name: "list", abstract: "List the drafts: draft:ID, date, recipients, subject (and outbox:N saved offline).",
                    options: OutputOptions.all, access: .readOnly, exitStatuses: [.noMatch, .usage, .configuration]),
        CommandSpec(name: "show", abstract: "Show a draft's headers and body.", operands: [draftOperand], access: .readOnly,
                    exitStatuses: [.usage, .dataError, .configuration]),
        CommandSpec(name: "send", abstract: "Send a draft, once: outbox:N at once, message:ID when Gmail has sent it.",
                    operands: [draftOperand], access: .readWrite,
                    exitStatuses: [.usage, .dataError, .temporaryFailure, .notAuthorized, .configuration]),
        CommandSpec(name: "delete", abstract: "Delete a draft in Gmail, for good (not to Trash).", operands: [draftOperand],
                    access: .readWrite, exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration]),
    ],
    access: .none,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-drafts' whole run: its own executable and the multi-call binary call it.
@MainActor
public func hdDrafts() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    switch cli.arguments.subcommandPath.first {
    case "list": return try DraftsCommand.list(cli)
    case "show": return try DraftsCommand.show(cli)
    case "send": return try await DraftsCommand.send(cli)
    default: return try await DraftsCommand.delete(cli)
    }
}}
