/*!
 Append-only schema migrations, after GRDB's `DatabaseMigrator` (STYLE.md example 4).

 Each migration is an `(id, sql)` pair that is never edited once shipped. Each runs in
 its own `BEGIN IMMEDIATE` transaction that re-reads the applied ids *inside* the
 transaction, so when several processes open a new store at once exactly one applies
 each migration and the others see it done. Foreign keys are checked before commit.
 An applied id this binary does not know means a newer program wrote the file.
 */
import CSQLite

public struct Migration: Sendable {
    public let id: String
    public let sql: String

    public init(_ id: String, _ sql: String) {
        self.id = id
        self.sql = sql
    }
}

public enum MigrationError: Error, Equatable, CustomStringConvertible {
    /// The store has migrations applied that this program does not know.
    case newerSchema(unknownIDs: [String])
    /// The store is behind and the connection is read-only, so it cannot be upgraded here.
    case pendingMigrations(ids: [String])
    /// A migration left rows that break a foreign key.
    case foreignKeyViolation(migrationID: String, table: String)

    public var description: String {
        switch self {
        case .newerSchema(let ids):
            return "written by a newer version (unknown migrations: \(ids.joined(separator: ", ")))"
        case .pendingMigrations(let ids):
            return "written by an older version and opened read-only (pending migrations: \(ids.joined(separator: ", ")))"
        case .foreignKeyViolation(let id, let table):
            return "migration \(id) violates a foreign key in \(table)"
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
        if !pending.isEmpty { throw MigrationError.pendingMigrations(ids: pending) }
    }

    /// Applies every pending migration, each in its own IMMEDIATE transaction.
    /// Returns the ids this call applied (empty when another process got there first).
    @discardableResult
    public func migrate(_ db: Connection) throws -> [String] {
        // Fast path: a current store needs only one read.
        if try db.read({ try appliedIDs(db) }) == migrations.map(\.id) { return [] }
        var appliedHere: [String] = []
        for migration in migrations {
            let didApply = try db.write { () throws -> Bool in
                try db.execute("CREATE TABLE IF NOT EXISTS \(Migrator.table) (id TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL DEFAULT (unixepoch()))")
                let applied = try appliedIDs(db)
                try checkNotNewer(applied)
                if applied.contains(migration.id) { return false }
                try db.execute("PRAGMA defer_foreign_keys = ON")
                try db.execute(migration.sql)
                if let table = try db.first("PRAGMA foreign_key_check", transform: { $0.string(0) }) {
                    throw MigrationError.foreignKeyViolation(migrationID: migration.id, table: table)
                }
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

    private func checkNotNewer(_ applied: [String]) throws {
        let known = Set(migrations.map(\.id))
        let unknown = applied.filter { !known.contains($0) }
        if !unknown.isEmpty { throw MigrationError.newerSchema(unknownIDs: unknown) }
    }
}
