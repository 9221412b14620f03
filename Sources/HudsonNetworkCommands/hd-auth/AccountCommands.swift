/*!
 `hd-auth`'s subcommands: connecting an account (`login` through the browser, `add` from a
 refresh token), listing accounts, checking them (`status`), their settings (`set`) and
 removing them. hd-auth.swift declares the command and dispatches here.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore

@MainActor
public enum AccountCommands {
    /// The client file `--client-secret` names (else the one in the configuration
    /// directory): a regular file, bounded (InputFile); a FIFO or a device is refused,
    /// never waited on.
    static func clientSecret(_ cli: Invocation) throws -> ClientSecret {
        let path = try cli.arguments.string("client-secret") ?? cli.configDirectory() + "/client_secret.json"
        guard let bytes = try InputFile.read(path, limit: 1 << 20, what: "1 MiB, more than a client file holds",
                                             failing: .configuration) else {
            throw ClientSecretError.unreadable(path: path)
        }
        return try ClientSecret(json: Data(bytes))
    }

    static func lookbackDays(_ cli: Invocation) throws -> Int {
        try cli.arguments.int("lookback-days", range: 0...36_500) ?? 90
    }

    /// `hd-auth login`: consent in the browser, then the account added (or its credentials renewed).
    public static func login(_ cli: Invocation) async throws -> ExitStatus {
        let endpoints = try GmailEndpoints(environment: cli.environment)
        let lookbackDays = try lookbackDays(cli)
        let secret = try clientSecret(cli)
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
    }

    /// `hd-auth add EMAIL`: an account from a refresh token, checked with Google before anything is stored.
    public static func add(_ cli: Invocation) async throws -> ExitStatus {
        let endpoints = try GmailEndpoints(environment: cli.environment)
        let lookbackDays = try lookbackDays(cli)
        let email = cli.arguments.operands[0]
        guard let tokenFile = cli.arguments.string("refresh-token-file") else { throw UsageError("add needs --refresh-token-file FILE") }
        guard cli.arguments.string("client-secret") != nil else { throw UsageError("add needs --client-secret FILE") }
        let secret = try clientSecret(cli)
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
    }

    /// `hd-auth list`: every account, from the credentials and the store.
    public static func list(_ cli: Invocation) throws -> ExitStatus {
        let credentials = CredentialStore(configDirectory: try cli.configDirectory())
        let (emails, accounts) = try AccountRecord.known(cli, credentials: credentials, selected: nil)
        let sink = cli.makeSink()
        sink.heading(["ACCOUNT", "CREDENTIALS", "WINDOW", "BACKFILL", "LAST SYNC"])
        for email in emails.sorted() {
            let account = accounts.first { $0.email.lowercased() == email.lowercased() }
            try sink.emit(AccountRecord.make(email: email, account: account, credentials: credentials))
        }
        try sink.finish()
        if emails.isEmpty { cli.noteForTerminal("no accounts; run 'hd-auth login'") }
        return .success
    }

    /// `hd-auth status [EMAIL]`: one token refresh per account, the scopes, the window, what waits.
    public static func status(_ cli: Invocation) async throws -> ExitStatus {
        let endpoints = try GmailEndpoints(environment: cli.environment)
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
    }

    /// `hd-auth set EMAIL SETTING VALUE`: keep-raw, agent-policy.
    public static func set(_ cli: Invocation) throws -> ExitStatus {
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
    }

    /// `hd-auth remove EMAIL [--purge]`.
    public static func remove(_ cli: Invocation) throws -> ExitStatus {
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
    }

    /// `--keep-raw` at login or add turns keeping sources on (it never turns it off).
    static func applyKeepRaw(_ cli: Invocation, _ account: Account) throws {
        guard cli.arguments.flag("keep-raw") else { return }
        try cli.store().setKeepRaw(true, accountID: account.id)
    }
}
