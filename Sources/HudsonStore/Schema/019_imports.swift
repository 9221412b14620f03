/*!
 Migration 019_imports:
 hd-import's record of what it imported (Imports.swift): one row per account and source
 message, keyed by its Message-ID or, without a searchable one, `sha256:` and the digest
 of its bytes. Written `sending` (durably) before messages.import goes out, so a lost
 answer or a killed process leaves a row that says the message may be in Gmail; such a
 row is looked for with `rfc822msgid:` before the message is sent again.
 */
extension Schema {
    static let imports = """
    CREATE TABLE imports (
        account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        source_key         TEXT NOT NULL CHECK (source_key <> ''),
        message_id         TEXT CHECK (message_id IS NULL OR message_id <> ''),   -- with <>; the probe's key
        state              TEXT NOT NULL CHECK (state IN ('sending', 'imported', 'failed')),
        origin             TEXT NOT NULL,                                         -- file, and number in an mbox
        attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        attempt_started_at INTEGER,                                               -- epoch ms of the last attempt
        gmail_id           TEXT CHECK (gmail_id IS NULL OR gmail_id <> ''),
        last_error         TEXT,
        updated_at         INTEGER NOT NULL,
        CHECK (state <> 'imported' OR gmail_id IS NOT NULL),
        PRIMARY KEY (account_id, source_key)
    ) WITHOUT ROWID;
    """
}
