/*!
 `hd-auth list` records: the account, whether its credentials are usable, and its sync
 state. Credential problems are reported in the record, not as errors, so one bad file
 does not hide the other accounts.
 */
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonStore

public enum AccountRecord {
    public static func make(email: String, account: Account?, credentials: CredentialStore) -> Record {
        let status: String
        do {
            _ = try credentials.load(email: email)
            status = "ok"
        } catch CredentialStoreError.notFound {
            status = "missing"
        } catch let error as CredentialStoreError {
            switch error {
            case .tooOpen, .directoryTooOpen: status = "too-open"
            case .symlink, .wrongOwner, .notRegularFile: status = "refused"
            default: status = "unreadable"
            }
        } catch {
            status = "unreadable"
        }
        var fields: [(String, JSONValue)] = [("email", .string(email)), ("credentials", .string(status))]
        var columns = [status]
        if let account {
            fields += [
                ("consented_at", .string(DateText.rfc3339UTC(milliseconds: account.consentedAt * 1000))),
                ("lookback_days", .int(Int64(account.lookbackDays))),
                ("backfill", .string(account.backfillState.rawValue)),
                ("last_sync", account.lastSyncAt.map { .string(DateText.rfc3339UTC(milliseconds: $0)) } ?? .null),
            ]
            columns += [account.lookbackDays == 0 ? "all" : "\(account.lookbackDays)d", account.backfillState.rawValue,
                        account.lastSyncAt.map { DateText.rfc3339UTC(milliseconds: $0) } ?? "never"]
        } else {
            columns += ["-", "not in store", "never"]
        }
        return Record(type: "account", id: email, fields: fields, columns: columns)
    }
}
