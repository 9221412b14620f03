/*!
 Migration 017_rules_applied:
 The rules file on new mail (hd-filters(1)): per account, when hd-sync first ran with
 rules (mail older than that is never a new arrival), and every message the rules
 were run on, with the action that ran them, written in the same transaction as
 that action, so no message has the rules applied twice (Rules.swift).
 */
extension Schema {
    static let rulesApplied = """
    CREATE TABLE rules_accounts (
        account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        since      INTEGER NOT NULL                 -- epoch ms: new mail is internal_date >= since
    );
    CREATE TABLE rules_applied (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        gmail_id   TEXT NOT NULL,
        action_id  INTEGER,                         -- NULL when no rule changed it
        applied_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, gmail_id)
    ) WITHOUT ROWID;
    """
}
