/*!
 A prepared statement with typed binding and a row cursor. Statements belong to one
 connection and one thread, so they are explicitly not Sendable (STYLE.md rule 12).
 */
import CSQLite

public final class Statement {
    let handle: OpaquePointer
    unowned let connection: Connection
    /// The statement's SQL text, for debugging only (never printed by default).
    public let sql: String
    /// Rows bound by pointer (SQLiteRows), kept alive as long as they are bound.
    private var boundRows: [SQLiteRows] = []

    init(connection: Connection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.error(code: rc, sql: sql)
        }
        self.handle = statement
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `arguments` to its parameters, in order.
    public func bind(_ arguments: [any SQLiteBindable]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        boundRows.removeAll(keepingCapacity: true)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message: "statement takes \(expected) arguments, got \(arguments.count)",
                sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            if let rows = argument.rowsArgument {
                // SQLite reads the rows in place while the statement runs: keep them alive
                // until the next bind replaces the binding.
                rc = hudson_rows_bind(handle, index, rows.pointer)
                boundRows.append(rows)
                guard rc == SQLITE_OK else { throw connection.error(code: rc, sql: sql) }
                continue
            }
            switch argument.sqliteValue {
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .integer(let value):
                rc = sqlite3_bind_int64(handle, index, value)
            case .real(let value):
                rc = sqlite3_bind_double(handle, index, value)
            case .text(var value):
                // With an explicit byte count, so text with an embedded NUL is kept whole.
                rc = value.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        guard let base = chars.baseAddress, !chars.isEmpty else {
                            // An empty buffer may have no address; '' needs a non-NULL pointer.
                            return sqlite3_bind_text(handle, index, "", 0, hudson_sqlite3_transient())
                        }
                        return sqlite3_bind_text64(
                            handle, index, base, sqlite3_uint64(chars.count), hudson_sqlite3_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob64(
                        handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), hudson_sqlite3_transient())
                }
            }
            guard rc == SQLITE_OK else { throw connection.error(code: rc, sql: sql) }
        }
    }

    /// Advances to the next row. Returns false when the statement is done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            return false
        default:
            let error = connection.error(code: rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// The current row, after `step()` returned true. Valid until the next step or reset.
    public var currentRow: Row { Row(statement: self) }

    /// Releases the statement's read snapshot and locks; bindings stay.
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Runs the statement to completion, ignoring any rows.
    public func execute(_ arguments: [any SQLiteBindable] = []) throws {
        try bind(arguments)
        defer { reset() }
        while try step() {}
    }

    /// Calls `body` with each row. The row is valid only inside the call.
    public func forEach(_ arguments: [any SQLiteBindable] = [], _ body: (Row) throws -> Void) throws {
        try bind(arguments)
        defer { reset() }
        let row = Row(statement: self)
        while try step() {
            try body(row)
        }
    }

    /// Maps every row.
    public func map<T>(_ arguments: [any SQLiteBindable] = [], _ transform: (Row) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEach(arguments) { result.append(try transform($0)) }
        return result
    }

    /// Maps the first row, if any, and stops.
    public func first<T>(_ arguments: [any SQLiteBindable] = [], _ transform: (Row) throws -> T) throws -> T? {
        try bind(arguments)
        defer { reset() }
        guard try step() else { return nil }
        return try transform(Row(statement: self))
    }

    /// The statement with every parameter replaced by its bound value, for debugging.
    public var expandedSQL: String {
        guard let cString = sqlite3_expanded_sql(handle) else { return sql }
        defer { sqlite3_free(cString) }
        return String(cString: cString)
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// The current row of a statement. Column access is by index, typed by the caller.
public struct Row {
    let statement: Statement

    var handle: OpaquePointer { statement.handle }

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func columnName(_ index: Int) -> String {
        String(cString: sqlite3_column_name(handle, Int32(index)))
    }

    public func isNull(_ index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    public func int64(_ index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    public func int(_ index: Int) -> Int {
        Int(sqlite3_column_int64(handle, Int32(index)))
    }

    public func bool(_ index: Int) -> Bool {
        sqlite3_column_int64(handle, Int32(index)) != 0
    }

    public func double(_ index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    /// The column as text; NULL reads as the empty string.
    public func string(_ index: Int) -> String {
        optionalString(index) ?? ""
    }

    public func optionalString(_ index: Int) -> String? {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        let buffer = UnsafeBufferPointer(start: text, count: count)
        return String(decoding: buffer, as: UTF8.self)
    }

    public func optionalInt64(_ index: Int) -> Int64? {
        isNull(index) ? nil : int64(index)
    }

    public func optionalInt(_ index: Int) -> Int? {
        isNull(index) ? nil : int(index)
    }

    public func blob(_ index: Int) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    public func value(_ index: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: return .integer(int64(index))
        case SQLITE_FLOAT: return .real(double(index))
        case SQLITE_TEXT: return .text(string(index))
        case SQLITE_BLOB: return .blob(blob(index))
        default: return .null
        }
    }
}

@available(*, unavailable)
extension Row: Sendable {}
