/*!
 The store: one SQLite file that every Hudson command reads and writes. `Store.open`
 is the one place a store is opened: it chooses the access mode, applies the
 per-connection setup (through `SQLite.Connection`), refuses files that are not Hudson
 stores or were written by a newer Hudson, and migrates a writable store.
 The store never prints, reads the environment or exits; it throws `StoreError`.
 */
import Glibc
import HudsonText
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
    var displayNames = BoundedMemo<String, String>()
    /// Sorted label lists already split (Search): a mailbox has few distinct label sets,
    /// and splitting each message's list again was a sixteenth of streaming a search.
    var labelLists = BoundedMemo<String, [String]>()

    public static func open(
        path: String,
        access: Access,
        busyTimeoutMilliseconds: Int32 = 5_000,
        synchronous: ConnectionOptions.Synchronous = .normal,
        cacheKiB: Int? = nil,
        checkpointPages: Int? = nil,
        clock: @escaping Clock = Store.systemClock,
        testing: TestingHooks = TestingHooks(),
        willUpgrade: ((_ migration: String, _ number: Int, _ of: Int) -> Void)? = nil,
        upgradeProgress: ((_ migration: String, _ rowsDone: Int64, _ rowsInAll: Int64) -> Void)? = nil
    ) throws -> Store {
        let exists = fileExists(path)
        // A directory, a device or a pipe where the store should be is a configuration
        // error (78), said as such, not a failure of SQLite to open it.
        if exists, let kind = nonRegularKind(path) {
            throw StoreError.unusable(path: path, reason: "\(kind), not a store file")
        }
        switch access {
        case .readOnly, .readWrite:
            guard exists else { throw StoreError.noStore(path: path) }
            // Checked before SQLite opens it: setting WAL mode would write a header into
            // an empty file, and a migration would then make it a new, empty mailbox.
            if fileSize(path) == 0 { throw StoreError.notAStore(path: path, reason: "the file is empty") }
        case .create:
            if !exists { try createPrivateFile(path) }
        }
        let connectionAccess: ConnectionOptions.Access = access == .readOnly ? .readOnly : .readWrite
        let db: Connection
        var migrated: [String] = []
        do {
            db = try Connection(path: path, options: ConnectionOptions(
                access: connectionAccess, busyTimeoutMilliseconds: busyTimeoutMilliseconds, synchronous: synchronous,
                cacheKiB: cacheKiB, checkpointPages: checkpointPages, testing: testing, deferWriteSetup: true))
            // The index and its content view call hudson_shown_v1 (migration 009); every
            // connection that can fire the triggers or read the view defines it. The index
            // keeps no copy of its text, so each delete recomputes what was indexed: the
            // function must never change its answers. A change to TerminalSafety.shown that
            // changes them (StoreOpenTests pins them) needs a new name and a migration that
            // rebuilds the index with it.
            try db.defineTextFunction("hudson_shown_v1", TerminalSafety.shown)
            // The same rule for the index since migration 013 (IndexText).
            try db.defineTextFunction("hudson_indexed_v1") { IndexText.forIndex(TerminalSafety.shown($0)) }
            // Migration 035 reads list headers from stored sources; only a writer migrates.
            if access != .readOnly { try defineListHeaderFunctions(db) }
            // SQLite opens a file it cannot write read-only without a word; a command that
            // writes would then fail at its first change, after doing its work.
            if access != .readOnly && db.isMainDatabaseReadOnly {
                throw StoreError.unusable(path: path, reason: unusableReason(path, writing: true) ?? "cannot write the store")
            }
            // Only a store being created may be empty: an empty file where a store should be
            // is a damaged store, not an empty mailbox (a crash between creating the file and
            // its first migration leaves one, which hd-auth, creating, picks up).
            try checkIsHudsonStore(db, path: path, allowEmpty: access == .create)
            // Only now, with the file known to be a store (or a new one), does a writer
            // switch it to WAL: that writes the header of another program's database too.
            try db.configureForWriting()
            if access == .readOnly {
                try Schema.migrator.verifyCurrent(db)
            } else {
                migrated = try Schema.migrator.migrate(db, willUpgrade: willUpgrade, batchDone: upgradeProgress)
            }
        } catch let error as MigrationError {
            switch error {
            case .newerSchema: throw StoreError.newerSchema(path: path)
            case .pendingMigrations: throw StoreError.olderSchema(path: path)
            case .foreignKeyViolation: throw StoreError.migrationFailed(path: path, reason: error.description)
            case .busyWhileBehind: throw StoreError.beingUpgraded(path: path)
            case .upgradeInProgress(_, let done, let all):
                throw StoreError.upgradeUnfinished(path: path, rowsDone: done, rowsInAll: all)
            }
        } catch SQLiteError.notADatabase {
            throw StoreError.notAStore(path: path, reason: "not a SQLite database")
        } catch SQLiteError.corrupt {
            throw StoreError.notAStore(path: path, reason: "the database is corrupt")
        } catch let error as SQLiteError where error.code == SQLiteError.cantOpen || error.code == SQLiteError.readOnly {
            guard let reason = unusableReason(path, writing: access != .readOnly) else { throw error }
            throw StoreError.unusable(path: path, reason: reason)
        }
        let store = Store(db: db, path: path, clock: clock)
        store.upgradedNow = migrated
        // Migrations write every page they touch to the WAL, once per migration: a new
        // store's WAL held 630 KB of them before its first message. Emptied at once (if no
        // reader holds it within the wait), the store starts at its size, not twice it.
        if !migrated.isEmpty { _ = try? store.checkpointWAL() }
        return store
    }

    init(db: Connection, path: String, clock: @escaping Clock) {
        self.db = db
        self.path = path
        self.clock = clock
    }

    /// The migrations this open applied (Migrator.migrate): empty unless it upgraded the
    /// store, so a command can say what an upgrade left to do.
    public private(set) var upgradedNow: [String] = []

    /// Whether this open filled list headers from kept sources (migration 035) in a store
    /// made before it, not a new one.
    public var upgradeReadListHeaders: Bool {
        upgradedNow.contains("035_list_headers") && !upgradedNow.contains("001_initial")
    }

    /// The current time from the injected clock, in epoch milliseconds.
    public var now: Int64 { clock() }

    /// Empties the WAL once no reader uses it, waiting at most `waitingMilliseconds`
    /// (`Connection.checkpointTruncating`). A long-running writer (sync, between passes)
    /// calls it so that readers coming and going cannot keep the WAL growing, and so that
    /// a WAL grown while a long reader held it back shrinks again (sqlite-notes.md: "readers'
    /// snapshots pin the WAL and it grows; checkpoints cannot pass a long-lived reader").
    /// Returns false when a reader outlasted the wait; the next call tries again.
    @discardableResult
    public func checkpointWAL(waitingMilliseconds: Int32 = 250) throws -> Bool {
        try db.checkpointTruncating(busyTimeoutMilliseconds: waitingMilliseconds)
    }

    /// Copies what the WAL holds into the store file as far as readers allow, blocking
    /// no one (`Connection.checkpointPassive`): the work a last connection's close does,
    /// done by the checkpoint helper once the command it stands in for has exited
    /// (HudsonCLI: CheckpointHelper). Returns whether the whole WAL was copied.
    @discardableResult
    public func copyWALIntoStore() throws -> Bool {
        try db.checkpointPassive()
    }

    /// `checkpointWAL`, only when the WAL file has outgrown automatic checkpoints: past
    /// twice the size at which a commit checkpoints (`wal_autocheckpoint` pages, as the
    /// connection set it). Below that the automatic checkpoints are keeping it in bounds,
    /// and an extra full checkpoint would only cost: a catch-up sets them 64 MiB apart
    /// precisely so that the pages it rewrites are copied once per 64 MiB (SyncRunner).
    /// Returns nil when the WAL is within bounds, else what `checkpointWAL` returned.
    @discardableResult
    public func checkpointWALIfOutgrown(waitingMilliseconds: Int32 = 250) throws -> Bool? {
        guard let size = Self.fileSize(path + "-wal"), size > walSizeLimit else { return nil }
        return try checkpointWAL(waitingMilliseconds: waitingMilliseconds)
    }

    /// The WAL size past which `checkpointWALIfOutgrown` checkpoints, in bytes.
    public var walSizeLimit: Int64 {
        let pages = Int64(db.options.checkpointPages ?? 1000)
        let pageSize = (try? db.scalarInt("PRAGMA page_size")) ?? nil
        return 2 * pages * (pageSize ?? 4096)
    }

    /// A file with tables but without Hudson's application id is someone else's
    /// database: refuse it rather than add tables to it or treat it as an empty mailbox.
    /// Both are read in one transaction: read apart, another process's first migration
    /// (tables and id, committed together) could land between them, and a store being
    /// created would look like a foreign database with no id.
    private static func checkIsHudsonStore(_ db: Connection, path: String, allowEmpty: Bool) throws {
        let (applicationID, objects) = try db.read {
            (try db.scalarInt("PRAGMA application_id") ?? 0, try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0)
        }
        if applicationID == Int64(Schema.applicationID) { return }
        if objects == 0 && allowEmpty { return }
        throw StoreError.notAStore(path: path, reason: objects == 0 ? "the file is empty" : "not a Hudson store")
    }

    /// Why the store cannot be opened as asked, in words, or nil when nothing explains
    /// it. Besides the file, SQLite needs its directory: the -wal and -shm files live
    /// beside the store, and even a reader must create the -shm when it is missing
    /// (https://sqlite.org/wal.html, "Read-Only Databases").
    static func unusableReason(_ path: String, writing: Bool) -> String? {
        let verb = writing ? "cannot write the store" : "cannot read the store"
        var system = statvfs()
        if statvfs(path, &system) == 0 && system.f_flag & UInt(ST_RDONLY) != 0 {
            return writing ? "\(verb): it is on a read-only file system"
                : "\(verb): it is on a read-only file system and SQLite must create \(path)-shm beside it; copy it somewhere writable"
        }
        if access(path, R_OK) != 0 { return "\(verb): the file is not readable (\(String(cString: strerror(errno))))" }
        if writing && access(path, W_OK) != 0 { return "\(verb): the file is read-only (\(String(cString: strerror(errno))))" }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if (writing || !fileExists(path + "-shm")) && access(directory, W_OK) != 0 {
            return "\(verb): its directory \(directory) is read-only, and SQLite keeps the store's -wal and -shm files beside it"
        }
        return nil
    }

    /// "a directory", "a device"..., or nil for a regular file (or a link to one).
    private static func nonRegularKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFIFO: return "a pipe"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    private static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The file's size from stat(2): the store file is never opened outside SQLite
    /// (sqlite-notes.md: closing any descriptor of it drops SQLite's locks).
    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
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
