/*!
 Where an export's state is kept (issue 43 §3): an SQLite file of its own, so that a run
 holds in memory what one batch changes, not a line per exported message (a million
 messages made the text state 60 MB, read whole and written whole after every batch,
 about 600 MiB of memory). The file keeps the state's small part in its text form
 (ExportState's lines but `M` and `K`, one row), the export's directory it belongs to, and
 the entries (`M`/`K`: Gmail id, status, path) in a table keyed by Gmail id; each batch's
 save is one transaction, on disk when it returns (`synchronous = EXTRA`, a rollback
 journal that lives only while a save runs).

 The file lives beside the store, in `STORE.exports/` (0700, the user's own, checked),
 named by a random id: the export's directory holds only a small marker naming that id
 and the state's generation (ExportMarker). A database in a directory others may write
 cannot be made safe to open (SQLite replays, and then deletes files named in, a journal
 it finds beside it). The export's directory is still checked against the state: the
 state records the directory it was made for (its inode: the same after a rename, and on
 the same disk mounted again; not in a copy) and its generation, so a copy of a Maildir
 or `.eml` export, or an export restored from an older copy, is refused: the state would
 describe files that are not there (a two-way read-back would take them for removals). An
 mbox, append-only and checked by its length, may be moved. Rows are checked as they are
 read all the same (`M`/`K`, an id that can name a file, a path the format writes):
 `--mirror` removes what the state names.
 */
import Glibc
import SQLite

/// A failure on the state's database (not the store's): what it means for the export is
/// decided in one place (`exportError`).
struct ExportStateFailure: Error {
    /// The state's file.
    let file: String
    /// SQLite's failure, or nil for a row that is not an entry's form.
    let error: SQLiteError?
    let reason: String

    init(_ file: String, _ error: SQLiteError) {
        self.file = file
        self.error = error
        reason = error.message
    }

    init(_ file: String, reason: String) {
        self.file = file
        error = nil
        self.reason = reason
    }

    static func guarded<T>(_ file: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw ExportStateFailure(file, error)
        }
    }

    /// A file that is not a state is the user's to fix (64), a busy one another
    /// program's (75), one that cannot be read or written the system's (78).
    func exportError(path: String) -> ExportError {
        switch error?.code {
        case nil, SQLiteError.corrupt, SQLiteError.notADatabase, SQLiteError.constraint, SQLiteError.error:
            return .notThisExport(path: path, detail: "\(file) cannot be read as an export's state: \(reason)")
        case SQLiteError.busy, SQLiteError.locked:
            return .temporarilyUnavailable(path: path, reason: "\(file): busy (\(reason))")
        default:
            return .unusableTarget(path: path, reason: "\(file): \(reason)")
        }
    }
}

final class ExportStateDatabase {
    let connection: Connection
    /// The file, for messages.
    let path: String
    /// The file's name in the states' directory: the id markers name.
    let stateID: String
    /// The state's saves so far (ExportMarker's generation).
    var generation: Int64 = 0
    /// What a row must be to be read as an entry (set once the text part is read).
    var format: ExportFormat = .maildir
    var allowsClientPaths = false

    /// `PRAGMA application_id`: "HdEx".
    static let applicationID: Int64 = 0x4864_4578
    static let schema: [(name: String, sql: String)] = [
        ("state", "CREATE TABLE state (text BLOB NOT NULL, directory TEXT NOT NULL, generation INTEGER NOT NULL)"),
        ("entries", "CREATE TABLE entries (gmail_id TEXT PRIMARY KEY, status TEXT NOT NULL, path TEXT NOT NULL) WITHOUT ROWID"),
    ]

    /// The directory of a store's export states: `STORE.exports`.
    static func directory(forStore storePath: String) -> String { storePath + ".exports" }

    private init(_ connection: Connection, path: String) {
        self.connection = connection
        self.path = path
        stateID = ExportTarget.split(path).name
    }

    private static func options(_ access: ConnectionOptions.Access) -> ConnectionOptions {
        ConnectionOptions(access: access, busyTimeoutMilliseconds: 30_000, synchronous: .full, cacheKiB: 2_048,
                          deferWriteSetup: true, refusesSymbolicLink: true)
    }

    /// Opens an existing state file; nil when it is not one of ours (another schema, another
    /// application, not a database at all).
    static func open(_ path: String) throws -> ExportStateDatabase? {
        try ExportStateFailure.guarded(path) { try openUnguarded(path) }
    }

    private static func openUnguarded(_ path: String) throws -> ExportStateDatabase? {
        let connection: Connection
        do {
            connection = try Connection(path: path, options: options(.readWrite))
            // No function of ours runs from the file's schema, whatever it says.
            try connection.execute("PRAGMA trusted_schema = OFF")
            guard try connection.scalarInt("PRAGMA application_id") == applicationID else { return nil }
            let objects = try connection.map("SELECT type, name, sql FROM sqlite_schema ORDER BY name") {
                [$0.string(0), $0.string(1), $0.string(2)]
            }
            let wanted = schema.sorted { $0.name < $1.name }.map { ["table", $0.name, $0.sql] }
            guard objects == wanted else { return nil }
        } catch SQLiteError.notADatabase {
            return nil
        } catch SQLiteError.corrupt {
            return nil
        }
        try Self.setUp(connection)
        return ExportStateDatabase(connection, path: path)
    }

    /// A rollback journal, and EXTRA: the directory is synced when a save's journal is
    /// removed too, so a save that returned is not rolled back after a power loss.
    private static func setUp(_ connection: Connection) throws {
        try connection.execute("PRAGMA journal_mode = DELETE")
        try connection.execute("PRAGMA synchronous = EXTRA")
    }

    /// Creates a state file at `path` (none may be there) holding `text`, the directory it
    /// belongs to, and every entry.
    static func create(_ path: String, text: [UInt8], directory: String, entries: (ExportEntries.Visitor) throws -> Void) throws {
        try ExportStateFailure.guarded(path) { try createUnguarded(path, text: text, directory: directory, entries: entries) }
    }

    private static func createUnguarded(_ path: String, text: [UInt8], directory: String,
                                        entries: (ExportEntries.Visitor) throws -> Void) throws {
        let connection = try Connection(path: path, options: options(.readWriteCreate))
        try setUp(connection)
        try connection.write {
            try connection.execute("PRAGMA application_id = \(applicationID)")
            for table in schema { try connection.execute(table.sql) }
            try connection.execute("INSERT INTO state (text, directory, generation) VALUES (?, ?, 0)", SQLiteValue.blob(text), directory)
            let insert = try connection.prepare("INSERT INTO entries (gmail_id, status, path) VALUES (?, ?, ?)")
            try entries { id, entry in
                try insert.execute([id, entry.status.rawValue, entry.path])
            }
        }
    }

    /// The state's text part and the directory it was made for (its generation kept).
    func text() throws -> (text: [UInt8], directory: String)? {
        let rows = try ExportStateFailure.guarded(path) {
            try connection.map("SELECT text, directory, generation FROM state") { ($0.blob(0), $0.string(1), $0.int64(2)) }
        }
        guard rows.count == 1, rows[0].2 >= 0 else { return nil }
        generation = rows[0].2
        return (rows[0].0, rows[0].1)
    }

    /// A row as an entry, checked as a text state's lines are.
    private func entry(id: String, status: String, file: String) throws -> ExportState.Entry {
        guard status == "M" || status == "K", MaildirNames.isUsableID(id),
              ExportState.isPath(file, of: id, in: format) || allowsClientPaths && MaildirIdentity.isClientPath(file) else {
            throw ExportStateFailure(path, reason: "an entry that is not an export's (\(id.debugDescription))")
        }
        return ExportState.Entry(status: status == "K" ? .kept : .live, path: file)
    }

    func entry(_ id: String) throws -> ExportState.Entry? {
        let row = try ExportStateFailure.guarded(path) {
            try connection.cached("SELECT status, path FROM entries WHERE gmail_id = ?").first([id]) { ($0.string(0), $0.string(1)) }
        }
        return try row.map { try entry(id: id, status: $0.0, file: $0.1) }
    }

    /// The number of entries, or `bound` when there are at least that many: a bounded
    /// count reads at most `bound` rows, where a whole one reads every page of the table.
    func count(upTo bound: Int? = nil) throws -> Int {
        Int(try ExportStateFailure.guarded(path) { () -> Int64? in
            if let bound {
                return try connection.scalarInt("SELECT count(*) FROM (SELECT 1 FROM entries LIMIT ?)", Int64(bound))
            }
            return try connection.scalarInt("SELECT count(*) FROM entries")
        } ?? 0)
    }

    /// Every entry.
    func forEach(_ body: (String, ExportState.Entry) throws -> Void) throws {
        try ExportStateFailure.guarded(path) {
            try connection.forEach("SELECT gmail_id, status, path FROM entries") { row in
                let id = row.string(0)
                try body(id, try entry(id: id, status: row.string(1), file: row.string(2)))
            }
        }
    }

    /// The entries with `status`, by Gmail id.
    func ids(status: ExportState.Status) throws -> [String] {
        try ExportStateFailure.guarded(path) {
            try connection.map("SELECT gmail_id FROM entries WHERE status = ?", status.rawValue) { $0.string(0) }
        }
    }

    /// One save: the text part, the generation and the entries changed since the last
    /// (nil: removed), in one transaction, on disk when this returns.
    func save(text: [UInt8], generation: Int64, changes: [String: ExportState.Entry?]) throws {
        try ExportStateFailure.guarded(path) { try connection.write {
            try connection.execute("UPDATE state SET text = ?, generation = ?", SQLiteValue.blob(text), generation)
            let upsert = try connection.cached("INSERT OR REPLACE INTO entries (gmail_id, status, path) VALUES (?, ?, ?)")
            let delete = try connection.cached("DELETE FROM entries WHERE gmail_id = ?")
            for (id, entry) in changes {
                if let entry { try upsert.execute([id, entry.status.rawValue, entry.path]) } else { try delete.execute([id]) }
            }
        } }
    }
}

/// An export's entries (what it wrote where, by Gmail id): in the state's database, with
/// the changes this run has not saved yet over them; or, for a state not yet saved as a
/// database (a new export, a text state, a test's), all in memory. A value: a copy held in
/// memory is copied on change; one over a database shares it (a run has one state).
struct ExportEntries: Equatable {
    typealias Visitor = (String, ExportState.Entry) throws -> Void

    private final class Storage {
        var database: ExportStateDatabase?
        /// With a database: the entries changed since the last save (nil: removed). Without:
        /// every entry (never nil).
        var changes: [String: ExportState.Entry?] = [:]
        /// The saved rows' number, counted when first asked for (a run that writes nothing
        /// never reads every row; see `count(upTo:)`).
        var databaseCount: Int?
        var countChange = 0
        /// A read of the database that failed: the next save throws it, so a lookup never
        /// passes a failure off as an entry that is not there.
        var failure: Error?

        func copy() -> Storage {
            let copy = Storage()
            copy.database = database
            copy.changes = changes
            copy.databaseCount = databaseCount
            copy.countChange = countChange
            copy.failure = failure
            return copy
        }
    }

    private var storage = Storage()

    init() {}

    init(database: ExportStateDatabase) throws {
        storage.database = database
    }

    var isInDatabase: Bool { storage.database != nil }

    /// How many entries there are, this run's changes included. A failed count of the saved
    /// rows counts none of them and is thrown by the next save, as a failed lookup is.
    var count: Int {
        guard let database = storage.database else { return storage.changes.count }
        if storage.databaseCount == nil {
            do {
                storage.databaseCount = try database.count()
            } catch {
                storage.failure = storage.failure ?? error
                return max(0, storage.countChange)
            }
        }
        return (storage.databaseCount ?? 0) + storage.countChange
    }

    /// `min(count, bound)`, reading at most about `bound` saved rows: what sizes a batch
    /// needs only up to a bound, and an idle run of a large export should not read the
    /// whole table for it (most of an idle run's 124 ms at 2,000,000 entries).
    func count(upTo bound: Int) throws -> Int {
        guard let database = storage.database, storage.databaseCount == nil else { return min(count, bound) }
        // This run's changes add `countChange` to the saved rows: at least `bound - countChange`
        // saved rows make the whole at least `bound`.
        let needed = bound - storage.countChange
        guard needed > 0 else { return bound }
        let saved = try database.count(upTo: needed)
        // Fewer than asked for: that is every saved row, the whole count, kept for next time.
        if saved < needed { storage.databaseCount = saved }
        return min(bound, saved + storage.countChange)
    }

    subscript(id: String) -> ExportState.Entry? {
        get {
            if let change = storage.changes[id] { return change }
            guard let database = storage.database else { return nil }
            do {
                return try database.entry(id)
            } catch {
                storage.failure = storage.failure ?? error
                return nil
            }
        }
        set {
            guard storage.database != nil else {
                if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
                if let newValue { storage.changes[id] = .some(newValue) } else { storage.changes.removeValue(forKey: id) }
                return
            }
            let before = self[id] != nil
            storage.changes[id] = .some(newValue)
            storage.countChange += (newValue != nil ? 1 : 0) - (before ? 1 : 0)
        }
    }

    /// Sets `id`'s entry when the caller has just read what it was (`previous`): the same
    /// as the subscript's set, without reading it again.
    mutating func set(_ id: String, to entry: ExportState.Entry?, was previous: ExportState.Entry?) {
        guard storage.database != nil else { self[id] = entry; return }
        storage.changes[id] = .some(entry)
        storage.countChange += (entry != nil ? 1 : 0) - (previous != nil ? 1 : 0)
    }

    /// Every entry, as it stands with this run's changes.
    func forEach(_ body: Visitor) throws {
        let changes = storage.changes
        if let database = storage.database {
            try database.forEach { id, entry in
                guard changes[id] == nil else { return }
                try body(id, entry)
            }
        }
        for (id, entry) in changes { if let entry { try body(id, entry) } }
    }

    /// The Gmail ids of the entries with `status`.
    func ids(status: ExportState.Status) throws -> [String] {
        var ids: [String] = []
        let changes = storage.changes
        if let database = storage.database {
            ids = try database.ids(status: status).filter { changes[$0] == nil }
        }
        for (id, entry) in changes where entry?.status == status { ids.append(id) }
        return ids
    }

    /// Saves the text part and this run's changes; a state kept in memory becomes a new
    /// database in the store's states (ExportStateLocation), and the export's marker names it.
    mutating func save(text: [UInt8], at location: ExportStateLocation, allowsClientPaths: Bool) throws {
        if let failure = storage.failure { throw failure }
        if let database = storage.database {
            database.allowsClientPaths = allowsClientPaths
            // The marker first, with the generation this save records (ExportMarker).
            let next = database.generation + 1
            try location.writeMarker(stateID: database.stateID, generation: next)
            try database.save(text: text, generation: next, changes: storage.changes)
            database.generation = next
            storage.databaseCount = storage.databaseCount.map { $0 + storage.countChange }
            storage.countChange = 0
            storage.changes = [:]
            return
        }
        let all = storage.changes
        let opened = try location.create(text: text) { visit in
            for (id, entry) in all { if let entry { try visit(id, entry) } }
        }
        opened.allowsClientPaths = allowsClientPaths
        storage = Storage()
        storage.database = opened
        storage.databaseCount = all.count
    }

    /// Equal contents for entries held in memory (the rules' tests); the same storage otherwise.
    static func == (lhs: ExportEntries, rhs: ExportEntries) -> Bool {
        if lhs.storage.database != nil || rhs.storage.database != nil { return lhs.storage === rhs.storage }
        return lhs.storage.changes == rhs.storage.changes
    }
}

/// Where a run keeps its export's state: the marker in the export's directory, and the
/// store's directory of states (`STORE.exports`) holding the database it names.
struct ExportStateLocation {
    /// The directory holding the marker (the export's; an mbox's parent).
    let root: ExportDirectory
    let markerName: String
    /// `STORE.exports`.
    let statesPath: String
    let format: ExportFormat
    let email: String

    /// What the state records of the directory it was made for: the directory's inode (the
    /// same after a rename, and on the same disk mounted again; another in a copy). An mbox
    /// is append-only and checked by its length: it may be moved with its marker.
    var identity: String { Self.identity(of: root, format: format) }

    static func identity(of root: ExportDirectory, format: ExportFormat) -> String {
        format == .mbox ? "mbox" : "inode \(root.inode)"
    }

    /// The states' directory, created (0700) when missing; never a link, and the user's
    /// own, written by nobody else (a database beside which others may plant a journal is
    /// not safe to open).
    static func openStates(_ path: String, create: Bool) throws -> ExportDirectory? {
        switch try FileKind.of(path) {
        case nil:
            guard create else { return nil }
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw ExportFileError(path) }
        case .directory?:
            break
        case .symbolicLink?:
            throw ExportFileError(path, "a symbolic link, which the states' directory may not be")
        case let other?:
            throw ExportFileError(path, "\(other.phrase), not a directory")
        }
        let directory = try ExportDirectory.open(path)
        guard directory.isPrivate else {
            throw ExportFileError(path, "not a directory of the user's own that only they may write (chmod 700)")
        }
        return directory
    }

    /// Writes the marker naming `stateID` at `generation`, durably (the file, then its
    /// directory, synced) before the save it goes with.
    func writeMarker(stateID: String, generation: Int64) throws {
        let marker = ExportMarker(format: format, email: email, stateID: stateID, generation: generation)
        try root.writeAtomically(marker.bytes, to: markerName, temporary: markerName + ".tmp", in: root, durable: true)
    }

    /// Makes a new state database holding `text` and `entries`, then replaces the marker
    /// with one naming it. The new marker is written first under its temporary name: a run
    /// killed before the rename leaves it naming the database, which the next creation
    /// removes (no marker names it).
    func create(text: [UInt8], entries: (ExportEntries.Visitor) throws -> Void) throws -> ExportStateDatabase {
        guard let states = try Self.openStates(statesPath, create: true) else { throw ExportFileError(statesPath, errno: ENOENT) }
        let pending = markerName + ".tmp"
        if let left = (try? root.read(pending, limit: ExportMarker.limit)).flatMap(ExportMarker.init(parsing:)),
           (try? root.read(markerName, limit: ExportMarker.limit)).flatMap(ExportMarker.init(parsing:))?.stateID != left.stateID {
            try states.remove(left.stateID)
            try states.remove(left.stateID + "-journal")
        }
        let id = ExportMarker.newStateID()
        let marker = ExportMarker(format: format, email: email, stateID: id, generation: 0)
        let descriptor = try root.openRegular(pending, flags: O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(descriptor) }
        try ExportFiles.writeAll(descriptor, marker.bytes, path: root.child(pending))
        guard fsync(descriptor) == 0 else { throw ExportFileError(root.child(pending)) }
        let path = states.resolvedChild(id)
        do {
            // Made here first, 0600, never over another file (SQLite would make it 0644).
            close(try states.openRegular(id, flags: O_WRONLY | O_CREAT | O_EXCL))
            try ExportStateDatabase.create(path, text: text, directory: identity, entries: entries)
            try root.rename(pending, to: markerName)
            root.sync()
        } catch {
            try? root.remove(pending)
            try? states.remove(id)
            try? states.remove(id + "-journal")
            throw error
        }
        guard let opened = try ExportStateDatabase.open(path) else { throw ExportFileError(path, "not the state just written") }
        opened.format = format
        return opened
    }
}
