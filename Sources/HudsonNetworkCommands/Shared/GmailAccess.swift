/*!
 How a command reaches Gmail for an account: the endpoints from the environment
 (CONTRACT.md "Endpoints"), the stored credentials, one token provider, and two clients
 sharing one quota bucket — the interactive lane (triage, sends, on-demand bodies)
 and the background lane (polling, backfill, hydration). The bucket accounts through the
 account's quota ledger (HudsonQuotaLedger), so every process of the account spends one
 per-user budget (issue 17, point 5).
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonQuotaLedger

public struct GmailEndpoints: Sendable {
    public var api: URL
    public var token: URL?
    public var auth: URL?
    /// The per-user quota in units per minute (`HUDSON_QUOTA_PER_MINUTE`): Gmail's current
    /// 6,000 by default; projects created before May 2026 have 15,000 (gmail-api.md §3).
    public var quotaPerMinute: Int

    /// `HUDSON_GMAIL_URL`, `HUDSON_OAUTH_TOKEN_URL`, `HUDSON_OAUTH_AUTH_URL`; unset means Google's.
    public init(environment: [String: String]) throws {
        func url(_ name: String) throws -> URL? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw CommandFailure(.configuration, "\(name): \(text): not a URL")
            }
            return url
        }
        api = try url("HUDSON_GMAIL_URL") ?? URL(string: "https://gmail.googleapis.com")!
        token = try url("HUDSON_OAUTH_TOKEN_URL")
        auth = try url("HUDSON_OAUTH_AUTH_URL")
        LocalServer.note(api)
        if let text = environment["HUDSON_QUOTA_PER_MINUTE"], !text.isEmpty {
            guard let value = Int(text), value > 0 else {
                throw CommandFailure(.configuration, "HUDSON_QUOTA_PER_MINUTE: \(text): not a positive number")
            }
            quotaPerMinute = value
        } else {
            quotaPerMinute = 6_000
        }
    }
}

/// How long a command waits on the token endpoint and on Gmail. A person is waiting on an
/// interactive command (`hd-show`, `hd-send`, `hd-auth`, `hd-sync` and its `--push` from
/// `hd-mark`), so it gives up soon and says so: exit 75, and whatever it queued stays queued. A
/// catch-up or a watch runs unattended and may wait out a slow server. docs/reliability.md
/// ("What servers are allowed to make Hudson do") gives the figures.
public enum NetworkPatience: Sendable {
    case interactive
    case unattended

    /// The longest one token request may take, connection to last byte.
    public var tokenRequestTimeout: TimeInterval {
        switch self {
        case .interactive: return 5
        case .unattended: return 30
        }
    }

    /// Gmail's per-exchange timeout and the span within which a failed request is retried.
    func configure(_ configuration: inout GmailClientConfiguration) {
        switch self {
        case .interactive:
            configuration.requestTimeout = .seconds(10)
            configuration.maxRetryDuration = .seconds(10)
        case .unattended:
            configuration.requestTimeout = .seconds(30)
            configuration.maxRetryDuration = .seconds(60)
        }
    }
}

/// The Gmail clients of one account.
public struct GmailAccess: Sendable {
    public let email: String
    public let interactive: GmailClient
    public let background: GmailClient
    /// The file through which this account's processes share the quota.
    public let quotaLedgerPath: String

    /// The bucket both clients charge.
    public var quota: QuotaBucket { interactive.quota }

    /// Whether the quota is shared with the account's other processes right now; a command
    /// may report `.fellBack` (the ledger could not be opened or written, and this process
    /// schedules against the whole budget on its own).
    public func quotaSharing() async -> QuotaSharing { await quota.sharing }

    /// Loads the account's credentials (refusing too-open files) and builds its clients.
    public init(email: String, configDirectory: String, endpoints: GmailEndpoints, patience: NetworkPatience = .interactive) throws {
        let store = CredentialStore(configDirectory: configDirectory)
        try self.init(email: email, credential: try store.load(email: email), store: store, endpoints: endpoints, patience: patience)
    }

    /// The clients of credentials already loaded from `store` (where refreshed access tokens
    /// are cached).
    init(email: String, credential: OAuthCredential, store: CredentialStore, endpoints: GmailEndpoints,
         patience: NetworkPatience) throws {
        let configDirectory = store.configDirectory
        let tokens = try OAuthTokenProvider(credential: credential, store: store, tokenEndpointOverride: endpoints.token,
                                            requestTimeout: patience.tokenRequestTimeout)
        var bucket = QuotaBucket.Configuration()
        bucket.budget = endpoints.quotaPerMinute
        quotaLedgerPath = Self.quotaLedgerPath(configDirectory: configDirectory, email: email)
        let quota = QuotaBucket(configuration: bucket, ledger: SQLiteQuotaLedger(path: quotaLedgerPath))
        var configuration = GmailClientConfiguration()
        configuration.baseURL = endpoints.api
        configuration.userAgent = "hudson/\(hudsonVersion)"
        patience.configure(&configuration)
        configuration.lane = .interactive
        interactive = try GmailClient(configuration: configuration, tokenProvider: tokens, quota: quota)
        configuration.lane = .background
        background = try GmailClient(configuration: configuration, tokenProvider: tokens, quota: quota)
        self.email = email
    }
}

extension GmailAccess {
    /// `<configuration directory>/quota/<email>.sqlite3`. Beside the credentials rather than
    /// beside the store: Gmail's per-user quota belongs to the user and the OAuth client,
    /// which is what `credentials/<email>.json` names, so every process spending that quota
    /// finds the same ledger whichever store it uses (`--db`, `$HUDSON_DB`); and this is the
    /// one place every caller of `GmailAccess` already names. The file is opened on first use.
    public static func quotaLedgerPath(configDirectory: String, email: String) -> String {
        var directory = configDirectory
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        return "\(directory)/quota/\(LockFile.fileName(email)).sqlite3"
    }
}
