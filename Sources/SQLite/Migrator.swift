/*!
 Append-only schema migrations, after GRDB's `DatabaseMigrator` (STYLE.md example 4).

 Each migration is an `(id, sql)` pair that is never edited once shipped. Each runs in
 its own `BEGIN IMMEDIATE` transaction that re-reads the applied ids *inside* the
 transaction, so when several processes open a new store at once exactly one applies
 each migration and the others see it done. Foreign keys are checked before commit.
 An applied id this binary does not know means a newer program wrote the file.

 A migration whose work grows with the mailbox (an index rebuilt at a million messages)
 declares that work as `MigrationBatches`: its SQL runs once, then the rows are visited
 in committed batches, so a killed upgrade resumes where it stopped (BatchedMigration.swift).
 */
import CSQLite

public struct Migration: Sendable {
    public let id: String
    public let sql: String
    /// Work done after `sql`, a batch of rows per transaction (nil: all of it in `sql`).
    public let batches: MigrationBatches?

    public init(_ id: String, _ sql: String, batches: MigrationBatches? = nil) {
        self.id = id
        self.sql = sql
        self.batches = batches
    }
}

public enum MigrationError: Error, Equatable, CustomStringConvertible {
    /// The store has migrations applied that this program does not know.
    case newerSchema(unknownIDs: [String])
    /// The store is behind and the connection is read-only, so it cannot be upgraded here.
    case pendingMigrations(ids: [String])
    /// A migration left rows that break a foreign key.
    case foreignKeyViolation(migrationID: String, table: String)
    /// The store is behind and another connection held the write lock past the busy
    /// timeout: most likely another process applying these very migrations.
    case busyWhileBehind(ids: [String])
    /// A batched migration has started and not finished (its last runner was stopped, or
    /// is still running): a read-only connection cannot use the half-built result.
    case upgradeInProgress(id: String, rowsDone: Int64, rowsInAll: Int64)

    public var description: String {
        switch self {
        case .newerSchema(let ids):
            return "written by a newer version (unknown migrations: \(ids.joined(separator: ", ")))"
        case .pendingMigrations(let ids):
            return "written by an older version and opened read-only (pending migrations: \(ids.joined(separator: ", ")))"
        case .foreignKeyViolation(let id, let table):
            return "migration \(id) violates a foreign key in \(table)"
        case .busyWhileBehind(let ids):
            return "behind this version and busy (pending migrations: \(ids.joined(separator: ", ")))"
        case .upgradeInProgress(let id, let done, let all):
            return "being upgraded (\(id): \(done) of \(all) rows)"
        }
    }
}

public struct Migrator: Sendable {
    public static let table = "hudson_migrations"
    public let migrations: [Migration]

    public init(_ migrations: [Migration]) {
        precondition(Set(migrations.map(\.id)).count == migrations.count, "duplicate migration id")
        self.migrations = migrations
    }

    /// The ids recorded as applied, in application order. Empty for a new file.
    public func appliedIDs(_ db: Connection) throws -> [String] {
        let exists = try db.scalarInt(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", Migrator.table) ?? 0
        guard exists > 0 else { return [] }
        return try db.map("SELECT id FROM \(Migrator.table) ORDER BY rowid") { $0.string(0) }
    }

    /// Checks the store is exactly at this program's schema, without writing.
    public func verifyCurrent(_ db: Connection) throws {
        let applied = try appliedIDs(db)
        try checkNotNewer(applied)
        let pending = migrations.map(\.id).filter { !applied.contains($0) }
        if pending.isEmpty { return }
        if let progress = try batchedProgress(db).first(where: { pending.contains($0.id) }) {
            throw MigrationError.upgradeInProgress(id: progress.id, rowsDone: progress.done, rowsInAll: progress.total)
        }
        throw MigrationError.pendingMigrations(ids: pending)
    }

    /// Applies every pending migration, each in its own IMMEDIATE transaction.
    /// Returns the ids this call applied (empty when another process got there first).
    ///
    /// `willUpgrade` is told of each migration just before it runs on a store that had
    /// migrations already (an upgrade, not a new file): its id, its place among those
    /// pending, and how many are pending, so a command can say what it is doing while a
    /// long one (an index rebuilt at a million messages) runs. A write lock another
    /// connection holds past the busy timeout while migrations are pending is
    /// `busyWhileBehind`, not a bare busy error: that connection is most likely applying
    /// them (issue 43 §3).
    ///
    /// `batchDone` is told, after each committed batch of a batched migration, how many of
    /// its rows are done and how many there are.
    @discardableResult
    public func migrate(
        _ db: Connection, willUpgrade: ((_ id: String, _ number: Int, _ of: Int) -> Void)? = nil,
        batchDone: ((_ id: String, _ rowsDone: Int64, _ rowsInAll: Int64) -> Void)? = nil
    ) throws -> [String] {
        // Fast path: a current store needs only one read.
        let appliedAtStart = try db.read { try appliedIDs(db) }
        if appliedAtStart == migrations.map(\.id) { return [] }
        let pendingAtStart = migrations.map(\.id).filter { !appliedAtStart.contains($0) }
        // A migration that derives a table from the whole mailbox sorts all of it (036's
        // address book groups every address row); in memory (the connection's temp_store)
        // that sort grew the upgrade of a 1,000,000-message store to 335 MiB. On file,
        // SQLite's sorter spills past the page cache: memory bounded by a batch, not by
        // the mailbox (issue 43 §3). Statement journals spill too, for the upgrade only.
        let tempStore = try db.scalarInt("PRAGMA temp_store") ?? 0
        try db.execute("PRAGMA temp_store = FILE")
        defer { try? db.execute("PRAGMA temp_store = \(tempStore)") }
        var appliedHere: [String] = []
        for migration in migrations {
            if let batches = migration.batches {
                let announce = willUpgrade.map { willUpgrade in
                    { (id: String) -> Void in
                        willUpgrade(id, (pendingAtStart.firstIndex(of: id) ?? 0) + 1, pendingAtStart.count)
                    }
                }
                if try applyBatched(migration, batches, db, willUpgrade: announce, batchDone: batchDone) {
                    appliedHere.append(migration.id)
                }
                continue
            }
            let didApply = try writeWhileBehind(db, appliedIfUnreadable: appliedAtStart) { () throws -> Bool in
                let applied = try appliedIDsForWriting(db)
                if applied.contains(migration.id) { return false }
                if !applied.isEmpty, let willUpgrade {
                    willUpgrade(migration.id, (pendingAtStart.firstIndex(of: migration.id) ?? 0) + 1, pendingAtStart.count)
                }
                try db.execute("PRAGMA defer_foreign_keys = ON")
                try db.execute(migration.sql)
                try checkForeignKeys(after: migration.id, db)
                try db.execute("INSERT INTO \(Migrator.table) (id) VALUES (?)", migration.id)
                return true
            }
            if didApply {
                appliedHere.append(migration.id)
                // Each migration rewrites the schema pages; copying them back now lets the
                // next one write the WAL from its start again, so creating a store never
                // needs room for every migration's pages at once (a nearly full disk).
                // Best effort: a reader holding the WAL only leaves it for later.
                _ = try? db.first("PRAGMA wal_checkpoint(PASSIVE)") { $0.int(0) }
            }
        }
        return appliedHere
    }

    /// The applied ids, read inside a migration's write transaction (the table made on a new
    /// file); a store with ids this program does not know is refused as newer.
    func appliedIDsForWriting(_ db: Connection) throws -> [String] {
        try db.execute("CREATE TABLE IF NOT EXISTS \(Migrator.table) (id TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL DEFAULT (unixepoch()))")
        let applied = try appliedIDs(db)
        try checkNotNewer(applied)
        return applied
    }

    /// A write transaction of a migration: a lock held past the busy timeout while the
    /// store is behind is `busyWhileBehind` (most likely another process upgrading it),
    /// naming what is pending (from `appliedIfUnreadable` when the ids cannot be read).
    func writeWhileBehind<T>(_ db: Connection, appliedIfUnreadable: [String] = [], _ body: () throws -> T) throws -> T {
        do {
            return try db.write(body)
        } catch SQLiteError.busy {
            let applied = (try? db.read { try appliedIDs(db) }) ?? appliedIfUnreadable
            throw MigrationError.busyWhileBehind(ids: migrations.map(\.id).filter { !applied.contains($0) })
        }
    }

    /// Refuses a migration that left a row breaking a foreign key, before its commit. The
    /// connection enforces foreign keys, deferred to the commit (`defer_foreign_keys`), so
    /// SQLite counts what the migration broke; only when the count is not zero is the whole
    /// store checked, to name the table. A full check every time read every table: 16 s a
    /// migration at 1,000,000 messages, most of an upgrade (issue 43 §3).
    func checkForeignKeys(after migrationID: String, _ db: Connection) throws {
        guard db.hasDeferredForeignKeyViolations else { return }
        let table = try db.first("PRAGMA foreign_key_check", transform: { $0.string(0) }) ?? "?"
        throw MigrationError.foreignKeyViolation(migrationID: migrationID, table: table)
    }

    func checkNotNewer(_ applied: [String]) throws {
        let known = Set(migrations.map(\.id))
        let unknown = applied.filter { !known.contains($0) }
        if !unknown.isEmpty { throw MigrationError.newerSchema(unknownIDs: unknown) }
    }
}
