/*!
 `hd-export`'s engine (issue 24 §2): one account's mail written as a Maildir, an mboxrd
 file or a tree of `.eml` files, incrementally. Each run reads the change sequence after
 the point the state (ExportState) recorded, in batches, and per change:

 - a message not exported yet is written (its source from the store, or fetched);
 - in a Maildir, an exported message is written again under its new flags and
   `X-Keywords` (from the file already there: no fetch), and the old name removed; an
   `.eml` or mbox copy is the source, which never changes, so it stays;
 - a message deleted at Gmail is kept (a backup; marked so in the state), or removed with
   `mirror` (an mbox is append-only: it keeps them).

 After each batch the written files are flushed and the state saved, so a killed run
 resumes at the last saved batch: names are fixed by the message, so what it wrote again
 replaces what it wrote before (and a Maildir file left under an older name, found by
 reading the Maildir when the run before was killed, is removed by the next write of
 its message). A source that cannot be fetched is recorded and tried
 again next run; the rest go on.
 */
import Glibc
import HudsonMail
import HudsonStore

public enum ExportFormat: String, Sendable, CaseIterable {
    case maildir, mbox, eml
}

/// Why an export could not start. Paths and details quote what the user named and what
/// the file system holds: `description(quoting:)` lets the caller escape them.
public enum ExportError: Error, CustomStringConvertible {
    /// A name that cannot be a target at all (empty, `-`, control characters): a usage error.
    case badTarget(path: String, reason: String)
    /// The target holds something other than an export of this account in this format.
    case notThisExport(path: String, detail: String)
    /// The target cannot or must not be written: a device, FIFO, socket or symbolic link,
    /// a missing or read-only directory, the store's own files.
    case unusableTarget(path: String, reason: String)
    /// Another hd-export is writing the same export.
    case busy(path: String)
    /// A program the export needs cannot do it now and may later (notmuch's database is
    /// locked by another writer): a temporary failure.
    case temporarilyUnavailable(path: String, reason: String)

    public var description: String { description(quoting: { $0 }) }

    public func description(quoting quote: (String) -> String) -> String {
        switch self {
        case .badTarget(let path, let reason): return "\(path.isEmpty ? "TARGET" : quote(path)): \(quote(reason))"
        case .notThisExport(let path, let detail): return "\(quote(path)): \(quote(detail))"
        case .unusableTarget(let path, let reason): return "\(quote(path)): \(quote(reason))"
        case .busy(let path): return "\(quote(path)): another hd-export is writing this export"
        case .temporarilyUnavailable(let path, let reason): return "\(quote(path)): \(quote(reason))"
        }
    }
}

/// An export's state as a run left it (`Exporter.stateLeft`), opaque.
public final class ExportStateLeft {
    let state: ExportState
    init(_ state: ExportState) { self.state = state }
}

public struct ExportReport: Equatable, Sendable {
    /// Messages written for the first time.
    public var written = 0
    /// Maildir messages written again under new flags or keywords.
    public var relabelled = 0
    /// Messages deleted at Gmail and removed (--mirror).
    public var removed = 0
    /// Messages deleted at Gmail and kept this run.
    public var kept = 0
    /// Sources fetched from Gmail (not stored).
    public var fetched = 0
    /// Messages whose source could not be had, with why; tried again next run.
    public var failed: [String: String] = [:]
    /// Lines of the notmuch tag file, and messages without a Message-ID it cannot name.
    public var tagLines = 0
    public var withoutMessageID = 0
    /// Whether the export is two-way after this run (issue 39).
    public var twoWay: TwoWayMode = .off
    /// What was read back and queued (or, with `dryRun`, would be): nil when nothing was.
    public var readBack: TriageResult?
    /// Whether a read-back a killed run had queued was found committed and its baseline taken.
    public var resumedReadBack = false

    public init() {}
}

@MainActor
public final class Exporter {
    /// Throws what stops every fetch (no credentials, network down): the run ends there,
    /// its saved batches kept; one message's failure is its own entry in the answer.
    public typealias Fetch = @MainActor ([String]) async throws -> [String: Result<[UInt8], any Error>]

    let store: Store
    let account: Account
    let format: ExportFormat
    /// The directory (maildir, eml) or the mbox file, as named.
    let path: String
    let mirror: Bool
    let labelNames: [String: String]
    /// Items read from the change sequence at a time, at least: a batch grows with the
    /// export (an eighth of what it holds, at most 5,000), so that a large export saves its
    /// state (a transaction, and a flush of what it wrote) about 25 times per 100,000, not 200.
    public var batchSize = 500
    /// `--two-way`, `--notmuch` or `--one-way`: the mode recorded from this run on; nil keeps the state's.
    public var twoWayRequest: TwoWayMode?
    /// Only read back and report what would be queued; write nothing.
    public var dryRun = false
    /// The notmuch program, for a `--notmuch` export.
    public var notmuch: NotmuchProgram?
    /// A --notmuch database's UUID and the revision taken before this run tagged anything,
    /// recorded when the run completes: set while the export has not yet tagged it whole.
    var notmuchOnCompletion: (uuid: String, revision: Int64)?
    /// notmuch's tags of the messages this run read back, as its dump gave them (by notmuch
    /// id): a batch's line that would leave them as they are is not sent (NotmuchBridge).
    var notmuchTagsKnown: [String: Set<String>] = [:]
    /// A batch's messages without a Message-ID written again: their new notmuch id (the
    /// file's SHA-1 changed with its X-Keywords) → the old one, whose tags Gmail does not
    /// know (`todo`) the new one is given (notmuchLines).
    var replacedSHA1: [String: String] = [:]
    /// The revision after this run tagged a message (by notmuch id): a later batch's check
    /// for a client's change to it starts there (NotmuchBridge.tagInNotmuch).
    var notmuchTaggedAt: [String: Int64] = [:]
    /// What the read-back left in memory and not yet in the state file: it queued, and the
    /// file holds the pending read-back a rerun adopts, so the next save may carry it.
    var stateOwed = false
    /// The state as the run left it: a command that ends with the run can keep it to its
    /// exit and not spend the time a large state takes to free (a text state read whole:
    /// about 100 ms of a 310 ms idle run at 100,000 messages).
    public private(set) var stateLeft: ExportStateLeft?
    /// Called at the named points of a run (the reliability suite's kill -9 seam; the CLI
    /// wires it to TestHooks): `read-back-saved`, `read-back-queued`, `batch-written`.
    public var checkpoint: @MainActor (String) -> Void = { _ in }

    /// The tag file written beside the Maildir (inside it, where `notmuch new` skips it
    /// as not mail), for `notmuch tag --batch --input=FILE`: each batch's lines appended
    /// before its state is saved, kept until the user consumes (removes) the file.
    nonisolated public static let tagFileName = "notmuch-tags"
    nonisolated public static let stateFileName = ".hudson-export"

    public init(store: Store, account: Account, format: ExportFormat, path: String, mirror: Bool) throws {
        self.store = store
        self.account = account
        self.format = format
        self.path = path
        self.mirror = mirror
        var names: [String: String] = [:]
        for label in try store.labels(accountID: account.id) { names[label.id] = label.displayName }
        labelNames = names
    }

    public var tagFilePath: String { path + "/" + Self.tagFileName }

    /// The export's files once its target is checked: every operation goes through `root`
    /// (the export's directory, or the directory an mbox is in) and its subdirectories,
    /// held open (ExportDirectory), so nothing is followed out of it.
    final class Layout {
        let root: ExportDirectory
        /// The state file's name in `root`: `.hudson-export`, or `NAME.hudson-export` beside an mbox.
        let stateName: String
        /// The mbox file's name in `root`.
        let mboxName: String?
        /// Where files are written before they are renamed into place (Maildir's tmp/,
        /// `.hudson-tmp` for .eml files).
        var temporary: ExportDirectory?
        private var directories: [String: ExportDirectory] = [:]

        init(root: ExportDirectory, stateName: String, mboxName: String?) {
            self.root = root
            self.stateName = stateName
            self.mboxName = mboxName
        }

        /// The directory at `relative` (`cur`, `2024/05`), opened once; nil when missing and not `create`.
        func directory(_ relative: String, create: Bool) throws -> ExportDirectory? {
            if let known = directories[relative] { return known }
            var current = root
            for part in relative.split(separator: "/") {
                guard let next = try current.subdirectory(String(part), create: create) else { return nil }
                current = next
            }
            directories[relative] = current
            return current
        }

        /// The directory holding the file at `relative` (`cur/NAME`), and the file's name.
        /// Every component a name (`.` and `..` are refused: nothing a state says is reached
        /// outside the export, whatever checked it before).
        func place(_ relative: String, create: Bool) throws -> (ExportDirectory, String)? {
            guard !relative.isEmpty, !relative.split(separator: "/", omittingEmptySubsequences: false).contains(where: {
                $0.isEmpty || $0 == "." || $0 == ".."
            }) else {
                throw ExportFileError(root.child(relative), "not a name inside the export")
            }
            guard let slash = relative.lastIndex(of: "/") else { return (root, relative) }
            guard let directory = try directory(String(relative[..<slash]), create: create) else { return nil }
            return (directory, String(relative[relative.index(after: slash)...]))
        }

        func exists(_ relative: String) -> Bool {
            guard let (directory, name) = try? place(relative, create: false) else { return false }
            return directory.exists(name)
        }

        func read(_ relative: String) throws -> [UInt8] {
            guard let (directory, name) = try place(relative, create: false) else { throw ExportFileError(relative, errno: ENOENT) }
            return try directory.read(name)
        }

        func remove(_ relative: String) throws {
            guard let (directory, name) = try place(relative, create: false) else { return }
            try directory.remove(name)
        }

        func names(in relative: String) throws -> [String] {
            try directory(relative, create: false)?.names() ?? []
        }
    }

    /// Runs the export. `fetch` gets the sources the store does not have; `progress` is
    /// told the messages done so far and the sources fetched.
    public func run(fetch: Fetch, progress: (_ done: Int, _ fetched: Int) -> Void = { _, _ in }) async throws -> ExportReport {
        do {
            return try await runExport(fetch: fetch, progress: progress)
        } catch let failure as ExportStateFailure {
            throw failure.exportError(path: path)
        }
    }

    /// `STORE.exports`: where the store keeps its exports' states (ExportStateDatabase).
    /// The store named through a link to its file has its states beside the file itself.
    /// Resolved once: every save of the run uses it.
    lazy var statesPath = ExportStateDatabase.directory(forStore: ExportTarget.realPath(store.path) ?? store.path)

    private func runExport(fetch: Fetch, progress: (_ done: Int, _ fetched: Int) -> Void) async throws -> ExportReport {
        var report = ExportReport()
        // Checked before anything is created: a refused run leaves the file system as it was.
        let target = try ExportTarget.inspect(path, format: format, email: account.email, storePath: store.path, states: statesPath)
        if dryRun && target.state?.twoWay ?? .off == .off && (twoWayRequest ?? .off) == .off {
            throw ExportError.notThisExport(path: path, detail: "not a two-way export: --dry-run shows what a two-way export would read back")
        }
        if (twoWayRequest ?? .off) != .off && format != .maildir {
            throw ExportError.badTarget(path: path, reason: "only a Maildir export can be two-way")
        }
        let (layout, lock, initial) = try open(target)
        defer { close(lock) }
        var state = initial
        defer { stateLeft = ExportStateLeft(state) }
        try readBack(layout, &state, &report)
        if dryRun { return report }
        var tagLines: [UInt8] = []
        // A --notmuch export tags the database itself: no file is left for the user.
        let notmuchMode = state.twoWay == .notmuch
        var notmuchTags: [String: Set<String>] = [:]
        var notmuchMembers: [String: Set<String>] = [:]  // notmuch id → the batch's Gmail ids it is
        var renamedInBatch: Set<String> = []  // Gmail ids whose file this batch gave a new name
        var taggedInBatch: Set<String> = []  // Gmail ids whose notmuch tags this batch sets
        let tagFile = format == .maildir && !notmuchMode
            ? try layout.root.openRegular(Self.tagFileName, flags: O_WRONLY | O_CREAT | O_APPEND) : -1
        defer { if tagFile >= 0 { close(tagFile) } }
        // A marker that lives while a run does: when a run finds one, the run before it was
        // killed, and the Maildir is read to find the files it left under an older name.
        let marker = layout.stateName + ".running"
        let interrupted = layout.root.exists(marker)
        try layout.root.writeAtomically([], to: marker, temporary: marker + ".tmp", in: layout.root)
        // A Maildir's files by the unique part of their names (after a killed run only).
        var maildirFiles: [String: [String]] = [:]
        if format == .maildir && interrupted {
            for directory in ["cur", "new"] {
                for name in try layout.names(in: directory) {
                    if let unique = MaildirNames.uniquePart(of: name) { maildirFiles[unique, default: []].append(directory + "/" + name) }
                }
            }
        }
        if let temporary = layout.temporary {
            // What a killed run left half-written.
            for name in try temporary.names() where name.contains("hudson-") {
                try temporary.remove(name)
            }
        }
        let mbox = try openMbox(layout, &state)
        defer { if mbox >= 0 { close(mbox) } }

        var done = 0
        // Sources that failed before, then the changes since the state's point.
        var retry = Array(state.failed.union(state.relabelAgain))
        while true {
            let items: [ExportItem]
            let retrying = !retry.isEmpty
            if retrying {
                let chunk = Array(retry.prefix(batchSize))
                retry.removeFirst(chunk.count)
                items = try store.exportItems(accountID: account.id, gmailIDs: chunk)
                // A message gone from the store and its change feed has nothing left to export.
                for id in chunk where !items.contains(where: { $0.gmailID == id }) {
                    state.failed.remove(id)
                    state.relabelAgain.remove(id)
                }
            } else {
                // An eighth of the export, between batchSize and 5,000: the count is needed
                // only up to 40,000 (an idle run of a large export reads no more rows).
                let limit = min(max(batchSize, try state.entries.count(upTo: 40_000) / 8), max(batchSize, 5_000))
                items = try store.exportItems(accountID: account.id, since: state.seq, limit: limit)
                if items.isEmpty { break }
            }
            if retrying { for item in items { state.relabelAgain.remove(item.gmailID) } }
            if state.twoWay != .off {
                // The names this batch's relabels will give files, saved once before any is
                // given: a killed run's renames are then the export's, not a client's.
                for item in items where !item.deleted {
                    guard let existing = state.entries[item.gmailID], existing.status == .live else { continue }
                    let name = "cur/" + maildirName(item, keepingFlagsOf: existing.path)
                    if name != existing.path { state.writingAhead[item.gmailID] = name }
                    // What notmuch holds until this batch tags it: a kill before then leaves
                    // it there, and the next read-back must not take the difference as a client's.
                    // An entry a killed run left is kept: notmuch still has those tags, and
                    // the file may already say the new ones (a second kill before tagging).
                    if notmuchMode, state.taggedBefore[item.gmailID] == nil,
                       let file = try? layout.readPrefix(existing.path, count: MaildirIdentity.headerLimit) {
                        state.taggedBefore[item.gmailID] = MaildirNames.tagsWritten(file)
                    }
                }
                if !state.writingAhead.isEmpty || !state.taggedBefore.isEmpty { try saveState(&state, layout) }
            }
            // Sources: stored, or fetched 500 at a time (at most that many in memory).
            for part in stride(from: 0, to: items.count, by: 500).map({ items[$0..<min($0 + 500, items.count)] }) {
                var missing: [String] = []
                // The cheap tests first: a lookup in the state is a read of its file.
                for item in part where !item.deleted && !item.sourceStored && state.entries[item.gmailID] == nil
                    && MaildirNames.isUsableID(item.gmailID) && !isLeftOut(item, state) {
                    missing.append(item.gmailID)
                }
                var fetched: [String: [UInt8]] = [:]
                if !missing.isEmpty {
                    for (id, result) in try await fetch(missing) where missing.contains(id) {
                        switch result {
                        case .success(let source): fetched[id] = source
                        case .failure(let error): report.failed[id] = String(describing: error)
                        }
                    }
                    for id in missing where fetched[id] == nil && report.failed[id] == nil {
                        report.failed[id] = "no answer from Gmail"
                    }
                    report.fetched += fetched.count
                    if account.keepRaw {
                        try store.saveSources(fetched.map { (gmailID: $0.key, source: $0.value) }, accountID: account.id)
                    }
                }
                for item in part {
                    if item.deleted {
                        guard let entry = state.entries[item.gmailID] else { state.failed.remove(item.gmailID); continue }
                        if mirror && format != .mbox {
                            if format == .maildir, !layout.exists(entry.path),
                               let found = try findMaildirFile(item, layout, &maildirFiles) {
                                try layout.remove(found)  // renamed by a killed run
                            }
                            try layout.remove(entry.path)
                            state.entries[item.gmailID] = nil
                            state.taggedBefore[item.gmailID] = nil
                            report.removed += 1
                        } else if entry.status == .live {
                            state.entries[item.gmailID]?.status = .kept
                            report.kept += 1
                        }
                        continue
                    }
                    if isLeftOut(item, state) { continue }
                    state.removedByClient.remove(item.gmailID)  // out of the trash: written again
                    let existing = state.entries[item.gmailID]
                    if existing != nil && format != .maildir { continue }  // a source never changes
                    guard MaildirNames.isUsableID(item.gmailID) else {
                        report.failed[item.gmailID] = "not a Gmail id that can name a file"
                        continue
                    }
                    var source: [UInt8]
                    if let existing, let file = try? layout.read(existing.path) {
                        source = MaildirIdentity.strippingExportHeaders(file, exportID: state.exportID)
                    } else if existing != nil && state.twoWay != .off {
                        // Renamed or removed by a client during this run: the next run reads
                        // that back first, then writes this message again.
                        state.relabelAgain.insert(item.gmailID)
                        continue
                    } else if existing != nil, let found = try findMaildirFile(item, layout, &maildirFiles),
                              let file = try? layout.read(found) {
                        // A killed run renamed it after the state was last saved: the file is still good.
                        source = MaildirIdentity.strippingExportHeaders(file, exportID: state.exportID)
                    } else if existing != nil {
                        // Its file is gone (removed by hand): written again by the next run, from the source.
                        state.entries[item.gmailID] = nil
                        report.failed[item.gmailID] = "its file is missing; the next run writes it again"
                        continue
                    } else if let bytes = fetched[item.gmailID] {
                        source = bytes
                    } else if item.sourceStored, let bytes = try store.source(gmailID: item.gmailID, accountID: account.id) {
                        source = bytes
                    } else {
                        if report.failed[item.gmailID] == nil { report.failed[item.gmailID] = "source not stored and not fetched" }
                        state.failed.insert(item.gmailID)
                        continue
                    }
                    state.failed.remove(item.gmailID)
                    report.failed[item.gmailID] = nil
                    // Maildir and .eml files end their lines in LF, as Unix mail tools write them
                    // (mboxrd's entries do too: Mbox).
                    if format != .mbox { source = UnixLines.from(source) }
                    let relative = try write(item, existing: existing, source: &source, mbox: mbox, layout: layout, state: state,
                                             maildirFiles: &maildirFiles)
                    state.entries.set(item.gmailID, to: ExportState.Entry(status: .live, path: relative), was: existing)
                    if existing == nil { report.written += 1 } else { report.relabelled += 1 }
                    if notmuchMode {
                        taggedInBatch.insert(item.gmailID)
                        if existing?.path != relative { renamedInBatch.insert(item.gmailID) }
                        if let id = NotmuchBatch.messageID(item.messageIDHeader) {
                            notmuchTags[id, default: []].formUnion(tags(item.labels))
                            notmuchMembers[id, default: []].insert(item.gmailID)
                            state.notmuchSHA1[item.gmailID] = nil
                        } else if let old = state.notmuchSHA1[item.gmailID], existing?.path == relative {
                            // Written again under the same name: `notmuch new` indexes a name it
                            // does not know, not new contents, so the message keeps its id.
                            notmuchTags["notmuch-sha1-" + old, default: []].formUnion(tags(item.labels))
                            notmuchMembers["notmuch-sha1-" + old, default: []].insert(item.gmailID)
                        } else {
                            // notmuch's id for it: the SHA-1 of the file as written.
                            let file = MaildirIdentity.exportHeaders(tags: tags(item.labels).sorted(), gmailID: item.gmailID,
                                                                     exportID: state.exportID, newline: MaildirNames.newline(of: source)) + source
                            let sha = NotmuchSHA1.hex(file)
                            if let old = state.notmuchSHA1[item.gmailID], old != sha {
                                replacedSHA1["notmuch-sha1-" + sha] = "notmuch-sha1-" + old
                            }
                            state.notmuchSHA1[item.gmailID] = sha
                            notmuchTags["notmuch-sha1-" + sha, default: []].formUnion(tags(item.labels))
                            notmuchMembers["notmuch-sha1-" + sha, default: []].insert(item.gmailID)
                        }
                        report.tagLines += 1
                    } else if format == .maildir {
                        if let id = NotmuchBatch.messageID(item.messageIDHeader) {
                            tagLines += Array(NotmuchBatch.line(messageID: id, tags: Set(tags(item.labels)), managed: managedTags).utf8)
                            report.tagLines += 1
                        } else {
                            report.withoutMessageID += 1
                        }
                    }
                }
            }
            // An id that cannot name a file is reported each run, never retried as a file.
            for id in report.failed.keys where MaildirNames.isUsableID(id) { state.failed.insert(id) }
            done += items.count
            // Only the change-sequence batches move the point; a failed source is in `failed`.
            if !retrying, let last = items.last { state.seq = max(state.seq, last.seq) }
            if mbox >= 0, let name = layout.mboxName { state.mboxSize = layout.root.size(name) ?? state.mboxSize }
            // The batch's tag lines reach the disk before the state says it is exported.
            try appendTagLines(&tagLines, to: tagFile)
            if notmuchMode {
                checkpoint("notmuch-tagging")
                let taggings = try notmuchLines(&notmuchTags, members: notmuchMembers, renamed: renamedInBatch, state: state)
                notmuchMembers = [:]
                renamedInBatch = []
                // A message a client changed in notmuch during this run keeps the client's tags:
                // the next run reads them back (its tags before this relabel stay in the state,
                // so only what the client changed is), then writes and tags it again.
                let left = try tagInNotmuch(taggings.map(\.tagging), since: state.notmuchUUID.isEmpty ? nil : state.notmuchRevision)
                for tagging in taggings where left.contains(tagging.tagging.id) {
                    for id in tagging.members where taggedInBatch.contains(id) {
                        taggedInBatch.remove(id)
                        state.relabelAgain.insert(id)
                    }
                }
            }
            state.writingAhead = [:]
            // What notmuch had is forgotten only for the messages tagged now: a message this
            // batch did not tag (its source failed, a client renamed it) still has the old tags.
            for id in taggedInBatch { state.taggedBefore[id] = nil }
            taggedInBatch = []
            checkpoint("batch-written")
            try saveState(&state, layout)
            progress(done, report.fetched)
        }
        if mirror && format != .mbox {
            // Messages kept by earlier runs without --mirror.
            for id in try state.entries.ids(status: .kept) {
                guard let entry = state.entries[id] else { continue }
                try layout.remove(entry.path)
                state.entries[id] = nil
                report.removed += 1
            }
            try saveState(&state, layout)
        }
        if let notmuch = notmuchOnCompletion, state.twoWay == .notmuch {
            // Every message is tagged: from this revision on, what changes is the client's.
            (state.notmuchUUID, state.notmuchRevision) = notmuch
            try saveState(&state, layout)
        }
        if stateOwed { try saveState(&state, layout) }
        try layout.root.remove(marker)
        return report
    }

    /// Creates what the checked target lacks (the target directory and its subdirectories,
    /// or nothing beside an mbox but the lock), takes the lock, and reads the state again
    /// under it (or saves a fresh one). When a step fails before the state is saved, what
    /// this run created is removed again; a busy lock removes nothing (the other run owns it).
    func open(_ target: ExportTarget) throws -> (Layout, Int32, ExportState) {
        var created: [(directory: ExportDirectory, name: String, isDirectory: Bool)] = []
        var createdParents: [String] = []
        func undo() {
            for item in created.reversed() {
                if item.isDirectory { item.directory.removeDirectory(item.name) } else { try? item.directory.remove(item.name) }
            }
            for path in createdParents.reversed() { rmdir(path) }
        }
        func makeDirectory(_ parent: ExportDirectory, _ name: String) throws -> ExportDirectory {
            let existed = parent.exists(name)
            guard let directory = try parent.subdirectory(name, create: true) else { throw ExportFileError(parent.child(name), errno: ENOENT) }
            if !existed { created.append((parent, name, true)) }
            return directory
        }
        let layout: Layout
        let lock: Int32
        do {
            for path in target.missingParents {
                guard mkdir(path, 0o700) == 0 else {
                    if errno == EEXIST { continue }  // made meanwhile by another run
                    throw ExportFileError(path)
                }
                createdParents.append(path)
            }
            let parent = try ExportDirectory.open(target.parent, followingLink: true)
            let lockName: String
            switch format {
            case .maildir, .eml:
                let root = try makeDirectory(parent, target.name)
                layout = Layout(root: root, stateName: Self.stateFileName, mboxName: nil)
                if format == .maildir {
                    _ = try makeDirectory(root, "cur")
                    _ = try makeDirectory(root, "new")
                    layout.temporary = try makeDirectory(root, "tmp")
                } else {
                    layout.temporary = try makeDirectory(root, ".hudson-tmp")
                }
                lockName = Self.stateFileName + ".lock"
            case .mbox:
                layout = Layout(root: parent, stateName: target.name + Self.stateFileName, mboxName: target.name)
                lockName = layout.stateName + ".lock"
            }
            let lockExisted = layout.root.exists(lockName)
            guard let held = try layout.root.lock(lockName) else { throw ExportError.busy(path: path) }
            if !lockExisted { created.append((layout.root, lockName, false)) }
            lock = held
        } catch ExportError.busy(let path) {
            throw ExportError.busy(path: path)
        } catch {
            undo()
            throw error
        }
        do {
            // Under the lock: another run may have written the state since it was inspected.
            if layout.root.exists(layout.stateName) {
                // A text state inspect read, unless another run replaced it since (a 100,000-message
                // one takes longer to parse than the rest of an idle run). A state beside the store
                // is read again: its text part is small, and another run's saves leave the marker as it was.
                if let known = target.state, !known.entries.isInDatabase, let stamp = known.stamp,
                   layout.root.stamp(layout.stateName) == stamp {
                    stateOwed = true
                    return (layout, lock, known)
                }
                let state = try ExportTarget.readState(layout.root, layout.stateName, format: format, email: account.email,
                                                       states: statesPath, given: path)
                // A state in the earlier text form is kept as a database by this run, whatever it does.
                if !state.entries.isInDatabase { stateOwed = true }
                return (layout, lock, state)
            }
            var state = ExportState(format: format, email: account.email)
            try saveState(&state, layout)
            return (layout, lock, state)
        } catch {
            close(lock)
            undo()
            throw error
        }
    }

    /// The batch's notmuch taggings, each message's tags with those of the other exported
    /// Gmail messages sharing its Message-ID (one notmuch message: the union), and the Gmail
    /// ids each is. A tagging is guarded when one of them had tags from the export before
    /// (`taggedBefore`): a client may be changing that message.
    func notmuchLines(_ tagsByID: inout [String: Set<String>], members: [String: Set<String>], renamed: Set<String>,
                      state: ExportState) throws -> [(tagging: NotmuchTagging, members: Set<String>)] {
        defer { tagsByID = [:] }
        var members = members
        let headers = tagsByID.keys.filter { !$0.hasPrefix("notmuch-sha1-") }
        var siblings: [String: [String]] = [:]
        for (header, ids) in try gmailIDs(notmuchIDs: headers) where ids.count > 1 {
            siblings[header] = ids.filter { state.entries[$0]?.status == .live }
        }
        if !siblings.isEmpty {
            let items = try store.exportItems(accountID: account.id, gmailIDs: Array(Set(siblings.values.joined())))
            for item in items where !item.deleted {
                if let header = NotmuchBatch.messageID(item.messageIDHeader), siblings[header] != nil {
                    tagsByID[header, default: []].formUnion(tags(item.labels))
                    members[header, default: []].insert(item.gmailID)
                }
            }
        }
        let carried = try tagsCarried(to: Set(tagsByID.keys))
        var lines: [(tagging: NotmuchTagging, members: Set<String>)] = []
        for (id, tags) in tagsByID.sorted(by: { $0.key < $1.key }) {
            let ids = members[id] ?? []
            let guarded = ids.contains { state.taggedBefore[$0] != nil }
            if let (kept, notmuchNew) = carried[id] {
                // The old id's other tags, and not the ones `notmuch new` gives what it adds.
                lines.append((NotmuchTagging(id: id, tags: tags.union(kept), managed: managedTags.union(notmuchNew), guarded: false), ids))
                continue
            }
            // A message whose tags already say it (the client's own change, read back and
            // now Gmail's): the line would add what it has and remove what it lacks. Not one
            // shared by two Gmail messages: their files' flags differ (each copy's own), and
            // `notmuch new` gives the tags their union's (the sent copy's S drops unread).
            if siblings[id] == nil, let known = notmuchTagsKnown[id], tags.isSubset(of: known),
               known.isDisjoint(with: managedTags.subtracting(tags)) {
                continue
            }
            notmuchTagsKnown[id] = nil
            lines.append((NotmuchTagging(id: id, tags: tags, managed: managedTags, guarded: guarded,
                                         renamed: ids.contains { renamed.contains($0) }), ids))
        }
        return lines
    }

    /// For the batch's messages without a Message-ID written again (`replacedSHA1`): the tags
    /// of their old notmuch id that are no Gmail label's, read before `notmuch new` drops
    /// the old id with its file, and the tags `notmuch new` gives a message it adds
    /// (`new.tags`), which the old id may not have.
    func tagsCarried(to ids: Set<String>) throws -> [String: (kept: Set<String>, notmuchNew: Set<String>)] {
        defer { replacedSHA1 = [:] }
        let replaced = replacedSHA1.filter { ids.contains($0.key) }
        guard !replaced.isEmpty else { return [:] }
        var tagsOf: [String: Set<String>] = [:]
        for chunk in Self.chunks(Set(replaced.values).sorted()) {
            for message in NotmuchTags.parseDump(try runNotmuch(["dump", "--format=batch-tag", "--"] + Self.idTerms(chunk))) {
                tagsOf[message.id, default: []].formUnion(message.tags)
            }
        }
        let notmuchNew = Set(String(decoding: try runNotmuch(["config", "get", "new.tags"]), as: UTF8.self)
            .split(whereSeparator: { $0 == "\n" || $0 == ";" }).map { String($0).trimmingSpaces }.filter { !$0.isEmpty })
        var result: [String: (kept: Set<String>, notmuchNew: Set<String>)] = [:]
        for (new, old) in replaced {
            guard let tags = tagsOf[old] else { continue }
            let kept = tags.subtracting(managedTags)
            result[new] = (kept, notmuchNew.subtracting(managedTags).subtracting(kept))
        }
        return result
    }

    /// Appends and fsyncs the tag lines so far; appending never drops lines not yet applied,
    /// and lines applied twice are harmless (the later line wins in notmuch).
    func appendTagLines(_ lines: inout [UInt8], to fd: Int32) throws {
        guard fd >= 0, !lines.isEmpty else { return }
        try ExportFiles.writeAll(fd, lines, path: tagFilePath)
        guard fsync(fd) == 0 else { throw ExportFileError(tagFilePath) }
        lines.removeAll(keepingCapacity: true)
    }

    /// A Maildir message's file found by the unique part of its name, relative to the export:
    /// from the listing read after a killed run, else from cur/ and new/ read now.
    func findMaildirFile(_ item: ExportItem, _ layout: Layout, _ maildirFiles: inout [String: [String]]) throws -> String? {
        guard format == .maildir else { return nil }
        let unique = MaildirNames.unique(gmailID: item.gmailID, internalDate: item.internalDate)
        if maildirFiles[unique] == nil {
            for directory in ["cur", "new"] {
                for name in try layout.names(in: directory) where MaildirNames.uniquePart(of: name) == unique {
                    maildirFiles[unique, default: []].append(directory + "/" + name)
                }
            }
        }
        return maildirFiles[unique]?.first { layout.exists($0) }
    }

    /// A message's Maildir name: its flags from its labels, and the flags of the name it has
    /// now that have no Gmail meaning (`R` replied, `P` passed, lowercase ones) kept.
    func maildirName(_ item: ExportItem, keepingFlagsOf current: String?) -> String {
        let gmail = MaildirNames.flags(item.labels)
        var kept = ""
        if let current, let info = MaildirReadBack.info(of: current) {
            kept = String(info.filter { !"DFST".contains($0) && $0.isASCII && $0.isLetter })
        }
        let flags = String(Set(gmail + kept).sorted())
        return MaildirNames.unique(gmailID: item.gmailID, internalDate: item.internalDate) + ":2," + flags
    }

    /// A message the client removed, while it stays in the trash: not written again.
    func isLeftOut(_ item: ExportItem, _ state: ExportState) -> Bool {
        state.removedByClient.contains(item.gmailID) && item.labels.contains("TRASH")
    }

    /// Lieer-style tags of these labels (MaildirNames).
    func tags(_ labels: [String]) -> [String] {
        labels.map { MaildirNames.tag(labelID: $0, names: labelNames) }
    }

    /// Every tag the tag file sets or clears: the system labels' and every label's of the account.
    lazy var managedTags: Set<String> = Set(MaildirNames.systemTags.values).union(labelNames.keys.map {
        MaildirNames.tag(labelID: $0, names: labelNames)
    })

    /// Writes one message (`existing`: its entry in the state, if any); returns its path
    /// relative to the export.
    func write(_ item: ExportItem, existing: ExportState.Entry?, source: inout [UInt8], mbox: Int32, layout: Layout,
               state: ExportState, maildirFiles: inout [String: [String]]) throws -> String {
        switch format {
        case .maildir:
            let unique = MaildirNames.unique(gmailID: item.gmailID, internalDate: item.internalDate)
            let name = maildirName(item, keepingFlagsOf: existing?.path)
            let relative = "cur/" + name
            let header = MaildirIdentity.exportHeaders(tags: tags(item.labels).sorted(), gmailID: item.gmailID,
                                                       exportID: state.exportID, newline: MaildirNames.newline(of: source))
            guard let cur = try layout.directory("cur", create: false), let temporary = layout.temporary else {
                throw ExportFileError(path + "/cur", errno: ENOENT)
            }
            try cur.writeAtomically(header + source, to: name, temporary: unique, in: temporary)
            for old in maildirFiles[unique] ?? [] where old != relative { try layout.remove(old) }
            if let old = existing?.path, old != relative { try layout.remove(old) }
            // Kept up to date where a killed run's files were listed; never grown by a run
            // (the entries name what it writes: a map of every file would grow with the export).
            if maildirFiles[unique] != nil { maildirFiles[unique] = [relative] }
            return relative
        case .eml:
            let (year, month) = Self.yearMonth(item.internalDate)
            let directoryName = "\(year)/\(month < 10 ? "0" : "")\(month)"
            guard let directory = try layout.directory(directoryName, create: true), let temporary = layout.temporary else {
                throw ExportFileError(path + "/" + directoryName, errno: ENOENT)
            }
            try directory.writeAtomically(source, to: item.gmailID + ".eml", temporary: item.gmailID + ".hudson-tmp", in: temporary)
            return directoryName + "/" + item.gmailID + ".eml"
        case .mbox:
            try ExportFiles.writeAll(mbox, Mbox.entry(source, sender: Self.envelopeSender(item.sender), date: item.internalDate), path: path)
            return "-"
        }
    }

    /// The address of an mbox `From ` line: the sender's address when it is one word of
    /// printable ASCII (a space, a line break or a control would split the separator line,
    /// whatever a message's From header holds), else none (Mbox writes MAILER-DAEMON).
    static func envelopeSender(_ header: String?) -> String {
        let address = MailAddress.parseList(header ?? "").first?.address ?? ""
        return address.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) ? address : ""
    }

    /// Saves the state (ExportStateDatabase), once what the run wrote is on disk.
    func saveState(_ state: inout ExportState, _ layout: Layout) throws {
        layout.root.flush()
        let location = ExportStateLocation(root: layout.root, markerName: layout.stateName, statesPath: statesPath,
                                           format: format, email: account.email)
        try state.entries.save(text: state.textPart, at: location, allowsClientPaths: state.allowsClientPaths)
        stateOwed = false
    }

    /// Opens the mbox for appending, cut back to the length the state recorded (what a
    /// killed run appended after its last saved batch is written again).
    func openMbox(_ layout: Layout, _ state: inout ExportState) throws -> Int32 {
        guard let name = layout.mboxName else { return -1 }
        let fd = try layout.root.openRegular(name, flags: O_WRONLY | O_CREAT | O_APPEND)
        if let size = layout.root.size(name), size != state.mboxSize {
            guard size > state.mboxSize, ftruncate(fd, off_t(state.mboxSize)) == 0 else {
                close(fd)
                throw ExportError.notThisExport(path: path, detail: "shorter than its export recorded: changed by another program")
            }
        }
        return fd
    }

    /// The year and month of a date, for `.eml` directories: years 1970 to 9999, so every
    /// directory is `YYYY/MM` (a date Gmail gave outside them is put at the nearer end).
    static func yearMonth(_ milliseconds: Int64) -> (Int, Int) {
        var time = time_t(max(0, min(milliseconds / 1000, 253_402_300_799)))
        var parts = tm()
        gmtime_r(&time, &parts)
        return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1)
    }
}
