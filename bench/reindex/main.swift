// hudson-bench-reindex: times a full-text index rebuilt the way a migration that
// changes the index would rebuild it: as a batched migration (SQLite's
// BatchedMigration.swift), a batch of messages per transaction, resumable after a kill.
// Bench-only, not installed. It records a migration id Hudson does not know
// ("bench_reindex"), so run it on a COPY of a store, never on one you use:
//
//   cp STORE /tmp/copy.sqlite3 && hudson-bench-reindex /tmp/copy.sqlite3 [ROWS_PER_BATCH]
//
// Killed (even with SIGKILL) and started again, it carries on from its last batch.
import Foundation
import HudsonText
import SQLite

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3, let rowsPerBatch = Int(arguments.count == 3 ? arguments[2] : "10000"),
      rowsPerBatch > 0 else {
    FileHandle.standardError.write(Data("usage: hudson-bench-reindex STORE-COPY [ROWS_PER_BATCH]\n".utf8))
    exit(64)
}
func say(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

do {
    let db = try Connection(path: arguments[1], options: ConnectionOptions(access: .readWrite, cacheKiB: 64 * 1024))
    // The functions the index and its content view call (HudsonStore's Store.open).
    try db.defineTextFunction("hudson_shown_v1", TerminalSafety.shown)
    try db.defineTextFunction("hudson_indexed_v1") { IndexText.forIndex(TerminalSafety.shown($0)) }
    let applied = try Migrator([]).appliedIDs(db).filter { $0 != "bench_reindex" }
    let reindex = Migration(
        "bench_reindex", "INSERT INTO fts_messages (fts_messages) VALUES ('delete-all');",
        batches: MigrationBatches(
            table: "messages",
            sql: "INSERT INTO fts_messages (rowid, subject, sender, recipients, body) SELECT rowid, subject, sender, recipients, body FROM fts_content WHERE rowid > ?1 AND rowid <= ?2",
            rowsPerBatch: rowsPerBatch))
    // The store's own migrations are applied already: listed so the migrator knows them.
    let migrator = Migrator(applied.map { Migration($0, "") } + [reindex])
    let started = Date()
    var lastSaid = Date.distantPast
    let done = try migrator.migrate(db, willUpgrade: { id, _, _ in say("hudson-bench-reindex: \(id): started or resumed") },
                                    batchDone: { _, done, all in
        if Date().timeIntervalSince(lastSaid) >= 10 || done == all {
            lastSaid = Date()
            say(String(format: "hudson-bench-reindex: %d of %d messages, %.0f s", done, all, Date().timeIntervalSince(started)))
        }
    })
    say(done.isEmpty ? "hudson-bench-reindex: already done" :
        String(format: "hudson-bench-reindex: done in %.1f s", Date().timeIntervalSince(started)))
} catch {
    say("hudson-bench-reindex: \(error)")
    exit(1)
}
