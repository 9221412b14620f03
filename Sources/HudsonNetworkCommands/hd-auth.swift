// hd-auth: connect Gmail accounts (OAuth for installed apps), list and remove them.
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonNetworkCLI
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
    let endpoints = try GmailEndpoints(environment: cli.environment)
    let lookbackDays = try cli.arguments.int("lookback-days", range: 0...36_500) ?? 90
    func clientSecret() throws -> ClientSecret {
        let path = try cli.arguments.string("client-secret") ?? cli.configDirectory() + "/client_secret.json"
        // A regular file, bounded (InputFile): a FIFO or a device is refused, never waited on.
        guard let bytes = try InputFile.read(path, limit: 1 << 20, what: "1 MiB, more than a client file holds",
                                             failing: .configuration) else {
            throw ClientSecretError.unreadable(path: path)
        }
        return try ClientSecret(json: Data(bytes))
    }

    switch cli.arguments.subcommandPath.first {
    case "login":
        let secret = try clientSecret()
        let openBrowser = !cli.arguments.flag("no-browser")
            && ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { !(cli.environment[$0] ?? "").isEmpty }
        let tokens = try await OAuthLogin.run(clientSecret: secret, authEndpoint: endpoints.auth, tokenEndpoint: endpoints.token) { url in
            writeError("hd-auth: open this address to let Hudson use your Gmail:\n\n  \(url.absoluteString)\n\n")
            if openBrowser { Browser.open(url) }
        }
        let email = try await AccountSetup.profileEmail(accessToken: tokens.accessToken, endpoints: endpoints)
        let (account, isNew) = try AccountSetup.register(
            email: email, clientSecret: secret, tokens: tokens, endpoints: endpoints, lookbackDays: lookbackDays, invocation: cli)
        try applyKeepRaw(cli, account)
        cli.warn("\(account.email): \(isNew ? "added" : "credentials renewed"); run hd-sync to fetch mail")
        return .success

    case "add":
        let email = cli.arguments.operands[0]
        guard let tokenFile = cli.arguments.string("refresh-token-file") else { throw UsageError("add needs --refresh-token-file FILE") }
        guard cli.arguments.string("client-secret") != nil else { throw UsageError("add needs --client-secret FILE") }
        let secret = try clientSecret()
        // A regular file, bounded (InputFile): a FIFO, a device or a huge file is refused
        // here, and so is text no refresh token can be, before anything is sent to Google.
        let shownFile = TerminalSafety.quoted(tokenFile)
        guard let contents = try InputFile.read(tokenFile, limit: OAuthTokenClient.maximumTokenLength + 1024,
                                                what: "a refresh token", failing: .configuration),
              let refreshToken = String(validating: contents, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines),
              !refreshToken.isEmpty
        else { throw CommandFailure(.configuration, "\(shownFile): cannot read a refresh token") }
        guard refreshToken.utf8.count <= OAuthTokenClient.maximumTokenLength,
              refreshToken.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw CommandFailure(.configuration, "\(shownFile): not a refresh token (one line of printable ASCII, at most \(OAuthTokenClient.maximumTokenLength) bytes)")
        }
        // The same scope check as a login: a token that cannot modify mail is refused before anything is stored.
        let client = try OAuthTokenClient(clientSecret: secret, tokenEndpointOverride: endpoints.token,
                                          requestTimeout: NetworkPatience.interactive.tokenRequestTimeout)
        let access = try await client.refresh(refreshToken: refreshToken)
        let actual = try await AccountSetup.profileEmail(accessToken: access, endpoints: endpoints)
        guard actual.lowercased() == email.lowercased() else {
            throw CommandFailure(.notAuthorized, "\(email): the refresh token belongs to \(actual); nothing was stored")
        }
        let (account, isNew) = try AccountSetup.register(
            email: actual, clientSecret: secret, tokens: OAuthTokens(accessToken: access, refreshToken: refreshToken),
            endpoints: endpoints, lookbackDays: lookbackDays, invocation: cli)
        try applyKeepRaw(cli, account)
        cli.warn("\(account.email): \(isNew ? "added" : "credentials renewed")")
        return .success

    case "list":
        let credentials = CredentialStore(configDirectory: try cli.configDirectory())
        let (emails, accounts) = try AccountRecord.known(cli, credentials: credentials, selected: nil)
        let sink = cli.makeSink()
        for email in emails.sorted() {
            let account = accounts.first { $0.email.lowercased() == email.lowercased() }
            try sink.emit(AccountRecord.make(email: email, account: account, credentials: credentials))
        }
        try sink.finish()
        return .success

    case "status":
        let credentials = CredentialStore(configDirectory: try cli.configDirectory())
        let (emails, accounts) = try AccountRecord.known(cli, credentials: credentials, selected: cli.arguments.operands.first)
        guard !emails.isEmpty else { throw CommandFailure(.notAuthorized, "no accounts; run 'hd-auth login'") }
        let store = accounts.isEmpty ? nil : try cli.openStore(.readOnly)
        let defaultSecret = try cli.configDirectory() + "/client_secret.json"
        let loginCommand = FileManager.default.fileExists(atPath: defaultSecret)
            ? OAuthGuidance.loginCommand : OAuthGuidance.loginCommand + " --client-secret FILE"
        let sink = cli.makeSink()
        sink.heading(["ACCOUNT", "TOKEN", "SCOPES", "WINDOW", "BACKFILL", "LAST SYNC", "QUEUE", "OUTBOX", "PARKED"])
        var statuses: [AccountStatus] = []
        for email in emails.sorted() {
            let account = accounts.first { $0.email.lowercased() == email.lowercased() }
            let status = await AccountStatus.check(email: email, account: account, store: store, credentials: credentials,
                                                   endpoints: endpoints, loginCommand: loginCommand)
            try sink.emit(status.record)
            statuses.append(status)
        }
        try sink.finish()
        for status in statuses {
            if let problem = status.problem { cli.warn("\(status.email): \(problem)") }
            if let fix = status.fix {
                let file = fix.hasSuffix("FILE") ? " (FILE: the Desktop app client JSON downloaded from Google Cloud)" : ""
                cli.warn("\(status.email): to grant access again, run: \(fix)\(file)")
            }
        }
        return AccountStatus.exitStatus(statuses)

    case "set":
        let (email, setting, value) = (cli.arguments.operands[0], cli.arguments.operands[1], cli.arguments.operands[2])
        if setting == "agent-policy" {
            guard let policy = AgentPolicy(rawValue: value) else {
                throw UsageError("agent-policy: \(TerminalSafety.quoted(value)): not \(AgentPolicy.names.joined(separator: ", "))")
            }
            let store = try cli.store()
            let account = try store.requireAccount(email: email)
            try store.setAgentPolicy(policy, accountID: account.id)
            cli.warn("\(account.email): agent-policy \(policy.rawValue)")
            return .success
        }
        guard setting == "keep-raw" else { throw UsageError("\(TerminalSafety.quoted(setting)): not a setting (keep-raw, agent-policy)") }
        guard value == "on" || value == "off" else { throw UsageError("keep-raw: \(TerminalSafety.quoted(value)): not on or off") }
        let store = try cli.store()
        let account = try store.requireAccount(email: email)
        try store.setKeepRaw(value == "on", accountID: account.id)
        cli.warn("\(account.email): keep-raw \(value)")
        return .success

    case "remove":
        let email = cli.arguments.operands[0]
        let credentials = CredentialStore(configDirectory: try cli.configDirectory())
        var removed = false
        if (try? credentials.list())?.contains(where: { $0.lowercased() == email.lowercased() }) == true {
            try credentials.remove(email: email)
            removed = true
        }
        if cli.arguments.flag("purge"), FileManager.default.fileExists(atPath: try cli.storePath()) {
            removed = try cli.store().removeAccount(email: email) || removed
        }
        guard removed else { throw StoreError.unknownAccount(email) }
        cli.warn("\(email): removed\(cli.arguments.flag("purge") ? " with its mail" : "; its mail stays in the store (--purge deletes it)")")
        return .success

    default:
        throw UsageError("a command is needed (login, add, list, status, set, remove)")
    }
}}

/// `--keep-raw` at login or add turns keeping sources on (it never turns it off).
private func applyKeepRaw(_ cli: Invocation, _ account: Account) throws {
    guard cli.arguments.flag("keep-raw") else { return }
    try cli.store().setKeepRaw(true, accountID: account.id)
}
