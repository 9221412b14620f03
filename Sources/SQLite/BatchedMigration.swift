/*!
 A migration whose work is done in committed batches, so that an upgrade that takes
 minutes at a million messages (an index rebuilt) can be killed and resumed without
 starting over (issue 43 §3).

 The migration's SQL runs first, in one transaction that also records where the batches
 start and end (`hudson_migration_progress`: the last row visited, the last row to visit,
 the rows done and in all). Each batch then runs in its own `BEGIN IMMEDIATE`
 transaction that re-reads that record, does the work for the next rows (by rowid, in
 order) and moves the record on. The migration is recorded as applied, and its record
 removed, in the transaction that finds nothing left. So:

 - a process killed (even by SIGKILL) loses at most the batch it was in, which rolls
   back; the next writer to open the store carries on from the last committed batch;
 - two writers opening the store at once share the batches, each taking the next;
 - no command works on the half-done store: writers finish the migration before they
   go on, and read-only connections are told it is being upgraded (`upgradeInProgress`),
   with how far it has got.

 Rows added after the migration's SQL ran are not visited: nothing can add them before
 the migration is applied, since every writer migrates first.
 */

/// The rows a batched migration visits and what it does to each range of them.
public struct MigrationBatches: Sendable {
    /// A table (or view) with integer rowids: the rows to visit, in rowid order.
    public let table: String
    /// One statement doing the work for the rows with `?1 < rowid AND rowid <= ?2`.
    public let sql: String
    public let rowsPerBatch: Int

    public init(table: String, sql: String, rowsPerBatch: Int = 10_000) {
        precondition(rowsPerBatch > 0, "a batch visits at least one row")
        self.table = table
        self.sql = sql
        self.rowsPerBatch = rowsPerBatch
    }
}

/// How far a started batched migration has got.
struct BatchedMigrationProgress: Equatable {
    let id: String
    let after: Int64
    let last: Int64
    let done: Int64
    let total: Int64
}

extension Migrator {
    static let progressTable = "hudson_migration_progress"

    /// The batched migrations started and not finished, as recorded in the store.
    func batchedProgress(_ db: Connection) throws -> [BatchedMigrationProgress] {
        let exists = try db.scalarInt(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", Migrator.progressTable) ?? 0
        guard exists > 0 else { return [] }
        return try db.map("SELECT id, after, last, done, total FROM \(Migrator.progressTable)") {
            BatchedMigrationProgress(id: $0.string(0), after: $0.int64(1), last: $0.int64(2), done: $0.int64(3),
                                     total: $0.int64(4))
        }
    }

    /// Runs (or resumes) one batched migration to its end. True when this call recorded
    /// it as applied; false when it was applied already (here or by another process).
    func applyBatched(
        _ migration: Migration, _ batches: MigrationBatches, _ db: Connection,
        willUpgrade: ((_ id: String) -> Void)?,
        batchDone: ((_ id: String, _ rowsDone: Int64, _ rowsInAll: Int64) -> Void)?
    ) throws -> Bool {
        let started = try writeWhileBehind(db) { () throws -> Bool in
            let applied = try appliedIDsForWriting(db)
            if applied.contains(migration.id) { return false }
            // A new store has nothing to announce; an upgrade, fresh or resumed, says so.
            if !applied.isEmpty { willUpgrade?(migration.id) }
            if try batchedProgress(db).contains(where: { $0.id == migration.id }) { return true }
            try db.execute("""
                CREATE TABLE IF NOT EXISTS \(Migrator.progressTable) (
                    id TEXT PRIMARY KEY NOT NULL, after INTEGER NOT NULL, last INTEGER NOT NULL,
                    done INTEGER NOT NULL, total INTEGER NOT NULL)
                """)
            try db.execute("PRAGMA defer_foreign_keys = ON")
            try db.execute(migration.sql)
            try checkForeignKeys(after: migration.id, db)
            let bounds = try db.first("SELECT min(rowid), max(rowid), count(*) FROM \(batches.table)") {
                ($0.optionalInt64(0), $0.optionalInt64(1), $0.int64(2))
            }
            let first = bounds?.0 ?? 0
            // Rowids are at least Int64.min; starting "after" one below the first row visits it.
            let after = first == Int64.min ? Int64.min : first - 1
            try db.execute("INSERT INTO \(Migrator.progressTable) (id, after, last, done, total) VALUES (?, ?, ?, 0, ?)",
                           migration.id, after, bounds?.1 ?? after, bounds?.2 ?? 0)
            return true
        }
        guard started else { return false }

        while true {
            enum Step { case batch(done: Int64, total: Int64), finished(byThisCall: Bool) }
            let step = try writeWhileBehind(db) { () throws -> Step in
                if try appliedIDs(db).contains(migration.id) { return .finished(byThisCall: false) }
                guard let progress = try batchedProgress(db).first(where: { $0.id == migration.id }) else {
                    return .finished(byThisCall: false)
                }
                try db.execute("PRAGMA defer_foreign_keys = ON")
                if progress.after >= progress.last {
                    try checkForeignKeys(after: migration.id, db)
                    try db.execute("DELETE FROM \(Migrator.progressTable) WHERE id = ?", migration.id)
                    // The record exists only while an upgrade runs: a current store's schema
                    // is exactly the migrations' (docs/schema.sql).
                    if try db.scalarInt("SELECT count(*) FROM \(Migrator.progressTable)") == 0 {
                        try db.execute("DROP TABLE \(Migrator.progressTable)")
                    }
                    try db.execute("INSERT INTO \(Migrator.table) (id) VALUES (?)", migration.id)
                    return .finished(byThisCall: true)
                }
                let through = try db.scalarInt(
                    "SELECT rowid FROM \(batches.table) WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid LIMIT 1 OFFSET ?3",
                    progress.after, progress.last, Int64(batches.rowsPerBatch - 1)) ?? progress.last
                let rows = try db.scalarInt(
                    "SELECT count(*) FROM \(batches.table) WHERE rowid > ?1 AND rowid <= ?2", progress.after, through) ?? 0
                try db.execute(batches.sql, progress.after, through)
                try checkForeignKeys(after: migration.id, db)
                let done = min(progress.done + rows, progress.total)
                try db.execute("UPDATE \(Migrator.progressTable) SET after = ?, done = ? WHERE id = ?",
                               through, done, migration.id)
                return .batch(done: done, total: progress.total)
            }
            switch step {
            case .batch(let done, let total):
                batchDone?(migration.id, done, total)
            case .finished(let byThisCall):
                return byThisCall
            }
        }
    }
}
