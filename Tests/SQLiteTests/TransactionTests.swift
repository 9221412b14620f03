import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("Transactions, savepoints and concurrent connections")
struct TransactionTests {
    let dir = TemporaryDirectory()

    func open(timeout: Int32 = 5_000, access: ConnectionOptions.Access = .readWriteCreate) throws -> Connection {
        try Connection(path: dir.path("t.db"), options: ConnectionOptions(access: access, busyTimeoutMilliseconds: timeout))
    }

    struct Boom: Error, Equatable {}

    @Test("write commits on return")
    func commit() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        try db.write { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 1)
        #expect(!db.isInTransaction)
    }

    @Test("write rolls back on throw and rethrows the body's error")
    func rollback() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        #expect(throws: Boom.self) {
            try db.write {
                try db.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
    }

    @Test("write is BEGIN IMMEDIATE: the write lock is held from the start")
    func writeIsImmediate() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        let other = try open(timeout: 0)
        _ = try db.write {
            // No statement has run yet in this transaction, and still no one else can write.
            #expect(throws: SQLiteError.self) { try other.execute("BEGIN IMMEDIATE") }
        }
    }

    @Test("read is deferred: it takes no write lock")
    func readIsDeferred() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        let other = try open(timeout: 0)
        try db.read {
            _ = try db.scalarInt("SELECT count(*) FROM t")
            try other.write { try other.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 1)
    }

    @Test("a savepoint that throws undoes only its own writes")
    func savepoint() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        try db.write {
            try db.execute("INSERT INTO t VALUES (1)")
            try? db.savepoint {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Boom()
            }
            try db.savepoint { try db.execute("INSERT INTO t VALUES (3)") }
        }
        #expect(try db.map("SELECT a FROM t ORDER BY a") { $0.int(0) } == [1, 3])
    }

    @Test("write inside write nests as a savepoint; write inside read is refused")
    func nesting() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        try db.write {
            try db.write { try db.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 1)
        #expect(throws: SQLiteError.self) {
            try db.read { try db.write { try db.execute("INSERT INTO t VALUES (2)") } }
        }
    }

    @Test("a reader reads while a writer holds a write transaction (WAL)")
    func readerDuringWrite() throws {
        let writer = try open()
        try writer.execute("CREATE TABLE t (a)")
        try writer.execute("INSERT INTO t VALUES (1)")
        let reader = try open(timeout: 0, access: .readOnly)
        try writer.write {
            try writer.execute("INSERT INTO t VALUES (2)")
            // Not blocked, and sees the last committed state only.
            #expect(try reader.scalarInt("SELECT count(*) FROM t") == 1)
        }
        #expect(try reader.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test("a second writer waits for the busy timeout and then gets SQLITE_BUSY")
    func secondWriterTimesOut() throws {
        let writer = try open()
        try writer.execute("CREATE TABLE t (a)")
        let second = try open(timeout: 300)
        try writer.write {
            try writer.execute("INSERT INTO t VALUES (1)")
            let started = Date()
            do {
                try second.write { try second.execute("INSERT INTO t VALUES (2)") }
                Issue.record("second writer was not blocked")
            } catch SQLiteError.busy {
                #expect(Date().timeIntervalSince(started) >= 0.25)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(!second.isInTransaction)
    }

    @Test("the test seams: afterWriteCommit runs once per committed write, never for reads or rollbacks")
    func afterWriteCommitHook() throws {
        final class Counter: @unchecked Sendable { var value = 0 }
        let counter = Counter()
        var options = ConnectionOptions(access: .readWriteCreate)
        options.testing = TestingHooks(afterWriteCommit: { counter.value += 1 })
        let db = try Connection(path: dir.path("hooked.db"), options: options)
        try db.execute("CREATE TABLE t (a)")
        try db.write { try db.execute("INSERT INTO t VALUES (1)") }
        try db.write { try db.savepoint { try db.execute("INSERT INTO t VALUES (2)") } }
        _ = try db.read { try db.scalarInt("SELECT count(*) FROM t") }
        #expect(throws: Boom.self) { try db.write { try db.execute("INSERT INTO t VALUES (3)"); throw Boom() } }
        #expect(counter.value == 2)
    }

    @Test("the test seams: deferredWrites begins writes without the write lock, which a second writer then sees")
    func deferredWritesSeam() throws {
        var options = ConnectionOptions(access: .readWriteCreate)
        options.testing.deferredWrites = true
        let deferred = try Connection(path: dir.path("t.db"), options: options)
        try deferred.execute("CREATE TABLE t (a)")
        let other = try open(timeout: 0)
        try deferred.write {
            // A deferred transaction holds no lock until it writes: another writer gets in first.
            try other.write { try other.execute("INSERT INTO t VALUES (1)") }
            #expect(try deferred.scalarInt("SELECT count(*) FROM t") == 1)
        }
        let immediate = try open()
        _ = try immediate.write {
            #expect(throws: SQLiteError.self) { try other.write { try other.execute("INSERT INTO t VALUES (2)") } }
        }
    }
}
