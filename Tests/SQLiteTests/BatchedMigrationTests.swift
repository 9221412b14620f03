import Foundation
import HudsonTestSupport
import SQLite
import Testing

/// A migration whose work grows with the mailbox runs in committed batches, resumes
/// where it stopped, and is never seen half done (issue 43 §3; BatchedMigration.swift).
@Suite("Migrator: batched migrations resume where they stopped")
struct BatchedMigrationTests {
    let dir = TemporaryDirectory()

    func open(busyTimeoutMilliseconds: Int32 = 5_000, _ access: ConnectionOptions.Access = .readWriteCreate) throws -> Connection {
        try Connection(path: dir.path("m.db"), options: ConnectionOptions(
            access: access, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
    }

    /// 25 source rows with gaps in their rowids (every third one, from 3), and a log of
    /// every row the work visits, so a row visited twice shows.
    let base = Migration("001", """
        CREATE TABLE source (x INTEGER PRIMARY KEY);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25)
        INSERT INTO source (x) SELECT i * 3 FROM n;
        CREATE TABLE visits (x INTEGER NOT NULL);
        CREATE TABLE setups (at INTEGER);
        """)

    /// Copies every source row into `derived`; its SQL counts its own runs.
    func derive(rowsPerBatch: Int = 10) -> Migration {
        Migration("002", """
            INSERT INTO setups (at) VALUES (1);
            CREATE TABLE derived (x INTEGER PRIMARY KEY);
            CREATE TRIGGER derived_visit AFTER INSERT ON derived BEGIN INSERT INTO visits (x) VALUES (NEW.x); END;
            """, batches: MigrationBatches(
                table: "source", sql: "INSERT INTO derived (x) SELECT x FROM source WHERE rowid > ?1 AND rowid <= ?2",
                rowsPerBatch: rowsPerBatch))
    }

    /// Makes the batch holding source row `x` fail, as a process killed inside it would:
    /// its transaction rolls back.
    func stopAt(_ x: Int, _ db: Connection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS stop (x INTEGER)")
        try db.execute("INSERT INTO stop (x) VALUES (\(x))")
        try db.execute("""
            CREATE TRIGGER IF NOT EXISTS derived_stop BEFORE INSERT ON derived
            WHEN EXISTS (SELECT 1 FROM stop WHERE stop.x = NEW.x) BEGIN SELECT RAISE(ABORT, 'stopped'); END
            """)
    }

    func tableExists(_ name: String, _ db: Connection) throws -> Bool {
        try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = ?", name) == 1
    }

    @Test("the work runs a batch at a time, says how far it got, and leaves no record behind")
    func runsInBatches() throws {
        let db = try open()
        try Migrator([base]).migrate(db)
        var told: [String] = []
        let applied = try Migrator([base, derive()]).migrate(db, willUpgrade: { id, _, _ in told.append("start \(id)") },
                                                             batchDone: { id, done, all in told.append("\(id) \(done)/\(all)") })
        #expect(applied == ["002"])
        #expect(told == ["start 002", "002 10/25", "002 20/25", "002 25/25"])
        #expect(try db.scalarInt("SELECT count(*) FROM derived") == 25)
        #expect(try db.scalarInt("SELECT count(*) FROM visits") == 25)
        #expect(try db.scalarInt("SELECT count(DISTINCT x) FROM visits") == 25)
        #expect(try !tableExists("hudson_migration_progress", db))
        #expect(try Migrator([base, derive()]).appliedIDs(db) == ["001", "002"])
        #expect(try Migrator([base, derive()]).migrate(db) == [])
    }

    @Test("a new store, and a table with no rows, finish at once with nothing left behind")
    func emptyTable() throws {
        let db = try open()
        let empty = Migration("001", "CREATE TABLE source (x INTEGER PRIMARY KEY); CREATE TABLE visits (x); CREATE TABLE setups (at);")
        #expect(try Migrator([empty, derive()]).migrate(db) == ["001", "002"])
        #expect(try db.scalarInt("SELECT count(*) FROM derived") == 0)
        #expect(try !tableExists("hudson_migration_progress", db))
    }

    @Test("stopped in its third batch, it resumes from the third: no row visited twice, its SQL run once, readers told it is under way")
    func resumesWhereItStopped() throws {
        let db = try open()
        try Migrator([base]).migrate(db)
        // Row 63 (the 21st) is in the third batch of ten; the stop is set once the
        // migration's SQL has made the table it watches.
        var told: [Int64] = []
        let migrator = Migrator([base, derive()])
        #expect(throws: SQLiteError.self) {
            try migrator.migrate(db, batchDone: { _, done, _ in
                told.append(done)
                if done == 10 { try? stopAt(63, db) }
            })
        }
        #expect(told == [10, 20])
        #expect(try db.scalarInt("SELECT count(*) FROM derived") == 20)
        #expect(try Migrator([base, derive()]).appliedIDs(db) == ["001"])

        // A read-only connection sees it under way, with how far it got, not "pending".
        let reader = try open(.readOnly)
        #expect(throws: MigrationError.upgradeInProgress(id: "002", rowsDone: 20, rowsInAll: 25)) {
            try migrator.verifyCurrent(reader)
        }

        try db.execute("DELETE FROM stop")
        var resumed: [String] = []
        #expect(try migrator.migrate(db, willUpgrade: { id, _, _ in resumed.append("start \(id)") },
                                     batchDone: { _, done, _ in resumed.append("\(done)") }) == ["002"])
        #expect(resumed == ["start 002", "25"])
        #expect(try db.scalarInt("SELECT count(*) FROM derived") == 25)
        #expect(try db.scalarInt("SELECT count(*) FROM visits") == 25)
        #expect(try db.scalarInt("SELECT count(DISTINCT x) FROM visits") == 25)
        #expect(try db.scalarInt("SELECT count(*) FROM setups") == 1)
        #expect(try !tableExists("hudson_migration_progress", db))
        try migrator.verifyCurrent(reader)
    }

    @Test("a second writer carries on a migration the first stopped, and the first then finds it applied")
    func anotherWriterFinishes() throws {
        let first = try open()
        try Migrator([base]).migrate(first)
        let migrator = Migrator([base, derive(rowsPerBatch: 7)])
        #expect(throws: SQLiteError.self) {
            try migrator.migrate(first, batchDone: { _, done, _ in if done == 7 { try? stopAt(24, first) } })
        }
        try first.execute("DELETE FROM stop")
        let second = try open()
        #expect(try migrator.migrate(second) == ["002"])
        #expect(try migrator.migrate(first) == [])
        #expect(try first.scalarInt("SELECT count(*) FROM visits") == 25)
        #expect(try first.scalarInt("SELECT count(*) FROM setups") == 1)
    }

    @Test("a batch that breaks a foreign key is refused, and the rows before it stay done")
    func batchBreakingAForeignKey() throws {
        let db = try open()
        try Migrator([base]).migrate(db)
        let refersToMissing = Migration("002", "CREATE TABLE derived (x INTEGER PRIMARY KEY REFERENCES source(x));",
            batches: MigrationBatches(
                table: "source", sql: "INSERT INTO derived (x) SELECT CASE WHEN x = 63 THEN 64 ELSE x END FROM source WHERE rowid > ?1 AND rowid <= ?2",
                rowsPerBatch: 10))
        #expect(throws: MigrationError.foreignKeyViolation(migrationID: "002", table: "derived")) {
            try Migrator([base, refersToMissing]).migrate(db)
        }
        #expect(try db.scalarInt("SELECT count(*) FROM derived") == 20)
        #expect(try Migrator([base, refersToMissing]).appliedIDs(db) == ["001"])
    }

    @Test("a batch waiting on a lock another connection holds past the wait is busy while behind")
    func busyBetweenBatches() throws {
        let db = try open(busyTimeoutMilliseconds: 50)
        try Migrator([base]).migrate(db)
        let holder = try open()
        let migrator = Migrator([base, derive()])
        #expect(throws: MigrationError.busyWhileBehind(ids: ["002"])) {
            try migrator.migrate(db, batchDone: { _, done, _ in
                if done == 10 { try? holder.execute("BEGIN IMMEDIATE") }
            })
        }
        try holder.execute("ROLLBACK")
        #expect(try migrator.migrate(db) == ["002"])
        #expect(try db.scalarInt("SELECT count(*) FROM visits") == 25)
    }
}
