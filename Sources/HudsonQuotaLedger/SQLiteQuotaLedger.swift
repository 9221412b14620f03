/*!
 The QuotaLedger of the command line: one small SQLite file per account that every Hudson
 process of that account opens, so one per-user Gmail budget is shared among them (issue 17,
 point 5; QuotaBucket makes every decision, this file only keeps the account atomically).

 Why a file of its own and not a table in the store: every Gmail request takes a write
 transaction here. In the store, that transaction would queue behind sync's page commits,
 which hold the store's one write lock for tens to hundreds of milliseconds; every admission
 would wait for them, the network and the store would no longer overlap in a backfill or
 hydration, and an interactive request would wait for a background commit. Here a step is a
 few statements on a few pages, the lock is held for microseconds, and nothing else writes.
 The ledger also needs none of the store's guarantees: it has its own schema version, and
 `synchronous=OFF`, because losing it to an OS crash or a power cut is harmless (a window is
 a minute long; a lost ledger only forgets the last minute's admissions, which Gmail's own
 429 and the bucket's penalty then cover). It is created 0600 (its `-wal` and `-shm` follow).

 Time is `CLOCK_BOOTTIME`: shared by every process of the machine, never stepped by NTP or
 the user, and counting a suspend (so a window that passed while the laptop slept is over).
 An entry stamped later than now comes from another timeline (the machine rebooted, which
 restarts the clock): admissions are moved to now (counted one more window at most), leases
 and penalties are passed over and dropped. So no clock step can strand a waiter.

 Bounded: each admission step forgets the admissions that left the window, and each lease or
 penalty step the leases that lapsed and the penalty that ended, so the file holds one
 window's admissions and a row per live process; the WAL is checkpointed every 64 pages and
 cut back to 256 KiB. An admission step costs the same however full the window is: the
 window's units per lane are kept in a row of their own.

 The busy timeout is bounded (1 s by default). A step holds the lock for tens of
 microseconds, so waiting longer than that means the holder is stopped (^Z) or starved of
 CPU for a long while; the bucket then does better to go on alone for a while (and say so)
 than to wait. It is not shorter because a holder preempted on a loaded machine must not
 make the others give up sharing: that would let them overspend together.

 Errors are `QuotaLedgerFailure`s that name the file and SQLite's reason; the connection is
 opened on first use, so a directory that cannot be written fails there, not at start-up.
 */
import Glibc
import HudsonGmail
import SQLite
import Synchronization

public final class SQLiteQuotaLedger: QuotaLedger {
    /// The ledger's own schema version (`PRAGMA user_version`), unrelated to the store's.
    public static let schemaVersion: Int64 = 1
    /// `PRAGMA application_id` of a ledger ("HdQL"), so a file that is not one is left alone.
    public static let applicationID: Int64 = 0x4864_514C

    public let path: String
    /// This instance's name in the waiters table: one per process in practice.
    public let owner: Int64
    private let busyTimeoutMilliseconds: Int32
    private let clock: @Sendable () -> Int64
    private let connection = Mutex<Connection?>(nil)

    /// - Parameters:
    ///   - path: the file; it and its directory (mode 0700) are created on first use.
    ///   - busyTimeout: how long a step waits for another process's step.
    ///   - clock: nanoseconds on a clock every process of the ledger shares (tests pass
    ///     their own; two instances with one clock stand in for two processes).
    public init(path: String, busyTimeout: Duration = .seconds(1),
                clock: @escaping @Sendable () -> Int64 = SQLiteQuotaLedger.bootTime) {
        self.path = path
        self.owner = Int64.random(in: 1...Int64.max)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        self.busyTimeoutMilliseconds = Int32(clamping: max(1, milliseconds))
        self.clock = clock
    }

    /// `CLOCK_BOOTTIME` in nanoseconds.
    public static let bootTime: @Sendable () -> Int64 = {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    private enum Lane: Int64 {
        case interactive = 0, background = 1

        init(_ lane: QuotaLane) { self = lane == .interactive ? .interactive : .background }
        var lane: QuotaLane { self == .interactive ? .interactive : .background }
    }

    // MARK: - QuotaLedger

    public func admit(units: Int, lane: QuotaLane, window: Duration,
                      decide: (QuotaLedgerView) -> Bool) throws(QuotaLedgerFailure) -> QuotaLedgerAdmission {
        let owner = self.owner
        let clock = self.clock
        return try withConnection(.admit) { db in
            try db.write {
                let now = clock()
                let span = Self.nanoseconds(window)
                try Self.tidy(db, now: now, window: span)
                let view = try Self.view(db, now: now, window: span, owner: owner)
                if decide(view) {
                    let lane = Lane(lane)
                    try db.execute("INSERT INTO admissions(at, units, lane, owner) VALUES (?, ?, ?, ?)",
                                   now, Int64(units), lane.rawValue, owner)
                    let record = QuotaLedgerRecord(id: db.lastInsertRowID, stamp: now)
                    try Self.addToTotals(db, units: units, lane: lane)
                    return QuotaLedgerAdmission(admitted: true, view: view, record: record)
                }
                // The oldest `entriesRefused` are enough to say when to ask again: if the
                // request fits only later, the bucket asks again when the last of them leaves.
                let entries = try db.map("SELECT at, units, lane FROM admissions WHERE at > ? ORDER BY at LIMIT ?",
                                         now - span, Self.entriesRefused) { row in
                    QuotaLedgerEntry(expiresIn: .nanoseconds(min(row.int64(0), now) + span - now), units: row.int(1),
                                     lane: Lane(rawValue: row.int64(2))?.lane ?? .background)
                }
                return QuotaLedgerAdmission(admitted: false, view: view, entries: entries)
            }
        }
    }

    public func settle(record: QuotaLedgerRecord, units: Int, lane: QuotaLane) throws(QuotaLedgerFailure) {
        let owner = self.owner
        let clock = self.clock
        try withConnection(.settle) { db in
            try db.write {
                let now = clock()
                let lane = Lane(lane)
                // The row is this owner's, stamped at its admission: a rowid SQLite handed out
                // again after the row left the window names a later row, which does not
                // match. Gone from the window (in flight longer than one), or moved by `tidy`
                // (another timeline), the admission is recorded again: counted twice at worst.
                try db.execute("UPDATE admissions SET at = max(at, ?) WHERE rowid = ? AND owner = ? AND at = ?",
                               now, record.id, owner, record.stamp)
                if db.changes == 0 {
                    try db.execute("INSERT INTO admissions(at, units, lane, owner) VALUES (?, ?, ?, ?)",
                                   now, Int64(units), lane.rawValue, owner)
                    try Self.addToTotals(db, units: units, lane: lane)
                }
            }
        }
    }

    public func setInteractiveWaiting(lease: Duration?) throws(QuotaLedgerFailure) {
        let owner = self.owner
        let clock = self.clock
        try withConnection(.lease) { db in
            try db.write {
                let now = clock()
                try db.execute("DELETE FROM waiters WHERE expires <= ? OR renewed > ?", now, now)
                if let lease {
                    try db.execute("""
                        INSERT INTO waiters(owner, renewed, expires) VALUES (?, ?, ?)
                        ON CONFLICT(owner) DO UPDATE SET renewed = excluded.renewed, expires = excluded.expires
                        """, owner, now, now + Self.nanoseconds(lease))
                } else {
                    try db.execute("DELETE FROM waiters WHERE owner = ?", owner)
                }
            }
        }
    }

    public func penalize(_ update: (QuotaPenalty?) -> QuotaPenalty) throws(QuotaLedgerFailure) {
        let clock = self.clock
        try withConnection(.penalize) { db in
            try db.write {
                let now = clock()
                try db.execute("DELETE FROM penalty WHERE until <= ? OR since > ?", now, now)
                let current = try Self.penalty(db, now: now)
                let next = update(current)
                try db.execute("""
                    INSERT INTO penalty(id, factor, since, until) VALUES (1, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET factor = excluded.factor, since = excluded.since, until = excluded.until
                    """, next.factor, now, now + Self.nanoseconds(max(.zero, next.remaining)))
            }
        }
    }

    public func view(window: Duration) throws(QuotaLedgerFailure) -> QuotaLedgerView {
        let owner = self.owner
        let clock = self.clock
        return try withConnection(.view) { db in
            try db.read { try Self.view(db, now: clock(), window: Self.nanoseconds(window), owner: owner) }
        }
    }

    /// Rows in each table, for tests of the ledger's bound.
    public func rowCounts() throws(QuotaLedgerFailure) -> (admissions: Int, waiters: Int, penalty: Int) {
        try withConnection(.view) { db in
            try db.read {
                (Int(try db.scalarInt("SELECT count(*) FROM admissions") ?? 0),
                 Int(try db.scalarInt("SELECT count(*) FROM waiters") ?? 0),
                 Int(try db.scalarInt("SELECT count(*) FROM penalty") ?? 0))
            }
        }
    }

    // MARK: - Steps

    /// How many admissions a refused step returns at most.
    static let entriesRefused: Int64 = 500

    private static func addToTotals(_ db: Connection, units: Int, lane: Lane) throws {
        try db.execute("UPDATE totals SET interactive = interactive + ?, background = background + ?",
                       lane == .interactive ? Int64(units) : 0, lane == .background ? Int64(units) : 0)
    }

    /// Forgets the admissions that left the window (keeping the totals), and moves those that a
    /// clock from another timeline stamped in the future back to now. (Lapsed leases and ended
    /// penalties go in the steps that write those tables; reads pass over them meanwhile.)
    private static func tidy(_ db: Connection, now: Int64, window: Int64) throws {
        try db.execute("UPDATE admissions SET at = ? WHERE at > ?", now, now)
        let gone = try expired(db, cutoff: now - window)
        if gone.count > 0 {
            try db.execute("DELETE FROM admissions WHERE at <= ?", now - window)
            try db.execute("UPDATE totals SET interactive = interactive - ?, background = background - ?",
                           Int64(gone.interactive), Int64(gone.background))
        }
    }

    /// The admissions at or before `cutoff`: those that left the window and are still kept.
    private static func expired(_ db: Connection, cutoff: Int64) throws -> (count: Int, interactive: Int, background: Int) {
        try db.first("""
            SELECT count(*), coalesce(sum(CASE WHEN lane = 0 THEN units ELSE 0 END), 0),
                   coalesce(sum(CASE WHEN lane = 1 THEN units ELSE 0 END), 0)
            FROM admissions WHERE at <= ?
            """, cutoff) { ($0.int(0), $0.int(1), $0.int(2)) } ?? (0, 0, 0)
    }

    /// The window at `now`: the totals, less what left the window since the last `tidy` (nothing
    /// right after one), so a step costs the same however many admissions the window holds.
    private static func view(_ db: Connection, now: Int64, window: Int64, owner: Int64) throws -> QuotaLedgerView {
        var view = QuotaLedgerView()
        let gone = try expired(db, cutoff: now - window)
        try db.forEach("SELECT interactive, background FROM totals WHERE id = 1") { row in
            view.interactiveUnits = row.int(0) - gone.interactive
            view.backgroundUnits = row.int(1) - gone.background
        }
        view.othersWaitingInteractive = try db.scalarInt(
            "SELECT EXISTS (SELECT 1 FROM waiters WHERE owner <> ? AND expires > ? AND renewed <= ?)", owner, now, now) == 1
        view.penalty = try penalty(db, now: now)
        return view
    }

    private static func penalty(_ db: Connection, now: Int64) throws -> QuotaPenalty? {
        try db.first("SELECT factor, until FROM penalty WHERE id = 1 AND until > ? AND since <= ?", now, now) { row in
            QuotaPenalty(factor: row.double(0), remaining: .nanoseconds(row.int64(1) - now))
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? (seconds < 0 ? Int64.min / 2 : Int64.max / 2)
            : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    // MARK: - The file

    /// Runs `body` on the connection, opening it first if needed; every error becomes a
    /// `QuotaLedgerFailure` for `operation`.
    private func withConnection<T: Sendable>(
        _ operation: QuotaLedgerFailure.Operation, _ body: (Connection) throws -> T
    ) throws(QuotaLedgerFailure) -> T {
        let path = self.path
        let busy = busyTimeoutMilliseconds
        let result: Result<T, QuotaLedgerFailure> = connection.withLock { connection in
            do {
                if connection == nil { connection = try Self.open(path: path, busyTimeoutMilliseconds: busy) }
                return .success(try body(connection!))
            } catch let failure as QuotaLedgerFailure {
                return .failure(failure)
            } catch {
                return .failure(QuotaLedgerFailure(operation, "\(path): \(error)"))
            }
        }
        return try result.get()
    }

    private static func open(path: String, busyTimeoutMilliseconds: Int32) throws -> Connection {
        func failure(_ what: String) -> QuotaLedgerFailure {
            QuotaLedgerFailure(.open, "\(path): \(what): \(String(cString: strerror(errno)))")
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if !directory.isEmpty, mkdir(directory, 0o700) != 0, errno != EEXIST { throw failure("cannot create its directory") }
        // Created here, 0600 and exclusively, so that SQLite never creates it with the umask's
        // mode; closed before SQLite opens it, and no connection of this process has it open
        // yet (O_EXCL), so no lock of SQLite's is dropped (sqlite-notes.md).
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
        } else if errno != EEXIST {
            throw failure("cannot create")
        }
        let db: Connection
        do {
            db = try Connection(path: path, options: ConnectionOptions(
                access: .readWrite, busyTimeoutMilliseconds: busyTimeoutMilliseconds, checkpointPages: 64))
            try db.execute("PRAGMA synchronous = OFF")
            try db.execute("PRAGMA journal_size_limit = 262144")
        } catch {
            throw QuotaLedgerFailure(.open, "\(path): \(error)")
        }
        try migrate(db, path: path)
        return db
    }

    /// Creates the tables in a new file; refuses a file that is another program's, or a
    /// ledger of a newer Hudson.
    private static func migrate(_ db: Connection, path: String) throws {
        /// The file's version, once it is known to be a ledger this Hudson can use.
        func version() throws -> Int64 {
            let application = try db.scalarInt("PRAGMA application_id") ?? 0
            let version = try db.scalarInt("PRAGMA user_version") ?? 0
            let tables = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
            if application != applicationID && (application != 0 || tables > 0) {
                throw QuotaLedgerFailure(.open, "\(path): not a Hudson quota ledger")
            }
            if version > schemaVersion {
                throw QuotaLedgerFailure(.open, "\(path): written by a newer Hudson (ledger version \(version))")
            }
            return version
        }
        // Read first: every process but the first finds the tables there, and takes no write lock.
        if try db.read({ try version() }) == schemaVersion { return }
        try db.write {
            guard try version() < schemaVersion else { return }
            try db.execute("""
                CREATE TABLE admissions (
                    at INTEGER NOT NULL,     -- CLOCK_BOOTTIME, nanoseconds
                    units INTEGER NOT NULL,
                    lane INTEGER NOT NULL,   -- 0 interactive, 1 background
                    owner INTEGER NOT NULL
                );
                CREATE INDEX admissions_by_time ON admissions(at);
                -- Owners with an interactive request waiting, until `expires` unless renewed.
                CREATE TABLE waiters (owner INTEGER PRIMARY KEY, renewed INTEGER NOT NULL, expires INTEGER NOT NULL);
                CREATE TABLE penalty (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    factor REAL NOT NULL, since INTEGER NOT NULL, until INTEGER NOT NULL
                );
                -- The units of every row of admissions, per lane, kept by each step.
                CREATE TABLE totals (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    interactive INTEGER NOT NULL, background INTEGER NOT NULL
                );
                INSERT INTO totals VALUES (1, 0, 0);
                PRAGMA application_id = \(applicationID);
                PRAGMA user_version = \(schemaVersion);
                """)
        }
    }
}
