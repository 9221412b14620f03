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

    @Test("JSONRows: many rows as one argument, read back exactly by json_each")
    func jsonRowsRoundTrip() throws {
        let db = try open()
        let texts = ["", "plain", "quote \" and backslash \\", "tab\tnewline\ncontrol\u{01}\u{1F}", "Zoë 日本 🙂", "[1,\"x\"]"]
        var rows = JSONRows()
        #expect(rows.isEmpty)
        for (index, text) in texts.enumerated() {
            rows.append(.integer(Int64(index)), .text(text), .null)
        }
        rows.append(.integer(Int64.min), .text("last"), .integer(Int64.max))
        #expect(rows.count == texts.count + 1)
        let read = try db.map("""
            SELECT value ->> 0, value ->> 1, typeof(value ->> 2), value ->> 2 FROM json_each(?) ORDER BY key
            """, rows) { ($0.int64(0), $0.string(1), $0.string(2), $0.optionalInt64(3)) }
        #expect(read.map(\.0) == Array(0..<Int64(texts.count)) + [Int64.min])
        #expect(read.map(\.1) == texts + ["last"])
        #expect(read.map(\.2) == Array(repeating: "null", count: texts.count) + ["integer"])
        #expect(read.last?.3 == Int64.max)
        #expect(try db.scalarInt("SELECT count(*) FROM json_each(?)", JSONRows()) == 0)
    }
}
