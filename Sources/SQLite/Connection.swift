/*!
 One connection to one SQLite file, with all per-connection setup in one place
 (`Connection.init`): access mode, busy timeout, foreign keys, WAL, `synchronous`,
 and double-quoted strings off. A connection is used from one thread at a time and is
 not Sendable; a process keeps one (STYLE.md rule 12).
 */
import CSQLite

public struct ConnectionOptions: Sendable {
    public enum Access: Sendable {
        /// `SQLITE_OPEN_READONLY`: the file must exist; nothing can be written.
        case readOnly
        /// The file must exist.
        case readWrite
        /// The file is created when missing.
        case readWriteCreate
    }

    /// `PRAGMA synchronous`. In WAL mode NORMAL never corrupts and a process crash never
    /// loses a commit; FULL also survives power loss for the last commits (sqlite-notes.md).
    public enum Synchronous: String, Sendable {
        case normal = "NORMAL"
        case full = "FULL"
    }

    public var access: Access
    /// How long a statement waits for another connection's lock before SQLITE_BUSY.
    public var busyTimeoutMilliseconds: Int32
    public var synchronous: Synchronous
    /// The page cache in KiB (`PRAGMA cache_size = -N`); nil keeps SQLite's 2 MiB.
    public var cacheKiB: Int?
    /// WAL pages after which a commit checkpoints (`PRAGMA wal_autocheckpoint`); nil
    /// keeps SQLite's 1000.
    public var checkpointPages: Int?
    /// Test seams; inert unless set (see `TestingHooks`).
    public var testing: TestingHooks
    /// Leaves the writing setup (WAL, `synchronous`, checkpoints) to an explicit
    /// `configureForWriting()`. Switching to WAL writes the file's header, so a caller
    /// that must first check whose file it is (the store: another program's database is
    /// refused, never changed) opens with this and configures after the check.
    public var deferWriteSetup: Bool
    /// `SQLITE_OPEN_NOFOLLOW`: a file that is a symbolic link is refused, not followed
    /// (a file in a directory someone else may write, as an export's state).
    public var refusesSymbolicLink: Bool

    public init(
        access: Access, busyTimeoutMilliseconds: Int32 = 5_000, synchronous: Synchronous = .normal, cacheKiB: Int? = nil,
        checkpointPages: Int? = nil, testing: TestingHooks = TestingHooks(), deferWriteSetup: Bool = false,
        refusesSymbolicLink: Bool = false
    ) {
        self.deferWriteSetup = deferWriteSetup
        self.refusesSymbolicLink = refusesSymbolicLink
        self.access = access
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.synchronous = synchronous
        self.cacheKiB = cacheKiB
        self.checkpointPages = checkpointPages
        self.testing = testing
    }
}

/// Seams for the reliability suite (docs/reliability.md), after SQLite's own crash and
/// fault-injection tests: inert by default. The library never sets them; the command
/// layer sets them only from `HUDSON_TEST_*` variables, which no user sets.
public struct TestingHooks: Sendable {
    /// Called after every write transaction commits, so a test can end the process at
    /// each commit in turn and check that a resume from that state completes.
    public var afterWriteCommit: (@Sendable () -> Void)?
    /// Begins write transactions DEFERRED instead of IMMEDIATE. Never right: it exists
    /// so the concurrency suite can show it notices a writer that takes its lock late
    /// (sqlite-notes.md "Transactions": the upgrade fails with SQLITE_BUSY_SNAPSHOT).
    public var deferredWrites: Bool

    public init(afterWriteCommit: (@Sendable () -> Void)? = nil, deferredWrites: Bool = false) {
        self.afterWriteCommit = afterWriteCommit
        self.deferredWrites = deferredWrites
    }
}

public final class Connection {
    let handle: OpaquePointer
    public let path: String
    public let options: ConnectionOptions
    private var statementCache: [String: Statement] = [:]
    var savepointCounter = 0
    /// The kind of the transaction this connection opened, if any.
    public internal(set) var transactionKind: TransactionKind?

    public var isReadOnly: Bool { options.access == .readOnly }

    /// Library-wide settings, made once per process before the first open (shim.h).
    private static let libraryConfigured: Bool = {
        _ = hudson_sqlite3_disable_memstatus()
        return true
    }()

    public init(path: String, options: ConnectionOptions) throws {
        _ = Self.libraryConfigured
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch options.access {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        if options.refusesSymbolicLink { flags |= SQLITE_OPEN_NOFOLLOW }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error: SQLiteError
            if let db {
                error = SQLiteError(extendedCode: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)))
                sqlite3_close_v2(db)
            } else {
                error = SQLiteError(extendedCode: rc)
            }
            throw error
        }
        self.handle = db
        self.path = path
        self.options = options
        do {
            try configure()
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    private func configure() throws {
        sqlite3_extended_result_codes(handle, 1)
        var rc = sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
        guard rc == SQLITE_OK else { throw error(code: rc) }
        rc = hudson_sqlite3_disable_dqs(handle)
        guard rc == SQLITE_OK else { throw error(code: rc) }
        rc = hudson_rows_register(handle)  // `hudson_rows(?)`, for SQLiteRows
        guard rc == SQLITE_OK else { throw error(code: rc) }
        try execute("PRAGMA foreign_keys = ON")
        // Statement journals (one per SAVEPOINT that changes something) and sorts stay in
        // memory. On disk, SQLite spills a statement journal past 64 KiB to a temporary
        // file: a catch-up of 10,000 messages, a savepoint each, wrote 2.2 GB there.
        try execute("PRAGMA temp_store = MEMORY")
        if let cacheKiB = options.cacheKiB {
            try execute("PRAGMA cache_size = -\(max(1, cacheKiB))")
        }
        if !isReadOnly && !options.deferWriteSetup {
            try configureForWriting()
        }
    }

    /// The setup of a connection that writes: WAL, `synchronous`, the checkpoint
    /// interval. Done by `init` unless `deferWriteSetup`; idempotent.
    public func configureForWriting() throws {
        guard !isReadOnly else { return }
        // WAL is a property of the file, but setting it is idempotent and cheap, and it
        // must be set before the first write of a new store.
        let mode = try enableWAL()
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(extendedCode: SQLITE_ERROR, message: "cannot enable WAL journal mode (got \(mode ?? "nothing"))")
        }
        try execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        if let pages = options.checkpointPages {
            try execute("PRAGMA wal_autocheckpoint = \(max(1, pages))")
        }
    }

    /// `PRAGMA journal_mode = WAL`, retried while the file is busy, up to the busy
    /// timeout. SQLite answers it with SQLITE_BUSY at once, without the busy handler, while
    /// another process closing the last connection holds the file to checkpoint and remove
    /// its WAL; four processes opening a new store together hit that window (the longer the
    /// migrations, the wider it is).
    private func enableWAL() throws -> String? {
        var waited: Int32 = 0
        while true {
            do {
                return try scalarString("PRAGMA journal_mode = WAL")
            } catch SQLiteError.busy where waited < options.busyTimeoutMilliseconds {
                sqlite3_sleep(2)
                waited += 2
            }
        }
    }

    // MARK: - Errors

    func error(code: Int32, sql: String? = nil) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        // sqlite3_errmsg describes the most recent failure on this connection; if the
        // code we were given is not that failure, fall back to the generic text.
        let message = (extended & 0xff) == (code & 0xff)
            ? String(cString: sqlite3_errmsg(handle)) : String(cString: sqlite3_errstr(code))
        return SQLiteError(extendedCode: (extended & 0xff) == (code & 0xff) ? extended : code, message: message, sql: sql)
    }

    // MARK: - Statements

    /// Prepares a statement for one-off use.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// A prepared statement kept for the life of the connection, keyed by its SQL.
    public func cached(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs one or more statements that take no arguments (schema, pragmas).
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) }
            sqlite3_free(errorMessage)
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Runs one statement with arguments, through the statement cache.
    public func execute(_ sql: String, _ arguments: any SQLiteBindable...) throws {
        try cached(sql).execute(arguments)
    }

    /// Runs one statement with an argument array, through the statement cache.
    public func execute(_ sql: String, arguments: [any SQLiteBindable]) throws {
        try cached(sql).execute(arguments)
    }

    /// Calls `body` for each row of a cached statement.
    public func forEach(_ sql: String, _ arguments: any SQLiteBindable..., body: (Row) throws -> Void) throws {
        try cached(sql).forEach(arguments, body)
    }

    public func map<T>(_ sql: String, _ arguments: any SQLiteBindable..., transform: (Row) throws -> T) throws -> [T] {
        try cached(sql).map(arguments, transform)
    }

    public func map<T>(_ sql: String, arguments: [any SQLiteBindable], transform: (Row) throws -> T) throws -> [T] {
        try cached(sql).map(arguments, transform)
    }

    public func first<T>(_ sql: String, _ arguments: any SQLiteBindable..., transform: (Row) throws -> T) throws -> T? {
        try cached(sql).first(arguments, transform)
    }

    /// The first column of the first row as an integer, or nil when there is no row or it is NULL.
    public func scalarInt(_ sql: String, _ arguments: any SQLiteBindable...) throws -> Int64? {
        try cached(sql).first(arguments) { $0.optionalInt64(0) } ?? nil
    }

    public func scalarString(_ sql: String, _ arguments: any SQLiteBindable...) throws -> String? {
        try cached(sql).first(arguments) { $0.optionalString(0) } ?? nil
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether the open transaction has broken a deferred foreign key that its commit would
    /// refuse (`SQLITE_DBSTATUS_DEFERRED_FKS`): a count SQLite keeps, so asking is free.
    public var hasDeferredForeignKeyViolations: Bool {
        var current: Int32 = 0
        var highest: Int32 = 0
        return sqlite3_db_status(handle, Int32(SQLITE_DBSTATUS_DEFERRED_FKS), &current, &highest, 0) == SQLITE_OK
            && current > 0
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows changed since the connection opened, triggers and virtual tables included.
    public var totalChanges: Int { Int(sqlite3_total_changes(handle)) }

    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Whether the main database is open read-only: because it was asked for, or because
    /// the file cannot be written, in which case SQLite falls back without saying so.
    public var isMainDatabaseReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Interrupts a running statement from another thread (used on SIGINT).
    public func interrupt() {
        sqlite3_interrupt(handle)
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: copies the whole WAL into the database, waits up
    /// to `busyTimeoutMilliseconds` for readers still using it, then empties the file so
    /// the next write starts it over. Returns false when a reader or writer kept it from
    /// finishing (nothing is lost then; the WAL stays as it was).
    ///
    /// Automatic checkpoints are PASSIVE: they copy what readers allow, and the writer
    /// starts the WAL over only when no reader uses it as it begins. Readers that come and
    /// go all the time can keep that moment from coming, and the WAL then grows without
    /// bound (https://sqlite.org/wal.html, "Avoiding Excessively Large WAL Files").
    /// This mode waits for that moment instead; while it waits it holds the write lock,
    /// so the wait is kept short.
    ///
    /// It must be called outside any transaction of this connection: inside one SQLite
    /// answers SQLITE_LOCKED ("database table is locked") and checkpoints nothing, so that
    /// is refused here as the programming error it is.
    @discardableResult
    public func checkpointTruncating(busyTimeoutMilliseconds: Int32) throws -> Bool {
        guard !isInTransaction else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "WAL checkpoint requested inside a transaction")
        }
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        defer { sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds) }
        do {
            let busy = try first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) } ?? 1
            return busy == 0
        } catch SQLiteError.busy {
            return false
        }
    }

    /// `PRAGMA wal_checkpoint(PASSIVE)`: copies into the database the WAL frames no
    /// reader still needs, without waiting for anyone and without blocking readers or
    /// writers (https://sqlite.org/c3ref/wal_checkpoint_v2.html). Returns whether the
    /// whole WAL was copied. Refused inside a transaction, as `checkpointTruncating` is.
    @discardableResult
    public func checkpointPassive() throws -> Bool {
        guard !isInTransaction else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "WAL checkpoint requested inside a transaction")
        }
        do {
            // (busy, frames in the WAL, frames copied): -1 frames when not in WAL mode.
            let counts = try first("PRAGMA wal_checkpoint(PASSIVE)") { ($0.int(0), $0.int(1), $0.int(2)) }
            guard let (busy, frames, copied) = counts else { return false }
            return busy == 0 && frames == copied
        } catch SQLiteError.busy {
            return false
        }
    }
}

@available(*, unavailable)
extension Connection: Sendable {}

/// The SQLite library this process linked against.
public enum SQLiteLibrary {
    public static var version: String { String(cString: sqlite3_libversion()) }

    /// The bytes SQLite's allocations hold, as its statistics count them: 0 in a process
    /// that opened its connections here, which turns the statistics off (shim.h).
    public static var memoryCounted: Int64 { sqlite3_memory_used() }
}
