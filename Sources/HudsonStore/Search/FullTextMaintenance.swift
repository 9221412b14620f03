/*!
 Keeping the full-text index fast to write during a bulk load and fast to read after it.
 FTS5 writes each transaction's terms as a new segment and merges segments as it goes
 (`automerge`, default 4: a level is merged once it holds 4 segments); reads walk every
 segment. A catch-up of a whole mailbox writes thousands of segments, so it merges less
 eagerly while it runs and then merges the index down to one segment, in short steps
 (https://sqlite.org/fts5.html, "The 'automerge' Configuration Option", "The 'merge'
 Command"; sqlite-notes.md: "'optimize' after a large backfill merges segments").
 */
import SQLite

extension Store {
    /// Merge settings for a bulk load (`true`: automerge 16, crisismerge 64) or FTS5's
    /// defaults (4 and 16). They are stored in the index's config table, so they apply to
    /// every writer until set back; a process killed in between leaves the bulk values,
    /// which only defer merging.
    public func setBulkIndexing(_ bulk: Bool) throws {
        let (automerge, crisismerge) = bulk ? (16, 64) : (4, 16)
        try db.write {
            try db.execute("INSERT INTO fts_messages (fts_messages, rank) VALUES ('automerge', ?)", automerge)
            try db.execute("INSERT INTO fts_messages (fts_messages, rank) VALUES ('crisismerge', ?)", crisismerge)
        }
    }

    /// One bounded step of merging the index towards a single segment: at most `pages`
    /// leaf pages written, in its own short transaction so other writers wait only that
    /// long. Returns false when there was nothing left to merge.
    public func mergeFullTextStep(pages: Int = 2000) throws -> Bool {
        try db.write {
            let before = db.totalChanges
            // A negative page count merges even below the automerge threshold, down to
            // one segment (fts5.html, "The 'merge' Command").
            try db.execute("INSERT INTO fts_messages (fts_messages, rank) VALUES ('merge', ?)", -max(1, pages))
            return db.totalChanges - before >= 2
        }
    }
}

extension Store {
    /// Messages in the store, every account.
    public func messageCount() throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM messages") ?? 0)
    }
}
