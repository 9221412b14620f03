/*!
 Values that cross the boundary into and out of SQLite. `SQLiteValue` is the dynamic
 form; `SQLiteBindable` lets statements take plain Swift values as arguments, so call
 sites read `try db.execute(sql, email, limit)` and never format values into SQL.
 */
import CSQLite

/// A value of one of SQLite's five storage classes.
public enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that can be bound to a statement parameter.
public protocol SQLiteBindable {
    var sqliteValue: SQLiteValue { get }
    /// Rows bound as one argument (`SQLiteRows`, read as `hudson_rows(?)`), or nil for a
    /// value. Asked of every argument: a dynamic cast to find the rows cost more than the
    /// bind itself (580 instructions an argument).
    var rowsArgument: SQLiteRows? { get }
}

extension SQLiteBindable {
    public var rowsArgument: SQLiteRows? { nil }
}

extension SQLiteValue: SQLiteBindable {
    public var sqliteValue: SQLiteValue { self }
}

extension Int64: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .integer(self) }
}

extension Int: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Int32: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Bool: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
}

extension Double: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .real(self) }
}

extension String: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .text(self) }
}

extension Substring: SQLiteBindable {
    public var sqliteValue: SQLiteValue { .text(String(self)) }
}

extension Array: SQLiteBindable where Element == UInt8 {
    public var sqliteValue: SQLiteValue { .blob(self) }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    public var rowsArgument: SQLiteRows? { self?.rowsArgument }

    public var sqliteValue: SQLiteValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.sqliteValue
        }
    }
}
