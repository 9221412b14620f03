/*!
 The store: one SQLite file that every Hudson command reads and writes. `Store.open`
 is the one place a store is opened: it chooses the access mode, applies the
 per-connection setup (through `SQLite.Connection`), refuses files that are not Hudson
 stores or were written by a newer Hudson, and migrates a writable store.
 The store never prints, reads the environment or exits; it throws `StoreError`.
 */
import Glibc
import SQLite

public final class Store {
    public enum Access: Sendable {
        /// `SQLITE_OPEN_READONLY`; the store must exist and be current.
        case readOnly
        /// The store must exist; it is migrated if it is behind.
        case readWrite
        /// The store is created (mode 0600) when missing, then migrated.
        case create
    }

    /// Milliseconds since the Unix epoch. Injected so tests control time.
    public typealias Clock = @Sendable () -> Int64

    public static let systemClock: Clock = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// The underlying connection. Commands never use it; tests and the store's own
    /// files do.
    public let db: Connection
    public let path: String
    let clock: Clock
    /// Display names of From headers already parsed (ThreadRollup).
    var displayNames: [String: String] = [:]

    public static func open(
        path: String,
        access: Access,
        busyTimeoutMilliseconds: Int32 = 5_000,
        synchronous: ConnectionOptions.Synchronous = .normal,
        cacheKiB: Int? = nil,
        checkpointPages: Int? = nil,
        clock: @escaping Clock = Store.systemClock
    ) throws -> Store {
        let exists = fileExists(path)
        switch access {
        case .readOnly, .readWrite:
            guard exists else { throw StoreError.noStore(path: path) }
        case .create:
            if !exists { try createPrivateFile(path) }
        }
        let connectionAccess: ConnectionOptions.Access = access == .readOnly ? .readOnly : .readWrite
        let db: Connection
        do {
            db = try Connection(path: path, options: ConnectionOptions(
                access: connectionAccess, busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: synchronous,
                cacheKiB: cacheKiB, checkpointPages: checkpointPages))
            try checkIsHudsonStore(db, path: path, allowEmpty: access != .readOnly)
            if access == .readOnly {
                try Schema.migrator.verifyCurrent(db)
            } else {
                try Schema.migrator.migrate(db)
            }
        } catch let error as MigrationError {
            switch error {
            case .newerSchema: throw StoreError.newerSchema(path: path)
            case .pendingMigrations: throw StoreError.olderSchema(path: path)
            case .foreignKeyViolation: throw StoreError.migrationFailed(path: path, reason: error.description)
            }
        } catch SQLiteError.notADatabase {
            throw StoreError.notAStore(path: path, reason: "not a SQLite database")
        } catch SQLiteError.corrupt {
            throw StoreError.notAStore(path: path, reason: "the database is corrupt")
        }
        return Store(db: db, path: path, clock: clock)
    }

    init(db: Connection, path: String, clock: @escaping Clock) {
        self.db = db
        self.path = path
        self.clock = clock
    }

    /// The current time from the injected clock, in epoch milliseconds.
    public var now: Int64 { clock() }

    /// A file with tables but without Hudson's application id is someone else's
    /// database: refuse it rather than add tables to it or treat it as an empty mailbox.
    private static func checkIsHudsonStore(_ db: Connection, path: String, allowEmpty: Bool) throws {
        let applicationID = try db.scalarInt("PRAGMA application_id") ?? 0
        if applicationID == Int64(Schema.applicationID) { return }
        let objects = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
        if objects == 0 && allowEmpty { return }
        throw StoreError.notAStore(path: path, reason: objects == 0 ? "the file is empty" : "not a Hudson store")
    }

    private static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Creates the store file 0600 before SQLite opens it: SQLite gives `-wal` and
    /// `-shm` the database file's mode, so they follow (sqlite-notes.md). O_EXCL makes
    /// a concurrent creator harmless: whoever loses just opens the file.
    private static func createPrivateFile(_ path: String) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            fchmod(fd, 0o600)  // umask cannot widen it, but be explicit
            close(fd)
            return
        }
        let code = errno
        if code == EEXIST { return }
        throw StoreError.cannotCreate(path: path, reason: String(cString: strerror(code)))
    }
}

@available(*, unavailable)
extension Store: Sendable {}
