/*!
 Where an export may be written, decided before anything is created (issue 37 §3): a
 refused run leaves the file system exactly as it was.

 `ExportTarget.inspect` reads, and never writes:

 - the name: not empty, not `-` (an export is a directory or a file that is read back
   next run, not standard output), no control characters;
 - the directories it goes in: each that exists must be a directory (a link above the
   target is followed, as the user named the path through it), and the nearest one that
   exists writable; those missing are created by the run (`mkdir -p`, as `hd-export
   ~/Mail/gmail` in a nightly script wants), and removed again if it then fails before
   its first state is saved;
 - the store's own files: the target is not the store's directory, nor named like the
   store's files beside it (`hudson.sqlite3-wal`, `hudson.sqlite3.sync-….lock`): an mbox
   appended to a store's WAL would corrupt it;
 - the target: absent, or of its format's kind — a directory for a Maildir or `.eml`
   tree, a regular file for an mbox; a symbolic link is followed once, to what it names
   (a dangling one is refused). A device, a FIFO or a socket is refused; so is a
   directory that holds anything but an export (or an empty one);
 - an export's own files, each by kind: `cur`, `new` and `tmp` are directories, the state
   and its lock are regular files, none a link (a link inside would point the export's
   writes, or `--mirror`'s removals, outside it);
 - the state file, as untrusted: a marker (ExportMarker) naming a state beside the store
   that was made for this very directory (ExportStateDatabase), or a whole state in the
   earlier text form (ExportState), bounded, every line of the documented form, every
   path one an export writes (`cur/NAME`, `YYYY/MM/ID.eml`, `-`).
 */
import Glibc

struct ExportTarget {
    /// The target as named, without trailing slashes.
    let path: String
    let format: ExportFormat
    /// The directory the target is in, and the target's name there.
    let parent: String
    let name: String
    /// The directories above the target that do not exist yet, outermost first: the run
    /// creates them.
    let missingParents: [String]
    /// Whether the target exists (the directory, or the mbox file).
    let exists: Bool
    /// The export's state, when the target already holds an export.
    let state: ExportState?

    /// A text state's largest size (it is read whole): a million messages take about 60 MB.
    static let stateLimit: Int64 = 256 << 20

    /// The names an export of this format may hold without a state file: what the run that
    /// creates it writes before its first state (a run killed then left them).
    static func ownNames(_ format: ExportFormat) -> [String: FileKind] {
        var names: [String: FileKind] = [
            Exporter.stateFileName: .regular, Exporter.stateFileName + ".tmp": .regular,
            Exporter.stateFileName + ".lock": .regular, Exporter.stateFileName + ".running": .regular,
            Exporter.stateFileName + ".running.tmp": .regular,
        ]
        switch format {
        case .maildir:
            for name in ["cur", "new", "tmp"] { names[name] = .directory }
            names[Exporter.tagFileName] = .regular
        case .eml:
            names[".hudson-tmp"] = .directory
        case .mbox:
            break
        }
        return names
    }

    /// The files an mbox export keeps beside its mbox file (`NAME.hudson-export`...).
    static func mboxCompanions(_ name: String) -> [String] {
        let state = name + Exporter.stateFileName
        return [state, state + ".tmp", state + ".lock", state + ".running", state + ".running.tmp"]
    }

    /// Inspects `path` for an export of `email`'s mail in `format`; `storePath` is the
    /// store's file. Throws `ExportError` when the target must not be used.
    static func inspect(_ given: String, format: ExportFormat, email: String, storePath: String?, states: String) throws -> ExportTarget {
        guard !given.isEmpty else { throw ExportError.badTarget(path: given, reason: "an empty name") }
        guard given != "-" else {
            throw ExportError.badTarget(path: given, reason: "an export is read back by the next run, so it cannot go to standard output; name a file or directory")
        }
        guard !given.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw ExportError.badTarget(path: given, reason: "a name with control characters")
        }
        var path = given
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        // A target that is a symbolic link is followed once, as the user named it
        // (`~/Mail/gmail -> /data/mail/gmail`, as mutt and notmuch follow one): what it points
        // to is inspected as the target. Links inside an export are never followed.
        var linkInfo = stat()
        if lstat(path, &linkInfo) == 0 && (linkInfo.st_mode & S_IFMT) == S_IFLNK {
            guard let resolved = realPath(path) else {
                throw ExportError.unusableTarget(path: given, reason: "a symbolic link (to \(linkDestination(path))) to nothing")
            }
            path = resolved
        }
        let (parent, name) = split(path)

        // The directories the target goes in: those that exist must be directories; the
        // missing ones are created by the run, under the nearest one that exists.
        var missingParents: [String] = []
        var existing = parent
        // A name under a file is as missing as one under nothing (ENOTDIR): go up to say which.
        func missing(_ path: String) throws -> Bool {
            var info = stat()
            if lstat(path, &info) == 0 { return false }
            if errno == ENOENT || errno == ENOTDIR { return true }
            throw ExportError.unusableTarget(path: given, reason: "\(path): \(String(cString: strerror(errno)))")
        }
        while try missing(existing) {
            missingParents.insert(existing, at: 0)
            let up = split(existing).parent
            guard up != existing else { break }
            existing = up
        }
        switch try kind(existing, for: given) {
        case .directory?, .symbolicLink?:
            // A link above the target is followed, as the user named the path through it.
            var info = stat()
            guard stat(existing, &info) == 0 else { throw ExportError.unusableTarget(path: given, reason: "\(existing): \(String(cString: strerror(errno)))") }
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw ExportError.unusableTarget(path: given, reason: "\(existing): not a directory") }
        case nil: throw ExportError.unusableTarget(path: given, reason: "\(existing): no such directory")
        case let other?: throw ExportError.unusableTarget(path: given, reason: "\(existing): \(other.phrase), not a directory")
        }
        if !missingParents.isEmpty {
            guard access(existing, W_OK | X_OK) == 0 else {
                throw ExportError.unusableTarget(path: given, reason: "\(existing): \(String(cString: strerror(errno)))")
            }
        }
        try refuseStoreFiles(path: path, parent: parent, name: name, format: format, storePath: storePath, states: states,
                             given: given)

        let kind = try Self.kind(path, for: given)
        switch kind {
        case nil:
            break
        case .symbolicLink?:
            // Replaced since it was resolved above.
            throw ExportError.unusableTarget(path: given, reason: "a symbolic link (to \(linkDestination(path))), changed while it was being checked")
        case .device?, .fifo?, .socket?, .other?:
            throw ExportError.unusableTarget(path: given, reason: "\(kind!.phrase), not \(format == .mbox ? "a regular file" : "a directory")")
        case .regular? where format != .mbox:
            throw ExportError.notThisExport(path: given, detail: "a file, not a directory (a \(format.rawValue) export is a directory)")
        case .directory? where format == .mbox:
            throw ExportError.notThisExport(path: given, detail: "a directory, not a file (an mbox export is a file)")
        case .regular?, .directory?:
            break
        }
        // Writable: where the target (or for an mbox, its state) is created or renamed.
        let writable = kind == nil || format == .mbox ? parent : path
        guard !missingParents.isEmpty || access(writable, W_OK | X_OK) == 0 else {
            throw ExportError.unusableTarget(path: given, reason: "\(writable): \(String(cString: strerror(errno)))")
        }

        let state: ExportState?
        if format == .mbox && missingParents.isEmpty {
            state = try inspectMbox(path: path, parent: parent, name: name, exists: kind != nil, email: email, states: states, given: given)
        } else if kind != nil {
            state = try inspectDirectory(path: path, format: format, email: email, states: states, given: given)
        } else {
            state = nil
        }
        return ExportTarget(path: path, format: format, parent: parent, name: name, missingParents: missingParents,
                            exists: kind != nil, state: state)
    }

    /// `dir/name` → ("dir", "name"); "name" → (".", "name"); "/name" → ("/", "name").
    static func split(_ path: String) -> (parent: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let parent = String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        if path == "/" { return ("/", "/") }
        return (parent.isEmpty ? "/" : parent, name)
    }

    static func kind(_ path: String, for given: String) throws -> FileKind? {
        do {
            return try FileKind.of(path)
        } catch let error as ExportFileError {
            throw ExportError.unusableTarget(path: given, reason: path == given ? error.reason : error.description)
        }
    }

    /// The target must not be the store's directory, nor share a name with the store's
    /// files beside it (its WAL, journal and locks are named after it).
    static func refuseStoreFiles(path: String, parent: String, name: String, format: ExportFormat, storePath: String?,
                                 states: String, given: String) throws {
        guard let storePath, !storePath.isEmpty else { return }
        let (storeParent, storeName) = split(storePath)
        guard let storeDirectory = realPath(storeParent) else { return }
        if realPath(path) == storeDirectory {
            throw ExportError.unusableTarget(path: given, reason: "the store's directory")
        }
        // Nor inside the store's export states (ExportStateDatabase), whether that directory
        // exists yet or not: the target's path made absolute through the nearest directory
        // above it that exists, compared with the states' path (resolved, `states`).
        var above = path
        var below: [String] = []
        while realPath(above) == nil {
            let (up, name) = split(above)
            guard up != above else { break }
            below.insert(name, at: 0)
            above = up
        }
        let absolute = (realPath(above) ?? above) + below.map { "/" + $0 }.joined()
        if absolute == states || absolute.hasPrefix(states + "/") {
            throw ExportError.unusableTarget(path: given, reason: "inside the store's export states (\(states))")
        }
        guard realPath(parent) == storeDirectory else { return }
        let names = format == .mbox ? [name] + mboxCompanions(name) : [name]
        if names.contains(where: { $0.hasPrefix(storeName) }) {
            throw ExportError.unusableTarget(path: given, reason: "named like the store's own files (\(storeName)...) beside it")
        }
    }

    /// What the symbolic link `path` names, as written, for messages.
    static func linkDestination(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4097)
        let length = readlink(path, &buffer, 4096)
        return length > 0 ? String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// An existing directory: an export of this account in this format, or empty but for
    /// what a killed first run left.
    static func inspectDirectory(path: String, format: ExportFormat, email: String, states: String, given: String) throws -> ExportState? {
        let directory: ExportDirectory
        let names: [String]
        do {
            directory = try ExportDirectory.open(path)
            names = try directory.names()
        } catch let error as ExportFileError {
            throw ExportError.unusableTarget(path: given, reason: error.reason)
        }
        let own = ownNames(format)
        for name in names {
            guard let wanted = own[name] else { continue }
            let kind = (try? directory.kind(name)) ?? nil
            if kind != wanted {
                throw ExportError.unusableTarget(path: given, reason: "\(name) is \(kind?.phrase ?? "unreadable"), where an export has \(wanted.phrase)")
            }
        }
        if format == .eml {
            // YYYY/MM directories: a link among them would take the next run's files elsewhere.
            for year in names where year.utf8.count == 4 && year.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                guard let kind = (try? directory.kind(year)) ?? nil, kind == .directory,
                      let months = try? directory.subdirectory(year, create: false)?.names() else {
                    throw ExportError.unusableTarget(path: given, reason: "\(year) is not a directory, where an export has one")
                }
                for month in months where month.utf8.count == 2 {
                    let sub = try? directory.subdirectory(year, create: false)?.kind(month)
                    if sub != .directory {
                        throw ExportError.unusableTarget(path: given, reason: "\(year)/\(month) is not a directory, where an export has one")
                    }
                }
            }
        }
        guard names.contains(Exporter.stateFileName) else {
            let foreign = names.filter { own[$0] == nil }
            var strangers = false
            for sub in ["cur", "new"] where format == .maildir && names.contains(sub) {
                let entries = ((try? directory.subdirectory(sub, create: false)) ?? nil).flatMap { try? $0.names() } ?? []
                if entries.contains(where: { MaildirNames.uniquePart(of: $0) == nil }) { strangers = true }
            }
            if !foreign.isEmpty || strangers {
                throw ExportError.notThisExport(path: given, detail: "not empty and not an export (no \(Exporter.stateFileName))")
            }
            return nil
        }
        return try readState(directory, Exporter.stateFileName, format: format, email: email, states: states, given: given)
    }

    /// An mbox: its state beside it (`NAME.hudson-export`) says how long it was.
    static func inspectMbox(path: String, parent: String, name: String, exists: Bool, email: String, states: String,
                            given: String) throws -> ExportState? {
        let directory: ExportDirectory
        do {
            directory = try ExportDirectory.open(parent, followingLink: true)
        } catch let error as ExportFileError {
            throw ExportError.unusableTarget(path: given, reason: error.description)
        }
        for companion in mboxCompanions(name) {
            if let kind = try? directory.kind(companion), kind != .regular {
                throw ExportError.unusableTarget(path: given, reason: "\(directory.child(companion)) is \(kind.phrase), where an export has a file")
            }
        }
        let statePath = directory.child(mboxCompanions(name)[0])
        guard directory.exists(mboxCompanions(name)[0]) else {
            if exists, (directory.size(name) ?? 0) > 0 {
                throw ExportError.notThisExport(path: given, detail: "a file that no hd-export wrote (no \(statePath))")
            }
            return nil
        }
        let state = try readState(directory, mboxCompanions(name)[0], format: .mbox, email: email, states: states, given: given)
        let size = directory.size(name) ?? 0
        if size < state.mboxSize {
            throw ExportError.notThisExport(path: given, detail: exists ? "shorter than its export recorded: changed by another program"
                                                                        : "gone, though \(statePath) records an export of it")
        }
        return state
    }

    /// Reads and checks an export's state: the marker `name` in `directory` and the state
    /// database it names in `states` (ExportMarker, ExportStateDatabase), or a whole state
    /// in the earlier text form (bounded); of this format and account either way.
    static func readState(_ directory: ExportDirectory, _ name: String, format: ExportFormat, email: String,
                          states: String, given: String) throws -> ExportState {
        let unreadable = { (reason: String) in
            ExportError.notThisExport(path: given, detail: "\(directory.child(name)) cannot be read as an export's state\(reason)")
        }
        // Taken before the read: a file replaced after it has another stamp, and is read again.
        let stamp = directory.stamp(name)
        var parsed: ExportState?
        var statePath = directory.child(name)
        do {
            let magic = Array((ExportMarker.magic + "\n").utf8)
            if try directory.readPrefix(name, count: magic.count) == magic {
                guard let marker = ExportMarker(parsing: try directory.read(name, limit: ExportMarker.limit)) else { throw unreadable("") }
                guard marker.format == format else {
                    throw ExportError.notThisExport(path: given, detail: "holds a \(marker.format.rawValue) export, not \(format.rawValue)")
                }
                guard marker.email.lowercased() == email.lowercased() else {
                    throw ExportError.notThisExport(path: given, detail: "holds the export of \(marker.email)")
                }
                statePath = states + "/" + marker.stateID
                let statesDirectory: ExportDirectory?
                do {
                    statesDirectory = try ExportStateLocation.openStates(states, create: false)
                } catch let error as ExportFileError {
                    throw ExportError.unusableTarget(path: given, reason: error.description)
                }
                guard let statesDirectory, statesDirectory.exists(marker.stateID) else {
                    throw ExportError.notThisExport(path: given, detail: "its state (\(statePath)) is not with this store: "
                        + "export with the store that made it, or into a new directory")
                }
                guard let database = try ExportStateDatabase.open(statesDirectory.resolvedChild(marker.stateID)),
                      let (state, made) = try ExportState.read(database: database),
                      state.format == marker.format, state.email == marker.email else {
                    throw ExportError.notThisExport(path: given, detail: "\(statePath) cannot be read as an export's state")
                }
                // A marker in another directory than the one the state was made for (a copy, or
                // a marker taken from another export), or of an older save (an export restored
                // from an older copy): the state would describe files that are not there.
                guard made == ExportStateLocation.identity(of: directory, format: format) else {
                    throw ExportError.notThisExport(path: given, detail: "a copy of an export made elsewhere: export into a new directory")
                }
                guard marker.generation == database.generation || marker.generation == database.generation + 1 else {
                    throw ExportError.notThisExport(path: given, detail: marker.generation < database.generation
                        ? "restored from an older copy of the export: export into a new directory"
                        : "its state (\(statePath)) is older than the export: export into a new directory")
                }
                parsed = state
            } else {
                parsed = ExportState(parsing: try directory.read(name, limit: stateLimit))
            }
        } catch let error as ExportFileError {
            throw ExportError.notThisExport(path: given, detail: "\(error.path) cannot be read as an export's state: \(error.reason)")
        } catch let failure as ExportStateFailure {
            throw failure.exportError(path: given)
        }
        guard var state = parsed else { throw unreadable("") }
        guard state.format == format else {
            throw ExportError.notThisExport(path: given, detail: "holds a \(state.format.rawValue) export, not \(format.rawValue)")
        }
        guard state.email.lowercased() == email.lowercased() else {
            throw ExportError.notThisExport(path: given, detail: "holds the export of \(state.email)")
        }
        state.stamp = stamp
        return state
    }
}
