/*!
 The wrong-recipient check (issue 42): a recipient the account has never written to that is
 one edit away from one it has (`alise@` for `alice@`) is said on standard error, for a real
 send and a `--dry-run` alike, before anything is queued. A warning, not a refusal: a new
 correspondent may well have a name one letter from an old one.
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

enum NearMissWarning {
    static func warn(_ cli: Invocation, store: Store, recipients: [String], accountID: Int64) {
        guard let misses = try? store.nearMisses(recipients, accountID: accountID) else { return }
        for miss in misses {
            cli.warn("\(TerminalSafety.quoted(miss.typed)): never written to, one letter from \(TerminalSafety.quoted(miss.known)), written to before; is it the one you meant?")
        }
    }
}
