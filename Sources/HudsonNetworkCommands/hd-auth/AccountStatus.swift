/*!
 `hd-auth status`: whether each account's authorisation works right now, and what it has
 done. The check is one refresh through the same token provider `hd-sync` uses, so a
 status of "ok" means the next sync can get an access token; the scopes are the ones the
 token endpoint's answer grants, not the ones saved at consent (a permission taken back on
 the Google account page shows here first). The rest comes from the store: the backfill
 window, the last sync, queued changes, the outbox and parked messages.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore

public struct AccountStatus: Sendable {
    /// What one refresh said.
    public enum Refresh: String, Sendable {
        case ok
        /// `invalid_grant`: revoked, expired (7 days for a "Testing" client), password changed.
        case revoked
        /// The grant no longer covers gmail.modify.
        case scopeMissing = "scope-missing"
        /// `invalid_client`: the OAuth client was deleted or its secret changed.
        case clientRefused = "client-refused"
        /// The token endpoint could not be reached or answered nonsense: try again later.
        case unavailable
        /// The credentials file could not be used, so nothing was asked.
        case notTried = "not-tried"
    }

    public var email: String
    public var credentials: String
    public var refresh: Refresh
    /// Why the refresh did not succeed (or the credentials could not be used), one line.
    public var problem: String?
    /// The scopes of the refresh answer; nil when there was none.
    public var scopes: [String]?
    public var missingScopes: [String]
    public var account: Account?
    public var queuedChanges: Int
    /// Of `queuedChanges`, those Gmail applied, awaiting the history that confirms them
    /// (hd-pending shows them `sent`).
    public var changesSentUnconfirmed = 0
    public var outbox: Int
    /// Of `outbox`, the messages Gmail has, sent and awaiting the sync that stores them.
    public var sentUnconfirmed = 0
    public var parked: Int
    /// The command that grants access again, when one is needed.
    public var fix: String?

    /// Whether only a new consent (`hd-auth login`) can make the account work again.
    public var needsLogin: Bool { fix != nil }

    /// Checks `email`: loads its credentials, refreshes once, reads the store's counts.
    /// `loginCommand` is the exact command to suggest when consent is needed.
    public static func check(email: String, account: Account?, store: Store?, credentials: CredentialStore,
                             endpoints: GmailEndpoints, loginCommand: String) async -> AccountStatus {
        var status = AccountStatus(
            email: email, credentials: AccountRecord.credentialState(email: email, credentials: credentials),
            refresh: .notTried, problem: nil, scopes: nil, missingScopes: [], account: account,
            queuedChanges: 0, outbox: 0, parked: 0, fix: nil)
        if let store, let account {
            let changes = (try? store.queuedMutations(accountID: account.id)) ?? []
            status.queuedChanges = changes.count
            status.changesSentUnconfirmed = changes.filter { $0.state == .inFlight && !$0.held }.count
            let outbox = (try? store.pendingOutbox(accountID: account.id)) ?? []
            status.outbox = outbox.count
            status.sentUnconfirmed = outbox.filter { $0.state == .sent }.count
            status.parked = (try? store.parkedCount(accountID: account.id)) ?? 0
        }
        let credential: OAuthCredential
        do {
            credential = try credentials.load(email: email)
        } catch {
            status.problem = (error as? any OAuthFailure)?.description ?? "cannot read the credentials"
            if case CredentialStoreError.notFound? = error as? CredentialStoreError { status.fix = loginCommand }
            return status
        }
        do {
            let provider = try OAuthTokenProvider(
                credential: credential, store: credentials, tokenEndpointOverride: endpoints.token,
                requestTimeout: NetworkPatience.interactive.tokenRequestTimeout)
            _ = try await provider.refreshAccessToken()
            let granted = await provider.cachedToken?.scopes ?? []
            // RFC 6749 §5.1 lets the answer leave `scope` out (it then equals what was asked
            // for at consent, which hd-auth add and login checked): no list is no news, not
            // a missing scope.
            status.scopes = granted.isEmpty ? nil : granted
            status.missingScopes = granted.isEmpty ? [] : OAuthScope.missing(requested: [OAuthScope.gmailModify], granted: granted)
            if status.missingScopes.isEmpty {
                status.refresh = .ok
            } else {
                status.refresh = .scopeMissing
                status.problem = OAuthGuidance.missingScopes(status.missingScopes)
                status.fix = loginCommand
            }
        } catch let error as OAuthTokenError {
            status.problem = error.description
            switch error {
            case .invalidGrant:
                status.refresh = .revoked
                status.fix = loginCommand
            case .invalidClient:
                status.refresh = .clientRefused
                status.fix = loginCommand
            case .scopeNotGranted(let missing):
                status.refresh = .scopeMissing
                status.missingScopes = missing
                status.fix = loginCommand
            case .insecureEndpoint:
                status.refresh = .notTried
            default:
                status.refresh = .unavailable
            }
        } catch {
            status.refresh = .unavailable
            // The one error table's words (a stopped Gmail on this machine is named there).
            status.problem = (error as? any OAuthFailure).map { NetworkExit.classify($0)?.message ?? $0.description }
                ?? "the OAuth token endpoint could not be reached"
        }
        return status
    }

    /// The exit status of a check of these accounts: 77 when one needs a new consent, else 78
    /// when a credentials file cannot be used, else 75 when the token endpoint could not say.
    public static func exitStatus(_ statuses: [AccountStatus]) -> ExitStatus {
        if statuses.contains(where: \.needsLogin) { return .notAuthorized }
        if statuses.contains(where: { $0.refresh == .notTried }) { return .configuration }
        if statuses.contains(where: { $0.refresh == .unavailable }) { return .temporaryFailure }
        return .success
    }

    /// The `account_status` record (docs/json.md).
    public var record: Record {
        var fields: [(String, JSONValue)] = [
            ("email", .string(email)),
            ("credentials", .string(credentials)),
            ("refresh", .string(refresh.rawValue)),
            ("problem", problem.map { .string($0) } ?? .null),
            ("scopes", scopes.map { .array($0.map { .string($0) }) } ?? .null),
            ("missing_scopes", .array(missingScopes.map { .string($0) })),
            ("needs_login", .bool(needsLogin)),
            ("fix", fix.map { .string($0) } ?? .null),
        ]
        var window = "-"
        if let account {
            let start = account.lookbackDays == 0 ? nil : account.consentedAt - Int64(account.lookbackDays) * 86_400
            fields += [
                ("consented_at", .string(DateText.rfc3339UTC(milliseconds: account.consentedAt * 1000))),
                ("lookback_days", .int(Int64(account.lookbackDays))),
                ("window_start", start.map { .string(DateText.rfc3339UTC(milliseconds: $0 * 1000)) } ?? .null),
                ("backfill", .string(account.backfillState.rawValue)),
                ("last_sync", account.lastSyncAt.map { .string(DateText.rfc3339UTC(milliseconds: $0)) } ?? .null),
            ]
            window = start.map { "since " + String(DateText.rfc3339UTC(milliseconds: $0 * 1000).prefix(10)) } ?? "whole mailbox"
        }
        fields += [("queued_changes", .int(Int64(queuedChanges))), ("outbox", .int(Int64(outbox))), ("parked", .int(Int64(parked)))]
        let shownScopes = scopes.map { $0.isEmpty ? "no scope" : $0.map(OAuthGuidance.shortName).joined(separator: ",") } ?? "-"
        let columns = [
            refresh.rawValue, shownScopes, window, account?.backfillState.rawValue ?? "not in store",
            account?.lastSyncAt.map { "synced " + DateText.rfc3339UTC(milliseconds: $0) } ?? "never synced",
            changesSentUnconfirmed == 0 ? "\(queuedChanges) queued"
                : "\(queuedChanges - changesSentUnconfirmed) queued, \(changesSentUnconfirmed) sent (awaiting sync)",
            sentUnconfirmed == 0 ? "\(outbox) to send" : "\(outbox - sentUnconfirmed) to send, \(sentUnconfirmed) sent (awaiting sync)",
            "\(parked) parked",
        ]
        return Record(type: "account_status", id: email, fields: fields, columns: columns,
                      emphasis: needsLogin ? .strong : .normal)
    }
}
