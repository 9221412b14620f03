/*!
 What `hd-auth login` and `hd-auth add` share once they hold tokens: learn (or check)
 the address from `users.getProfile`, save the credentials (0600, atomically), and add
 the account to the store with its consent time and lookback, which fix the backfill
 window for good (CONTRACT.md "Accounts"). Nothing is stored when the address does not
 match.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonStore

public enum AccountSetup {
    /// The address the access token belongs to.
    public static func profileEmail(accessToken: OAuthAccessToken, endpoints: GmailEndpoints) async throws -> String {
        var configuration = GmailClientConfiguration()
        configuration.baseURL = endpoints.api
        configuration.lane = .interactive
        configuration.userAgent = "hudson/\(hudsonVersion)"
        NetworkPatience.interactive.configure(&configuration)
        let client = try GmailClient(configuration: configuration,
                                     tokenProvider: StaticAccessTokenProvider(token: accessToken.value))
        guard let email = try await client.getProfile().emailAddress, !email.isEmpty else {
            throw GmailError.invalidResponse("the profile has no email address")
        }
        return email
    }

    /// Saves the credentials and adds the account (or keeps it, on a repeated login).
    /// Returns the account and whether it is new.
    public static func register(
        email: String, clientSecret: ClientSecret, tokens: OAuthTokens, endpoints: GmailEndpoints,
        lookbackDays: Int, invocation: Invocation
    ) throws -> (Account, isNew: Bool) {
        let credential = OAuthCredential(
            email: email, clientSecret: clientSecret, tokens: tokens,
            tokenEndpoint: clientSecret.tokenEndpoint(override: endpoints.token),
            authEndpoint: clientSecret.authEndpoint(override: endpoints.auth), createdAt: Date())
        // The store first: one it refuses (78: a FIFO at its path, a newer schema) must not
        // leave credentials behind for an account that was never added.
        let store = try invocation.store()
        let configDirectory = try invocation.configDirectory()
        try Paths.makeDirectories(configDirectory)
        try CredentialStore(configDirectory: configDirectory).save(credential)
        if let existing = try store.account(email: email) {
            // A repeated login keeps the account; an explicit --lookback-days widens it.
            if invocation.arguments.isGiven("lookback-days") && lookbackDays != existing.lookbackDays {
                try store.widenBackfillWindow(accountID: existing.id, lookbackDays: lookbackDays)
                invocation.warn("\(email): backfill window widened to \(lookbackDays == 0 ? "the whole mailbox" : "\(lookbackDays) days")")
                if lookbackDays == 0 { warnWholeMailbox(email: email, invocation: invocation) }
            }
            return (try store.account(id: existing.id) ?? existing, false)
        }
        let account = try store.addAccount(
            email: email, consentedAt: Int64(Date().timeIntervalSince1970), lookbackDays: lookbackDays)
        if lookbackDays == 0 { warnWholeMailbox(email: email, invocation: invocation) }
        return (account, true)
    }

    /// A whole mailbox gets the bodies of recent mail only: said when an account is added
    /// with it or widened to it, not after a search of older mail quietly missed its words.
    static func warnWholeMailbox(email: String, invocation: Invocation) {
        invocation.warn("\(email): the whole mailbox: hd-sync stores the bodies of the last 90 days"
                        + " (--prefetch-days); older mail is searched by subject, addresses and snippet only; "
                        + SearchNotes.bodyCost(messages: nil))
    }
}
