/*!
 What `hd-labels create|rename|delete` and `hd-mark --create` share that is not a
 command's own: the account a label operation is for, the question asked before a
 deletion, and the push of the result to Gmail.
 */
import HudsonOutput
import HudsonStore

extension Invocation {
    /// The account a label operation is for: `--account` (or `$HUDSON_ACCOUNT`), else the
    /// store's only account. Several accounts and none chosen is a usage error: a label
    /// belongs to one mailbox.
    public func labelAccount(in store: Store) throws -> Account {
        if let account = try selectedAccount(in: store) { return account }
        let accounts = try store.accounts()
        guard accounts.count == 1 else {
            if accounts.isEmpty { throw CommandFailure(.notAuthorized, "no accounts; run hd-auth login") }
            throw UsageError("several accounts: choose one with --account")
        }
        return accounts[0]
    }

    /// Asks `question` on standard error and reads the answer from standard input, which
    /// must be a terminal: in a script the command needs `--yes` instead (a usage error
    /// otherwise, so nothing is done by a pipe's accident). True only for y or yes.
    public func confirm(_ question: String) throws -> Bool {
        guard Input.stdinIsTerminal else {
            throw UsageError("standard input is not a terminal: give --yes to confirm")
        }
        writeError("\(question) [y/N] ")
        let answer = try LineReader().next() ?? ""
        return ["y", "yes"].contains(answer.lowercased().trimmingCharacters(in: " \t\r"))
    }

    /// Runs `hd-sync --push` for this account: see `pushQueuedChanges(accounts:)`.
    @discardableResult
    public func pushQueuedChanges(account: Account) -> Bool {
        pushQueuedChanges(accounts: [account.email])
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, set.unicodeScalars.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, set.unicodeScalars.contains(last) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
