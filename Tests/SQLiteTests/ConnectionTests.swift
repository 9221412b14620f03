import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("SQLite connection setup and statements")
struct ConnectionTests {
    let dir = TemporaryDirectory()

    func open(_ name: String = "t.db", access: ConnectionOptions.Access = .readWriteCreate,
              timeout: Int32 = 5_000, synchronous: ConnectionOptions.Synchronous = .normal) throws -> Connection {
        try Connection(path: dir.path(name), options: ConnectionOptions(
            access: access, busyTimeoutMilliseconds: timeout, synchronous: synchronous))
    }

    @Test("per-connection setup: WAL, synchronous, foreign keys and the busy timeout in one place")
    func setup() throws {
        let db = try open()
        #expect(try db.scalarString("PRAGMA journal_mode") == "wal")
        #expect(try db.scalarInt("PRAGMA synchronous") == 1)  // NORMAL
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarInt("PRAGMA busy_timeout") == 5_000)
        let full = try open(synchronous: .full)
        #expect(try full.scalarInt("PRAGMA synchronous") == 2)  // FULL
        let short = try open(timeout: 250)
        #expect(try short.scalarInt("PRAGMA busy_timeout") == 250)
    }

    @Test("SQLite's memory statistics are off: no allocation takes their global lock")
    func memoryStatisticsOff() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a); INSERT INTO t VALUES (randomblob(100000))")
        #expect(try db.scalarInt("SELECT length(a) FROM t") == 100_000)
        #expect(SQLiteLibrary.memoryCounted == 0)
    }

    @Test("double-quoted strings are identifiers only: a misspelt column is an error, not a string")
    func doubleQuotedStringsOff() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a)")
        #expect(throws: SQLiteError.self) { try db.scalarString("SELECT \"no_such_column\" FROM t") }
    }

    @Test("read-only connections cannot write and never create the file")
    func readOnly() throws {
        #expect(throws: SQLiteError.self) { try open("missing.db", access: .readOnly) }
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing.db")))
        let writer = try open()
        try writer.execute("CREATE TABLE t (a)")
        let reader = try open(access: .readOnly)
        #expect(reader.isReadOnly)
        do {
            try reader.execute("INSERT INTO t VALUES (?)", 1 as Int)
            Issue.record("write on a read-only connection succeeded")
        } catch SQLiteError.readOnly {
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("typed binding round-trips every storage class, optionals and booleans")
    func binding() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n, f INTEGER)")
        let none: String? = nil
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                       Int64.max, 2.5, "héllo \u{0} wörld", [0, 1, 255] as [UInt8], none, true)
        let row = try #require(try db.first("SELECT i, r, s, b, n, f FROM t") { row in
            (row.int64(0), row.double(1), row.string(2), row.blob(3), row.isNull(4), row.bool(5), row.value(4))
        })
        #expect(row.0 == Int64.max)
        #expect(row.1 == 2.5)
        #expect(row.2 == "héllo \u{0} wörld")
        #expect(row.3 == [0, 1, 255])
        #expect(row.4)
        #expect(row.5)
        #expect(row.6 == .null)
    }

    @Test("a wrong number of arguments is an error, not a silent NULL")
    func argumentCount() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a, b)")
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (?, ?)", 1 as Int) }
    }

    @Test("errors carry the extended code and match catch patterns; their description has no SQL or values")
    func errors() throws {
        let db = try open()
        try db.execute("CREATE TABLE t (a TEXT UNIQUE)")
        try db.execute("INSERT INTO t VALUES (?)", "secret@example.com")
        do {
            try db.execute("INSERT INTO t VALUES (?)", "secret@example.com")
            Issue.record("duplicate accepted")
        } catch SQLiteError.constraintUnique {
        } catch {
            Issue.record("unexpected \(error)")
        }
        do {
            try db.execute("INSERT INTO t VALUES (?)", "secret@example.com")
        } catch let error as SQLiteError {
            #expect(error.code == SQLiteError.constraint)
            #expect(error.extended == SQLiteError.constraintUnique)
            #expect(!error.description.contains("secret"))
            #expect(!error.description.contains("INSERT"))
            #expect(error.debugDescription.contains("INSERT INTO t"))
        }
    }

    @Test("statements are cached per SQL text")
    func statementCache() throws {
        let db = try open()
        let first = try db.cached("SELECT 1")
        let second = try db.cached("SELECT 1")
        #expect(first === second)
    }

    @Test("SQLiteRows: many rows as one argument, read in place and natively typed by hudson_rows(?)")
    func rowsRoundTrip() throws {
        let db = try open()
        let texts = ["", "plain", "quote \" and backslash \\", "tab\tnewline\ncontrol\u{01}", "Zoë 日本 🙂", "nul\u{0}inside"]
        let rows = SQLiteRows(columns: 3)
        #expect(rows.isEmpty)
        for (index, text) in texts.enumerated() {
            rows.append(.integer(Int64(index)), .text(text), .null)
        }
        rows.append(.integer(Int64.min), .text("last"), .integer(Int64.max))
        #expect(rows.count == texts.count + 1)
        let read = try db.map("""
            SELECT rowid, c0, typeof(c1), c1, typeof(c2), c2, c3, c7 FROM hudson_rows(?) ORDER BY rowid
            """, rows) {
            ($0.int64(0), $0.int64(1), $0.string(2), $0.string(3), $0.string(4), $0.optionalInt64(5), $0.isNull(6), $0.isNull(7))
        }
        #expect(read.map(\.0) == Array(0...Int64(texts.count)))
        #expect(read.map(\.1) == Array(0..<Int64(texts.count)) + [Int64.min])
        #expect(read.allSatisfy { $0.2 == "text" })
        #expect(read.map(\.3) == texts + ["last"])
        #expect(read.map(\.4) == Array(repeating: "null", count: texts.count) + ["integer"])
        #expect(read.last?.5 == Int64.max)
        #expect(read.allSatisfy { $0.6 && $0.7 })  // past the row's width
        // The same rows, bound again, join a table by index; none at all is no rows.
        try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        try db.execute("INSERT INTO t (k, v) SELECT c0, c1 FROM hudson_rows(?) WHERE c0 >= 0", rows)
        #expect(try db.scalarInt("SELECT count(*) FROM t JOIN hudson_rows(?) AS r ON t.k = r.c0 AND t.v = r.c1", rows) == 6)
        #expect(try db.scalarInt("SELECT count(*) FROM hudson_rows(?)", SQLiteRows(columns: 1)) == 0)
        // Rows wrapped in an Optional are bound as rows too, and a nil one as NULL.
        let some: SQLiteRows? = rows, none: SQLiteRows? = nil
        #expect(try db.scalarInt("SELECT count(*) FROM hudson_rows(?)", some) == Int64(texts.count + 1))
        #expect(try db.scalarInt("SELECT ? IS NULL", none) == 1)
        // Without its argument the table cannot be read at all.
        #expect(throws: SQLiteError.self) { try db.scalarInt("SELECT count(*) FROM hudson_rows") }
    }
}
