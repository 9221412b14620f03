import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("Migrator: append-only migrations")
struct MigratorTests {
    let dir = TemporaryDirectory()

    func open(_ access: ConnectionOptions.Access = .readWriteCreate) throws -> Connection {
        try Connection(path: dir.path("m.db"), options: ConnectionOptions(access: access))
    }

    let v1 = Migration("001", "CREATE TABLE a (x INTEGER PRIMARY KEY);")
    let v2 = Migration("002", "CREATE TABLE b (x INTEGER PRIMARY KEY, a INTEGER REFERENCES a(x));")

    @Test("applies pending migrations in order, once")
    func appliesOnce() throws {
        let db = try open()
        #expect(try Migrator([v1]).migrate(db) == ["001"])
        #expect(try Migrator([v1, v2]).migrate(db) == ["002"])
        #expect(try Migrator([v1, v2]).migrate(db) == [])
        #expect(try Migrator([v1, v2]).appliedIDs(db) == ["001", "002"])
    }

    @Test("a store with a migration this program does not know is newer, and refused")
    func newerRefused() throws {
        let db = try open()
        try Migrator([v1, v2]).migrate(db)
        #expect(throws: MigrationError.newerSchema(unknownIDs: ["002"])) { try Migrator([v1]).migrate(db) }
        #expect(throws: MigrationError.newerSchema(unknownIDs: ["002"])) { try Migrator([v1]).verifyCurrent(db) }
    }

    @Test("a read-only check of an older store reports the pending migrations")
    func pendingOnVerify() throws {
        let db = try open()
        try Migrator([v1]).migrate(db)
        #expect(throws: MigrationError.pendingMigrations(ids: ["002"])) { try Migrator([v1, v2]).verifyCurrent(db) }
    }

    @Test("a failing migration leaves nothing behind")
    func failingMigrationRollsBack() throws {
        let db = try open()
        let broken = Migration("002", "CREATE TABLE c (x); THIS IS NOT SQL;")
        #expect(throws: SQLiteError.self) { try Migrator([v1, broken]).migrate(db) }
        #expect(try Migrator([v1]).appliedIDs(db) == ["001"])
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'c'") == 0)
    }

    @Test("a migration that breaks a foreign key is refused before commit")
    func foreignKeyCheck() throws {
        let db = try open()
        let bad = Migration("003", "INSERT INTO b (x, a) VALUES (1, 42);")
        #expect(throws: MigrationError.foreignKeyViolation(migrationID: "003", table: "b")) {
            try Migrator([v1, v2, bad]).migrate(db)
        }
        #expect(try db.scalarInt("SELECT count(*) FROM b") == 0)
    }

    @Test("dropping a table other rows refer to breaks a foreign key too, and is refused")
    func droppedParentRefused() throws {
        let db = try open()
        try Migrator([v1, v2]).migrate(db)
        try db.execute("INSERT INTO a (x) VALUES (7); INSERT INTO b (x, a) VALUES (1, 7);")
        let dropsParent = Migration("003", "DROP TABLE a;")
        #expect(throws: MigrationError.foreignKeyViolation(migrationID: "003", table: "b")) {
            try Migrator([v1, v2, dropsParent]).migrate(db)
        }
        #expect(try db.scalarInt("SELECT count(*) FROM a") == 1)
    }

    @Test("a row that broke a foreign key before the upgrade does not stop it: the check is of what the migration did")
    func earlierDamageNotBlamedOnTheMigration() throws {
        let db = try open()
        try Migrator([v1, v2]).migrate(db)
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.execute("INSERT INTO b (x, a) VALUES (1, 99)")
        try db.execute("PRAGMA foreign_keys = ON")
        #expect(try Migrator([v1, v2, v3]).migrate(db) == ["003"])
    }

    @Test("two connections migrating the same new file apply each migration exactly once")
    func racingMigrators() throws {
        let first = try open()
        let second = try open()
        try Migrator([v1]).migrate(first)
        // The second connection read "nothing applied" never: it re-reads inside BEGIN IMMEDIATE.
        #expect(try Migrator([v1, v2]).migrate(second) == ["002"])
        #expect(try Migrator([v1, v2]).migrate(first) == [])
        #expect(try first.scalarInt("SELECT count(*) FROM hudson_migrations") == 2)
    }

    let v3 = Migration("003", "CREATE INDEX a_by_x ON a (x);")

    @Test("an upgrade names each migration as it starts, with its place among those pending; a new file's creation does not")
    func upgradeProgress() throws {
        let db = try open()
        var told: [String] = []
        try Migrator([v1]).migrate(db) { id, number, count in told.append("\(id) \(number)/\(count)") }
        #expect(told.isEmpty)
        #expect(try Migrator([v1, v2, v3]).migrate(db) { id, number, count in told.append("\(id) \(number)/\(count)") }
                    == ["002", "003"])
        #expect(told == ["002 1/2", "003 2/2"])
        try Migrator([v1, v2, v3]).migrate(db) { id, _, _ in told.append(id) }
        #expect(told.count == 2)
    }

    @Test("an upgrade sorts on file, so memory does not grow with the mailbox, and gives the connection its in-memory temp store back")
    func upgradeSortsOnFile() throws {
        let db = try open()
        #expect(try db.scalarInt("PRAGMA temp_store") == 2)  // MEMORY, as every connection has it
        let recordsTempStore = Migration("002", "CREATE TABLE seen AS SELECT temp_store FROM pragma_temp_store;")
        try Migrator([v1, recordsTempStore]).migrate(db)
        #expect(try db.scalarInt("SELECT temp_store FROM seen") == 1)  // FILE
        #expect(try db.scalarInt("PRAGMA temp_store") == 2)
    }

    @Test("a store behind whose write lock another connection holds past the wait is busy while behind, naming what is pending; once free it upgrades")
    func busyWhileBehind() throws {
        let holder = try open()
        try Migrator([v1]).migrate(holder)
        let waiting = try Connection(path: dir.path("m.db"), options: ConnectionOptions(access: .readWrite, busyTimeoutMilliseconds: 50))
        try holder.execute("BEGIN IMMEDIATE")
        #expect(throws: MigrationError.busyWhileBehind(ids: ["002", "003"])) { try Migrator([v1, v2, v3]).migrate(waiting) }
        // A current store needs no lock: no error while the other connection writes.
        #expect(try Migrator([v1]).migrate(waiting) == [])
        try holder.execute("COMMIT")
        #expect(try Migrator([v1, v2, v3]).migrate(waiting) == ["002", "003"])
    }
}
