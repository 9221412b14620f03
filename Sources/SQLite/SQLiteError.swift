/*!
 The one error type of the SQLite layer, after GRDB's `DatabaseError`: the extended
 result code, SQLite's own message, and the SQL that failed. The SQL is kept for
 debugging but left out of `description`, because statements in a mail store carry
 addresses and subjects in their bound values and sometimes in their text
 (STYLE.md: "SQL text and bound values are never printed unless HUDSON_DEBUG=1").
 */
import CSQLite

public struct SQLiteError: Error, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The extended result code (https://sqlite.org/rescode.html#extrc).
    public let extendedCode: Int32
    /// `sqlite3_errmsg` at the time of failure. It names tables and columns, never values.
    public let message: String
    /// The statement that failed, if any. Not part of `description`.
    public let sql: String?

    public init(extendedCode: Int32, message: String? = nil, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message ?? String(cString: sqlite3_errstr(extendedCode))
        self.sql = sql
    }

    /// The primary result code: the low byte of the extended code.
    public var code: ResultCode { ResultCode(rawValue: extendedCode & 0xff) }
    public var extended: ResultCode { ResultCode(rawValue: extendedCode) }

    public var description: String {
        "\(message) (\(extended.name))"
    }

    public var debugDescription: String {
        guard let sql else { return description }
        return "\(description) in: \(sql)"
    }
}

/// A primary or extended SQLite result code, usable as a `catch` pattern:
/// `catch SQLiteError.busy { ... }` matches SQLITE_BUSY and every extended busy code.
public struct ResultCode: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public var isPrimary: Bool { rawValue & ~0xff == 0 }

    public var name: String {
        switch rawValue {
        case SQLITE_BUSY: return "SQLITE_BUSY"
        case SQLITE_BUSY | (1 << 8): return "SQLITE_BUSY_RECOVERY"
        case SQLITE_BUSY | (2 << 8): return "SQLITE_BUSY_SNAPSHOT"
        case SQLITE_BUSY | (3 << 8): return "SQLITE_BUSY_TIMEOUT"
        case SQLITE_LOCKED: return "SQLITE_LOCKED"
        case SQLITE_READONLY: return "SQLITE_READONLY"
        case SQLITE_READONLY | (1 << 8): return "SQLITE_READONLY_RECOVERY"
        case SQLITE_READONLY | (2 << 8): return "SQLITE_READONLY_CANTLOCK"
        case SQLITE_READONLY | (3 << 8): return "SQLITE_READONLY_ROLLBACK"
        case SQLITE_READONLY | (5 << 8): return "SQLITE_READONLY_CANTINIT"
        case SQLITE_READONLY | (6 << 8): return "SQLITE_READONLY_DIRECTORY"
        case SQLITE_CONSTRAINT: return "SQLITE_CONSTRAINT"
        case SQLITE_CONSTRAINT | (8 << 8): return "SQLITE_CONSTRAINT_UNIQUE"
        case SQLITE_CONSTRAINT | (6 << 8): return "SQLITE_CONSTRAINT_PRIMARYKEY"
        case SQLITE_CONSTRAINT | (7 << 8): return "SQLITE_CONSTRAINT_TRIGGER"
        case SQLITE_CONSTRAINT | (3 << 8): return "SQLITE_CONSTRAINT_FOREIGNKEY"
        case SQLITE_CONSTRAINT | (1 << 8): return "SQLITE_CONSTRAINT_CHECK"
        case SQLITE_CONSTRAINT | (5 << 8): return "SQLITE_CONSTRAINT_NOTNULL"
        case SQLITE_CORRUPT: return "SQLITE_CORRUPT"
        case SQLITE_NOTADB: return "SQLITE_NOTADB"
        case SQLITE_FULL: return "SQLITE_FULL"
        case SQLITE_IOERR: return "SQLITE_IOERR"
        case SQLITE_CANTOPEN: return "SQLITE_CANTOPEN"
        case SQLITE_PERM: return "SQLITE_PERM"
        case SQLITE_ERROR: return "SQLITE_ERROR"
        case SQLITE_MISUSE: return "SQLITE_MISUSE"
        case SQLITE_INTERRUPT: return "SQLITE_INTERRUPT"
        case SQLITE_NOMEM: return "SQLITE_NOMEM"
        case SQLITE_RANGE: return "SQLITE_RANGE"
        case SQLITE_TOOBIG: return "SQLITE_TOOBIG"
        case SQLITE_ABORT: return "SQLITE_ABORT"
        default:
            return isPrimary ? "SQLITE_\(rawValue)" : "SQLITE_\(rawValue & 0xff)/\(rawValue >> 8)"
        }
    }

    public var description: String { name }

    /// Matches an error whose code is this one. A primary pattern matches all its
    /// extended codes; an extended pattern matches exactly.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return pattern.isPrimary ? error.code == pattern : error.extended == pattern
    }
}

extension SQLiteError {
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let busySnapshot = ResultCode(rawValue: SQLITE_BUSY | (2 << 8))
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    public static let constraintTrigger = ResultCode(rawValue: SQLITE_CONSTRAINT | (7 << 8))
    public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
}
