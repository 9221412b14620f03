// hd-auth: connect Gmail accounts (OAuth for installed apps), list and remove them.
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore

private let lookback = OptionSpec.value(
    "lookback-days", name: "N", kind: .integer,
    help: "Backfill mail received up to N days before now; 0 for the whole mailbox. Fixed at consent.", default: "90")

private let keepRaw = OptionSpec.flag(
    "keep-raw", help: "Keep each message's RFC 822 source in the store (hd-auth set EMAIL keep-raw off stops it).")

private let spec = CommandSpec(
    name: "hd-auth",
    abstract: "Connect Gmail accounts, check them, list them, remove them.",
    subcommands: [
        CommandSpec(
            name: "login", abstract: "Authorise an account in the browser (OAuth with a loopback redirect).",
            discussion: """
                Prints the consent URL on standard error and opens a browser when one is available;
                the answer comes back to a listener on 127.0.0.1. The client secret file is the
                "Desktop app" JSON from Google Cloud (default: client_secret.json in the configuration directory).
                """,
            options: [
                .value("client-secret", name: "FILE", kind: .file, help: "Google's client secret JSON for a Desktop app."),
                .flag("no-browser", help: "Only print the consent URL."),
                lookback, keepRaw,
            ],
            access: .create,
            exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration]),
        CommandSpec(
            name: "add", abstract: "Add an account from a refresh token, without a browser (servers, tests).",
            options: [
                .value("client-secret", name: "FILE", kind: .file, help: "Google's client secret JSON for a Desktop app."),
                .value("refresh-token-file", name: "FILE", kind: .file, help: "A file holding the account's refresh token."),
                lookback, keepRaw,
            ],
            operands: [OperandSpec("EMAIL", kind: .account, help: "The account's address; checked against Gmail's profile.")],
            access: .create,
            exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration]),
        CommandSpec(
            name: "list", abstract: "List the accounts and the state of their credentials.",
            options: OutputOptions.all, access: .none,
            exitStatuses: [.usage, .configuration]),
        CommandSpec(
            name: "status", abstract: "Check each account's authorisation with one token refresh, and show its sync state.",
            discussion: """
                For each account (or EMAIL): whether its refresh token still works (one refresh, as hd-sync
                does it), the scopes Google granted, the backfill window, the last sync, and the queued
                changes, unsent messages and parked messages. Exits 77 when an account needs a new consent,
                naming the command that gives it; 78 when a credentials file cannot be used; 75 when the
                token endpoint could not answer.
                """,
            options: OutputOptions.all,
            operands: [OperandSpec("EMAIL", kind: .account, arity: .optional, help: "Only this account.")],
            access: .none,
            exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration]),
        CommandSpec(
            name: "set", abstract: "Change an account's setting: keep-raw on|off, agent-policy read-only|drafts|hold|direct.",
            discussion: """
                keep-raw on: from now on, bodies are fetched as RFC 822 sources (format=raw, the same
                quota as format=full) and each source is kept in the store, for hd-show --raw and
                hd-export without the network. Sources already stored stay when it is turned off.
                agent-policy: the most an agent using hd-mcp may do with the account, whatever
                hd-mcp --policy says: read-only (reads), drafts (and drafts), hold (default: and
                label changes and sends, each held for approval by hd-pending --approve), direct
                (changes go out as hd-mark's do; a first message to a recipient is still held).
                """,
            operands: [
                OperandSpec("EMAIL", kind: .account, help: "The account."),
                OperandSpec("SETTING", kind: .choice(["keep-raw", "agent-policy"]), help: "keep-raw or agent-policy."),
                OperandSpec("VALUE", help: "keep-raw: on or off; agent-policy: read-only, drafts, hold or direct."),
            ],
            access: .readWrite,
            exitStatuses: [.usage, .configuration]),
        CommandSpec(
            name: "remove", abstract: "Remove an account's credentials; --purge also deletes its mail from the store.",
            options: [.flag("purge", help: "Also delete the account's messages, labels and queued changes from the store.")],
            operands: [OperandSpec("EMAIL", kind: .account, help: "The account to remove.")],
            access: .readWrite,
            exitStatuses: [.usage, .notAuthorized, .configuration]),
    ],
    access: .none,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-auth's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
@MainActor
public func hdAuth() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    switch cli.arguments.subcommandPath.first {
    case "login": return try await AccountCommands.login(cli)
    case "add": return try await AccountCommands.add(cli)
    case "list": return try AccountCommands.list(cli)
    case "status": return try await AccountCommands.status(cli)
    case "set": return try AccountCommands.set(cli)
    case "remove": return try AccountCommands.remove(cli)
    default:
        throw UsageError("a command is needed (login, add, list, status, set, remove)")
    }
}}
