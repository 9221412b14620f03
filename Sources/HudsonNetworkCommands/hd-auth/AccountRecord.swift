/*!
 `hd-auth list` records: the account, whether its credentials are usable, and its sync
 state. Credential problems are reported in the record, not as errors, so one bad file
 does not hide the other accounts.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore

public enum AccountRecord {
    public static func make(email: String, account: Account?, credentials: CredentialStore) -> Record {
        let status = credentialState(email: email, credentials: credentials)
        var fields: [(String, JSONValue)] = [("email", .string(email)), ("credentials", .string(status))]
        var columns = [status]
        if let account {
            fields += [
                ("consented_at", .string(DateText.rfc3339UTC(milliseconds: account.consentedAt * 1000))),
                ("lookback_days", .int(Int64(account.lookbackDays))),
                ("backfill", .string(account.backfillState.rawValue)),
                ("last_sync", account.lastSyncAt.map { .string(DateText.rfc3339UTC(milliseconds: $0)) } ?? .null),
                ("keep_raw", .bool(account.keepRaw)),
            ]
            columns += [account.lookbackDays == 0 ? "all" : "\(account.lookbackDays)d", account.backfillState.rawValue,
                        account.lastSyncAt.map { DateText.rfc3339UTC(milliseconds: $0) } ?? "never"]
        } else {
            columns += ["-", "not in store", "never"]
        }
        return Record(type: "account", id: email, fields: fields, columns: columns)
    }

    /// Whether `email`'s credentials file is usable: `ok`, `missing`, `too-open`, `refused`, `unreadable`.
    public static func credentialState(email: String, credentials: CredentialStore) -> String {
        do {
            _ = try credentials.load(email: email)
            return "ok"
        } catch CredentialStoreError.notFound {
            return "missing"
        } catch let error as CredentialStoreError {
            switch error {
            case .tooOpen, .directoryTooOpen: return "too-open"
            case .symlink, .wrongOwner, .notRegularFile: return "refused"
            default: return "unreadable"
            }
        } catch {
            return "unreadable"
        }
    }

    /// The accounts of the store and of the credentials directory (an account may be in one only),
    /// narrowed to `selected`, `--account` or `$HUDSON_ACCOUNT`.
    public static func known(_ cli: Invocation, credentials: CredentialStore, selected operand: String?) throws -> ([String], [Account]) {
        var accounts: [Account] = []
        if FileManager.default.fileExists(atPath: try cli.storePath()) {
            accounts = try cli.openStore(.readOnly).accounts()
        }
        var emails = accounts.map(\.email)
        for email in (try? credentials.list()) ?? [] where !emails.contains(where: { $0.lowercased() == email.lowercased() }) {
            emails.append(email)
        }
        if let selected = operand ?? cli.arguments.string("account") ?? cli.environment["HUDSON_ACCOUNT"].flatMap({ $0.isEmpty ? nil : $0 }) {
            emails = emails.filter { $0.lowercased() == selected.lowercased() }
            if emails.isEmpty { throw StoreError.unknownAccount(selected) }
        }
        return (emails, accounts)
    }
}
