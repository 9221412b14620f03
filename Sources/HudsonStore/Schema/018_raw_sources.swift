/*!
 Migration 018_raw_sources:
 Issue 24 §1: an account may keep each message's RFC 822 source (`keep_raw`, set by
 `hd-auth`). Hydration then fetches `format=raw` instead of `format=full` (the same
 5 quota units, gmail-api.md §3) and parses the body here; the source is stored
 uncompressed (docs/performance.md, "Raw sources"). Canonical, written by sync; it
 goes with its message.
 */
extension Schema {
    static let rawSources = """
    ALTER TABLE accounts ADD COLUMN keep_raw INTEGER NOT NULL DEFAULT 0 CHECK (keep_raw IN (0, 1));
    CREATE TABLE message_sources (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        source     BLOB NOT NULL,
        fetched_at INTEGER NOT NULL
    );
    """
}
