/*!
 Many rows bound as one argument: a write of a thousand rows is one statement instead of
 a thousand, each of which costs a reset, bindings, cursors opened and closed, and a round
 trip through this wrapper. The rows live in C memory (CSQLite's hudson_rows) and a
 statement reads them in place, natively typed, as the table `hudson_rows(?)`: columns c0
 to c7, NULL past the row's width. JSON read by json_each did the same job, but parsing
 each row's fields cost more than the statements it saved (docs/performance.md, "hd-mark").

     let rows = SQLiteRows(columns: 2)
     rows.append(.integer(key), .text(label))
     try db.execute("DELETE FROM t WHERE (k, label) IN (SELECT c0, c1 FROM hudson_rows(?))", rows)
 */
import CSQLite

public final class SQLiteRows: SQLiteBindable {
    /// One field of a row.
    public enum Field: Sendable {
        case integer(Int64)
        case text(String)
        case null
    }

    let pointer: UnsafeMutablePointer<hudson_rows>
    public let columns: Int

    /// Rows of `columns` fields (1 to 8).
    public init(columns: Int) {
        precondition((1...HUDSON_ROWS_WIDTH).contains(columns), "SQLiteRows: 1 to 8 columns")
        guard let pointer = hudson_rows_new(Int32(columns)) else { fatalError("SQLiteRows: out of memory") }
        self.pointer = pointer
        self.columns = columns
    }

    deinit {
        hudson_rows_free(pointer)
    }

    /// Complete rows appended so far.
    public var count: Int { Int(hudson_rows_count(pointer)) }

    public var isEmpty: Bool { count == 0 }

    /// Appends one row of exactly `columns` fields.
    public func append(_ fields: Field...) {
        precondition(fields.count == columns, "SQLiteRows: a row of \(columns) fields")
        for field in fields {
            let appended: Int32
            switch field {
            case .integer(let value):
                appended = hudson_rows_append_integer(pointer, value)
            case .text(var value):
                appended = value.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) {
                        hudson_rows_append_text(pointer, $0.baseAddress, Int32($0.count))
                    }
                }
            case .null:
                appended = hudson_rows_append_null(pointer)
            }
            guard appended != 0 else { fatalError("SQLiteRows: out of memory") }
        }
    }

    /// Never used: a statement binds the rows themselves (Statement.bind), not a value.
    public var sqliteValue: SQLiteValue { .null }
    public var rowsArgument: SQLiteRows? { self }
}
