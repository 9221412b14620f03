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

/// Why an export could not start.
public enum ExportError: Error, CustomStringConvertible {
    /// The target holds something other than an export of this account in this format.
    case notThisExport(path: String, detail: String)
    /// Another hd-export is writing the same export.
    case busy(path: String)

    public var description: String {
        switch self {
        case .notThisExport(let path, let detail): return "\(path): \(detail)"
        case .busy(let path): return "\(path): another hd-export is writing this export"
        }
    }
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
    /// The directory (maildir, eml) or the mbox file.
    let path: String
    let mirror: Bool
    let labelNames: [String: String]
    /// Items read from the change sequence at a time, at least: a batch grows with the
    /// export (an eighth of what it holds, at most 5,000), since the state, saved after
    /// each, is rewritten whole (a 100,000-message export saves it about 25 times, not 200).
    public var batchSize = 500

    /// The tag file written beside the Maildir (inside it, where `notmuch new` skips it
    /// as not mail), for `notmuch tag --batch --input=FILE`: each batch's lines appended
    /// before its state is saved, kept until the user consumes (removes) the file.
    public static let tagFileName = "notmuch-tags"
    public static let stateFileName = ".hudson-export"

    public init(store: Store, account: Account, format: ExportFormat, path: String, mirror: Bool) throws {
        self.store = store
        self.account = account
        self.format = format
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.mirror = mirror
        var names: [String: String] = [:]
        for label in try store.labels(accountID: account.id) { names[label.id] = label.displayName }
        labelNames = names
    }

    var statePath: String { format == .mbox ? path + ".hudson-export" : path + "/" + Self.stateFileName }
    var temporaryDirectory: String { format == .maildir ? path + "/tmp" : format == .eml ? path + "/.hudson-tmp" : "" }
    public var tagFilePath: String { path + "/" + Self.tagFileName }

    /// Runs the export. `fetch` gets the sources the store does not have; `progress` is
    /// told the messages done so far and the sources fetched.
    public func run(fetch: Fetch, progress: (_ done: Int, _ fetched: Int) -> Void = { _, _ in }) async throws -> ExportReport {
        var report = ExportReport()
        try prepare()
        guard let lock = try ExportFiles.lock(format == .mbox ? path + ".hudson-export.lock" : path + "/.hudson-export.lock") else {
            throw ExportError.busy(path: path)
        }
        defer { close(lock) }
        var state = try loadState()
        var tagLines: [UInt8] = []
        let tagFile = format == .maildir ? open(tagFilePath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) : -1
        if format == .maildir && tagFile < 0 { throw ExportFileError(tagFilePath) }
        defer { if tagFile >= 0 { close(tagFile) } }
        // A marker that lives while a run does: when a run finds one, the run before it was
        // killed, and the Maildir is read to find the files it left under an older name.
        let marker = statePath + ".running"
        let interrupted = ExportFiles.exists(marker)
        try ExportFiles.writeAtomically([], to: marker, temporary: marker + ".tmp")
        // A Maildir's files by the unique part of their names (after a killed run only).
        var maildirFiles: [String: [String]] = [:]
        if format == .maildir && interrupted {
            for directory in ["cur", "new"] {
                for name in try ExportFiles.names(in: path + "/" + directory) {
                    if let unique = MaildirNames.uniquePart(of: name) { maildirFiles[unique, default: []].append(directory + "/" + name) }
                }
            }
        }
        if format != .mbox {
            // What a killed run left half-written.
            for name in try ExportFiles.names(in: temporaryDirectory) where name.contains("hudson-") {
                try ExportFiles.remove(temporaryDirectory + "/" + name)
            }
        }
        let mbox = try openMbox(&state)
        defer { if mbox >= 0 { close(mbox) } }

        var done = 0
        // Sources that failed before, then the changes since the state's point.
        var retry = Array(state.failed)
        while true {
            let items: [ExportItem]
            let retrying = !retry.isEmpty
            if retrying {
                let chunk = Array(retry.prefix(batchSize))
                retry.removeFirst(chunk.count)
                items = try store.exportItems(accountID: account.id, gmailIDs: chunk)
                // A message gone from the store and its change feed has nothing left to export.
                for id in chunk where !items.contains(where: { $0.gmailID == id }) { state.failed.remove(id) }
            } else {
                let limit = min(max(batchSize, state.entries.count / 8), max(batchSize, 5_000))
                items = try store.exportItems(accountID: account.id, since: state.seq, limit: limit)
                if items.isEmpty { break }
            }
            // Sources: stored, or fetched 500 at a time (at most that many in memory).
            for part in stride(from: 0, to: items.count, by: 500).map({ items[$0..<min($0 + 500, items.count)] }) {
                var missing: [String] = []
                for item in part where !item.deleted && state.entries[item.gmailID] == nil && !item.sourceStored {
                    missing.append(item.gmailID)
                }
                var fetched: [String: [UInt8]] = [:]
                if !missing.isEmpty {
                    for (id, result) in try await fetch(missing) {
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
                            if format == .maildir, !ExportFiles.exists(path + "/" + entry.path),
                               let found = try findMaildirFile(item, &maildirFiles) {
                                try ExportFiles.remove(path + "/" + found)  // renamed by a killed run
                            }
                            try ExportFiles.remove(path + "/" + entry.path)
                            state.entries[item.gmailID] = nil
                            report.removed += 1
                        } else if entry.status == .live {
                            state.entries[item.gmailID]?.status = .kept
                            report.kept += 1
                        }
                        continue
                    }
                    let existing = state.entries[item.gmailID]
                    if existing != nil && format != .maildir { continue }  // a source never changes
                    guard MaildirNames.isUsableID(item.gmailID) else {
                        report.failed[item.gmailID] = "not a Gmail id that can name a file"
                        continue
                    }
                    var source: [UInt8]
                    if let existing, let file = try? ExportFiles.read(path + "/" + existing.path) {
                        source = MaildirNames.strippingKeywords(file)
                    } else if existing != nil, let found = try findMaildirFile(item, &maildirFiles),
                              let file = try? ExportFiles.read(path + "/" + found) {
                        // A killed run renamed it after the state was last saved: the file is still good.
                        source = MaildirNames.strippingKeywords(file)
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
                    let relative = try write(item, source: &source, mbox: mbox, state: &state, maildirFiles: &maildirFiles)
                    state.entries[item.gmailID] = ExportState.Entry(status: .live, path: relative)
                    if existing == nil { report.written += 1 } else { report.relabelled += 1 }
                    if format == .maildir {
                        if let id = NotmuchBatch.messageID(item.messageIDHeader) {
                            tagLines += Array(NotmuchBatch.line(messageID: id, tags: Set(tags(item.labels)), managed: managedTags).utf8)
                            report.tagLines += 1
                        } else {
                            report.withoutMessageID += 1
                        }
                    }
                }
            }
            for id in report.failed.keys { state.failed.insert(id) }
            done += items.count
            // Only the change-sequence batches move the point; a failed source is in `failed`.
            if !retrying, let last = items.last { state.seq = max(state.seq, last.seq) }
            if mbox >= 0 { state.mboxSize = ExportFiles.size(path) ?? state.mboxSize }
            // The batch's tag lines reach the disk before the state says it is exported.
            try appendTagLines(&tagLines, to: tagFile)
            try saveState(state)
            progress(done, report.fetched)
        }
        if mirror && format != .mbox {
            // Messages kept by earlier runs without --mirror.
            for (id, entry) in state.entries where entry.status == .kept {
                try ExportFiles.remove(path + "/" + entry.path)
                state.entries[id] = nil
                report.removed += 1
            }
            try saveState(state)
        }
        try ExportFiles.remove(marker)
        return report
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
    func findMaildirFile(_ item: ExportItem, _ maildirFiles: inout [String: [String]]) throws -> String? {
        guard format == .maildir else { return nil }
        let unique = MaildirNames.unique(gmailID: item.gmailID, internalDate: item.internalDate)
        if maildirFiles[unique] == nil {
            for directory in ["cur", "new"] {
                for name in try ExportFiles.names(in: path + "/" + directory) where MaildirNames.uniquePart(of: name) == unique {
                    maildirFiles[unique, default: []].append(directory + "/" + name)
                }
            }
        }
        return maildirFiles[unique]?.first { ExportFiles.exists(path + "/" + $0) }
    }

    /// Lieer-style tags of these labels (MaildirNames).
    func tags(_ labels: [String]) -> [String] {
        labels.map { MaildirNames.tag(labelID: $0, names: labelNames) }
    }

    /// Every tag the tag file sets or clears: the system labels' and every label's of the account.
    lazy var managedTags: Set<String> = Set(MaildirNames.systemTags.values).union(labelNames.keys.map {
        MaildirNames.tag(labelID: $0, names: labelNames)
    })

    /// Writes one message; returns its path relative to the export.
    func write(_ item: ExportItem, source: inout [UInt8], mbox: Int32, state: inout ExportState,
               maildirFiles: inout [String: [String]]) throws -> String {
        switch format {
        case .maildir:
            let unique = MaildirNames.unique(gmailID: item.gmailID, internalDate: item.internalDate)
            let relative = "cur/" + MaildirNames.fileName(gmailID: item.gmailID, internalDate: item.internalDate, labels: item.labels)
            let header = MaildirNames.keywordsHeader(tags(item.labels).sorted(), newline: MaildirNames.newline(of: source))
            try ExportFiles.writeAtomically(header + source, to: path + "/" + relative,
                                            temporary: temporaryDirectory + "/" + unique)
            for old in maildirFiles[unique] ?? [] where old != relative { try ExportFiles.remove(path + "/" + old) }
            if let old = state.entries[item.gmailID]?.path, old != relative { try ExportFiles.remove(path + "/" + old) }
            maildirFiles[unique] = [relative]
            return relative
        case .eml:
            let (year, month) = Self.yearMonth(item.internalDate)
            let directory = "\(year)/\(month < 10 ? "0" : "")\(month)"
            try ExportFiles.makeDirectories(path + "/" + directory)
            let relative = directory + "/" + item.gmailID + ".eml"
            try ExportFiles.writeAtomically(source, to: path + "/" + relative, temporary: temporaryDirectory + "/" + item.gmailID + ".hudson-tmp")
            return relative
        case .mbox:
            let sender = MailAddress.parseList(item.sender ?? "").first?.address ?? ""
            try ExportFiles.writeAll(mbox, Mbox.entry(source, sender: sender, date: item.internalDate), path: path)
            return "-"
        }
    }

    /// Creates the export's directories; refuses a target that holds something else.
    func prepare() throws {
        switch format {
        case .maildir:
            try ExportFiles.makeDirectories(path)
            for sub in ["cur", "new", "tmp"] { try ExportFiles.makeDirectory(path + "/" + sub) }
        case .eml:
            try ExportFiles.makeDirectories(path)
            try ExportFiles.makeDirectory(temporaryDirectory)
        case .mbox:
            let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            if !parent.isEmpty { try ExportFiles.makeDirectories(parent) }
        }
    }

    func loadState() throws -> ExportState {
        guard ExportFiles.exists(statePath) else {
            if format == .mbox, let size = ExportFiles.size(path), size > 0 {
                throw ExportError.notThisExport(path: path, detail: "a file that no hd-export wrote (no \(statePath))")
            }
            if format != .mbox {
                let foreign = try ExportFiles.names(in: path).filter { !["cur", "new", "tmp", ".hudson-tmp", ".hudson-export.lock", ".hudson-export.tmp", ".hudson-export.running", ".hudson-export.running.tmp", Self.tagFileName].contains($0) }
                let strangers = try ExportFiles.names(in: path + "/cur").contains { MaildirNames.uniquePart(of: $0) == nil }
                if !foreign.isEmpty || strangers {
                    throw ExportError.notThisExport(path: path, detail: "not empty and not an export (no \(Self.stateFileName))")
                }
            }
            let state = ExportState(format: format, email: account.email)
            try saveState(state)
            return state
        }
        guard let state = ExportState(parsing: try ExportFiles.read(statePath)) else {
            throw ExportError.notThisExport(path: path, detail: "\(statePath) cannot be read as an export's state")
        }
        guard state.format == format else {
            throw ExportError.notThisExport(path: path, detail: "holds a \(state.format.rawValue) export, not \(format.rawValue)")
        }
        guard state.email.lowercased() == account.email.lowercased() else {
            throw ExportError.notThisExport(path: path, detail: "holds the export of \(state.email)")
        }
        return state
    }

    func saveState(_ state: ExportState) throws {
        ExportFiles.flush(format == .mbox ? statePath : path)
        try ExportFiles.writeAtomically(state.bytes, to: statePath, temporary: statePath + ".tmp")
    }

    /// Opens the mbox for appending, cut back to the length the state recorded (what a
    /// killed run appended after its last saved batch is written again).
    func openMbox(_ state: inout ExportState) throws -> Int32 {
        guard format == .mbox else { return -1 }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ExportFileError(path) }
        if let size = ExportFiles.size(path), size != state.mboxSize {
            guard size > state.mboxSize, ftruncate(fd, off_t(state.mboxSize)) == 0 else {
                close(fd)
                throw ExportError.notThisExport(path: path, detail: "shorter than its export recorded: changed by another program")
            }
        }
        return fd
    }

    static func yearMonth(_ milliseconds: Int64) -> (Int, Int) {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1)
    }
}
