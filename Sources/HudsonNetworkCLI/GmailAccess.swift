/*!
 How a command reaches Gmail for an account: the endpoints from the environment
 (CONTRACT.md "Endpoints"), the stored credentials, one token provider, and two clients
 sharing one quota bucket — the interactive lane (triage, sends, on-demand bodies)
 and the background lane (polling, backfill, hydration).
 */
import Foundation
import HudsonCLI
import HudsonGmail

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

/// The Gmail clients of one account.
public struct GmailAccess: Sendable {
    public let email: String
    public let interactive: GmailClient
    public let background: GmailClient

    /// Loads the account's credentials (refusing too-open files) and builds its clients.
    public init(email: String, configDirectory: String, endpoints: GmailEndpoints) throws {
        let store = CredentialStore(configDirectory: configDirectory)
        let credential = try store.load(email: email)
        let tokens = try OAuthTokenProvider(credential: credential, store: store, tokenEndpointOverride: endpoints.token)
        var bucket = QuotaBucket.Configuration()
        bucket.budget = endpoints.quotaPerMinute
        let quota = QuotaBucket(configuration: bucket)
        var configuration = GmailClientConfiguration()
        configuration.baseURL = endpoints.api
        configuration.userAgent = "hudson/\(hudsonVersion)"
        configuration.lane = .interactive
        interactive = try GmailClient(configuration: configuration, tokenProvider: tokens, quota: quota)
        configuration.lane = .background
        background = try GmailClient(configuration: configuration, tokenProvider: tokens, quota: quota)
        self.email = email
    }
}
