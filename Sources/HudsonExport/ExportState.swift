/*!
 The state of an export, `.hudson-export` in its directory (beside the mbox file for
 `--format mbox`): what was exported, up to which point of the store's change sequence,
 so the next run writes only what changed since (issue 24 §2). Text, one record a line:

     hudson-export 1
     format maildir|mbox|eml
     account EMAIL
     seq N                    every change up to N is exported
     mbox-size N              the mbox file's length after the last complete run (mbox)
     M GMAIL-ID PATH          exported, still at Gmail (PATH relative; "-" in an mbox; in a
                              two-way Maildir, cur/NAME or new/NAME a client may have chosen)
     K GMAIL-ID PATH          exported, since deleted at Gmail, kept (no --mirror)
     F GMAIL-ID               its source could not be fetched: tried again next run

 A two-way Maildir (issue 39; MaildirReadBack) adds:

     two-way maildir|notmuch  read back what clients change (absent: one-way)
     export-id HEX            names this export in the store's record of read-backs
     intake N                 read-backs queued so far (the store records the same number)
     intake-pending N         read-back N is being queued: its B lines are the new baseline
     scanned NS NS            cur/'s and new/'s mtimes when last read (0: read next run)
     B GMAIL-ID PATH|-        the baseline read-back N-pending leaves (- : removed by the client)
     P GMAIL-ID PATH          the name a relabel is about to give the file (written ahead)
     W GMAIL-ID TAG...        (--notmuch) with P: the tags notmuch was given before that relabel
                              (%XX-encoded as in notmuch-dump(1), space-separated)
     G GMAIL-ID               removed by the client: not written again while in the trash
     R GMAIL-ID               renamed while a run wrote it: written again next run
     notmuch UUID N           (--notmuch) the database read back up to revision N
     intake-revision N        the revision the pending read-back reached
     H GMAIL-ID SHA1          a message without Message-ID: notmuch names it notmuch-sha1-SHA1

 This is the state's text form: earlier versions kept the whole state so in the export's
 directory, and it is still read there. A run keeps the state in an SQLite file beside
 the store (ExportStateDatabase), named by a marker in the export (ExportMarker): the
 lines above but `M` and `K` as one text, and the `M` and `K` entries in a table, so that
 a run holds one batch's changes in memory, not the whole export; each batch's save is
 one transaction, once what the batch wrote is on disk.
 */

/// Whether an export reads back what mail clients change (issue 39).
public enum TwoWayMode: String, Sendable, CaseIterable {
    /// One-way: the export only writes.
    case off
    /// Maildir flags are read back.
    case maildir
    /// Maildir flags, and a notmuch database on the Maildir kept in step (its tags read back).
    case notmuch
}

struct ExportState: Equatable {
    enum Status: String { case live = "M", kept = "K" }

    struct Entry: Equatable {
        var status: Status
        var path: String
    }

    var format: ExportFormat
    var email: String
    var seq: Int64 = 0
    var mboxSize: Int64 = 0
    var entries = ExportEntries()
    var failed: Set<String> = []

    /// What a two-way export also does (issue 39).
    var twoWay: TwoWayMode = .off
    var exportID: String = ""
    var intake: Int64 = 0
    var pendingIntake: Int64?
    /// The baseline the pending read-back leaves: a path, or nil for a file the client removed.
    var pendingBaseline: [String: String?] = [:]
    var writingAhead: [String: String] = [:]
    /// With `writingAhead` (--notmuch): the tags the export last gave notmuch for each of
    /// those messages, before the relabel (what a kill may leave notmuch holding).
    var taggedBefore: [String: Set<String>] = [:]
    var removedByClient: Set<String> = []
    var relabelAgain: Set<String> = []
    /// cur/'s and new/'s modification times (ns) when last read back; 0 has them read.
    var scanned = Scanned(cur: 0, new: 0)
    var notmuchUUID = ""
    var notmuchRevision: Int64 = 0
    var pendingRevision: Int64?
    var notmuchSHA1: [String: String] = [:]
    /// The file's stamp when it was read (ExportDirectory.stamp); not part of the file.
    var stamp: [Int64]?

    struct Scanned: Equatable {
        var cur: Int64
        var new: Int64
    }

    init(format: ExportFormat, email: String) {
        self.format = format
        self.email = email
    }

    static let magic = "hudson-export 1"

    /// Whether an entry may name a file by a name a mail client chose (a two-way Maildir's).
    var allowsClientPaths: Bool { format == .maildir && !exportID.isEmpty }

    /// Parses a state's text form; nil when it is not one. On bytes, a line at a time (a
    /// text state of 100,000 messages, as earlier versions wrote, is 6 MB). The file is
    /// untrusted (issue 37 §3): every line must be of the documented form, every id one
    /// that can name a file, and every path one this format writes, inside the export
    /// (`--mirror` removes what the state names, so `K ID ../../x` must never be read).
    init?(parsing bytes: [UInt8]) {
        var format: ExportFormat?
        var email: String?
        var state = ExportState(format: .maildir, email: "")
        var first = true
        let space = UInt8(ascii: " ")
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        // Entries whose path is not one Hudson writes: allowed only as a two-way export's
        // client names, known once the whole file is read (its two-way lines come last).
        var clientPaths: [String] = []
        for line in lines {
            if first {
                guard line.elementsEqual(Self.magic.utf8) else { return nil }
                first = false
                continue
            }
            guard let gap = line.firstIndex(of: space) else { return nil }
            let key = line[line.startIndex..<gap]
            let rest = line[(gap + 1)...]
            switch key.count == 1 ? key.first! : 0 {
            case UInt8(ascii: "M"), UInt8(ascii: "K"):
                guard let second = rest.firstIndex(of: space) else { return nil }
                let idBytes = rest[rest.startIndex..<second], pathBytes = rest[(second + 1)...]
                let id = String(decoding: idBytes, as: UTF8.self)
                guard MaildirNames.isUsableID(id) else { return nil }
                // Checked on the bytes as read (every entry of a 100,000-message state, every run).
                let path = String(decoding: pathBytes, as: UTF8.self)
                if format.map({ !Self.isPath(pathBytes, of: idBytes, in: $0) }) ?? true { clientPaths.append(id) }
                state.entries[id] = Entry(status: key.first == UInt8(ascii: "M") ? .live : .kept, path: path)
                continue
            case UInt8(ascii: "F"), UInt8(ascii: "G"), UInt8(ascii: "R"):
                let id = String(decoding: rest, as: UTF8.self)
                guard MaildirNames.isUsableID(id) else { return nil }
                switch key.first {
                case UInt8(ascii: "F"): state.failed.insert(id)
                case UInt8(ascii: "G"): state.removedByClient.insert(id)
                default: state.relabelAgain.insert(id)
                }
                continue
            case UInt8(ascii: "H"):
                guard let second = rest.firstIndex(of: space) else { return nil }
                let id = String(decoding: rest[rest.startIndex..<second], as: UTF8.self)
                let sha = String(decoding: rest[(second + 1)...], as: UTF8.self)
                guard MaildirNames.isUsableID(id), sha.utf8.count == 40,
                      sha.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
                state.notmuchSHA1[id] = sha
                continue
            case UInt8(ascii: "W"):
                let parts = rest.split(separator: space, omittingEmptySubsequences: false)
                let id = String(decoding: parts[0], as: UTF8.self)
                guard MaildirNames.isUsableID(id), !parts.dropFirst().contains(where: \.isEmpty) else { return nil }
                state.taggedBefore[id] = Set(parts.dropFirst().map { NotmuchTags.decode(Substring(String(decoding: $0, as: UTF8.self))) })
                continue
            case UInt8(ascii: "B"), UInt8(ascii: "P"):
                guard let second = rest.firstIndex(of: space) else { return nil }
                let id = String(decoding: rest[rest.startIndex..<second], as: UTF8.self)
                let path = String(decoding: rest[(second + 1)...], as: UTF8.self)
                guard MaildirNames.isUsableID(id) else { return nil }
                if key.first == UInt8(ascii: "B") {
                    state.pendingBaseline[id] = path == "-" ? .some(nil) : .some(path)
                } else {
                    state.writingAhead[id] = path
                }
                continue
            default:
                break
            }
            let value = String(decoding: rest, as: UTF8.self)
            switch String(decoding: key, as: UTF8.self) {
            case "format":
                // Once: the entries after it were checked against it.
                guard format == nil, let known = ExportFormat(rawValue: value) else { return nil }
                format = known
            case "account":
                guard !value.isEmpty, !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
                email = value
            case "seq": guard let number = Int64(value), number >= 0 else { return nil }; state.seq = number
            case "mbox-size": guard let number = Int64(value), number >= 0 else { return nil }; state.mboxSize = number
            case "two-way": guard let mode = TwoWayMode(rawValue: value) else { return nil }; state.twoWay = mode
            case "export-id":
                guard value.utf8.count == 32, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
                state.exportID = value
            case "intake": guard let number = Int64(value), number >= 0 else { return nil }; state.intake = number
            case "notmuch":
                let parts = value.split(separator: " ")
                guard parts.count == 2, let number = Int64(parts[1]), number >= 0,
                      parts[0].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
                state.notmuchUUID = String(parts[0])
                state.notmuchRevision = number
            case "intake-revision": guard let number = Int64(value), number >= 0 else { return nil }; state.pendingRevision = number
            case "intake-pending": guard let number = Int64(value), number > 0 else { return nil }; state.pendingIntake = number
            case "scanned":
                let numbers = value.split(separator: " ").compactMap { Int64($0) }
                guard numbers.count == 2, numbers.allSatisfy({ $0 >= 0 }) else { return nil }
                state.scanned = Scanned(cur: numbers[0], new: numbers[1])
            default: return nil
            }
        }
        guard !first, let format, let email else { return nil }
        // A two-way Maildir also holds the names clients gave its files (MaildirIdentity).
        let clientNames = format == .maildir && !state.exportID.isEmpty
        func allowed(_ path: String, _ id: String) -> Bool {
            Self.isPath(path, of: id, in: format) || clientNames && MaildirIdentity.isClientPath(path)
        }
        for id in clientPaths where !allowed(state.entries[id]!.path, id) { return nil }
        for (id, path) in state.writingAhead where !Self.isPath(path, of: id, in: format) { return nil }
        for (id, path) in state.pendingBaseline { if let path, !allowed(path, id) { return nil } }
        // A two-way export is a Maildir's, and has its id (the store's read-backs are kept by it).
        if state.twoWay != .off && (format != .maildir || state.exportID.isEmpty) { return nil }
        if state.pendingIntake != nil && state.pendingIntake != state.intake + 1 { return nil }
        state.format = format
        state.email = email
        self = state
    }

    /// Whether `path` is where this format writes message `id`: `cur/` or `new/` and a
    /// name of Hudson's for it (MaildirNames), `YYYY/MM/ID.eml`, or `-` in an mbox.
    static func isPath(_ path: String, of id: String, in format: ExportFormat) -> Bool {
        func digits(_ text: String, _ count: Int) -> Bool { text.utf8.count == count && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        switch format {
        case .mbox:
            return path == "-"
        case .eml:
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            return parts.count == 3 && digits(parts[0], 4) && digits(parts[1], 2) && parts[2] == id + ".eml"
        case .maildir:
            return isPath(Array(path.utf8)[...], of: Array(id.utf8)[...], in: format)
        }
    }

    /// `isPath` on bytes, for the parser: no string is made to check a path.
    static func isPath(_ path: ArraySlice<UInt8>, of id: ArraySlice<UInt8>, in format: ExportFormat) -> Bool {
        guard format == .maildir else {
            return isPath(String(decoding: path, as: UTF8.self), of: String(decoding: id, as: UTF8.self), in: format)
        }
        let start = path.startIndex
        guard path.count > 4, path[start + 3] == UInt8(ascii: "/"),
              path[start..<(start + 3)].elementsEqual("cur".utf8) || path[start..<(start + 3)].elementsEqual("new".utf8)
        else { return false }
        let name = path[(start + 4)...]
        guard !name.contains(where: { $0 == UInt8(ascii: "/") || $0 < 0x20 || $0 == 0x7F }),
              let range = MaildirNames.uniqueRange(of: name) else { return false }
        // The unique part ends in the whole `.hudson-ID`.
        let marker = markerBytes
        guard range.count >= marker.count + id.count else { return false }
        let idStart = range.upperBound - id.count
        return path[idStart..<range.upperBound].elementsEqual(id)
            && path[(idStart - marker.count)..<idStart].elementsEqual(marker)
    }

    private static let markerBytes = Array(".hudson-".utf8)

    /// The state's text form, entries and all (in no particular order).
    var bytes: [UInt8] {
        var output = header
        output.reserveCapacity(output.count + entries.count * 64)
        try? entries.forEach { id, entry in
            output.append(entry.status == .live ? UInt8(ascii: "M") : UInt8(ascii: "K"))
            output.append(UInt8(ascii: " "))
            output += id.utf8
            output.append(UInt8(ascii: " "))
            output += entry.path.utf8
            output.append(UInt8(ascii: "\n"))
        }
        return output + rest
    }

    /// The text form without the entries: what the state's database keeps as text.
    var textPart: [UInt8] { header + rest }

    private var header: [UInt8] {
        Array("\(Self.magic)\nformat \(format.rawValue)\naccount \(email)\nseq \(seq)\nmbox-size \(mboxSize)\n".utf8)
    }

    private var rest: [UInt8] {
        var output: [UInt8] = []
        for id in failed { output += Array("F \(id)\n".utf8) }
        if twoWay != .off || !exportID.isEmpty {
            output += Array("two-way \(twoWay.rawValue)\nexport-id \(exportID)\nintake \(intake)\nscanned \(scanned.cur) \(scanned.new)\n".utf8)
        }
        if !notmuchUUID.isEmpty { output += Array("notmuch \(notmuchUUID) \(notmuchRevision)\n".utf8) }
        if let pendingIntake { output += Array("intake-pending \(pendingIntake)\n".utf8) }
        if let pendingRevision { output += Array("intake-revision \(pendingRevision)\n".utf8) }
        for (id, sha) in notmuchSHA1 { output += Array("H \(id) \(sha)\n".utf8) }
        for (id, path) in pendingBaseline { output += Array("B \(id) \(path ?? "-")\n".utf8) }
        for (id, path) in writingAhead { output += Array("P \(id) \(path)\n".utf8) }
        for (id, tags) in taggedBefore {
            output += Array((["W", id] + tags.sorted().map(NotmuchBatch.encode)).joined(separator: " ").utf8) + [UInt8(ascii: "\n")]
        }
        for id in removedByClient { output += Array("G \(id)\n".utf8) }
        for id in relabelAgain { output += Array("R \(id)\n".utf8) }
        return output
    }

    /// Reads a state's database (ExportStateDatabase): its text part, checked as a text
    /// state is, and the directory it was made for; nil when it does not hold a state. The
    /// entries are read as the run needs them, each checked as it is read.
    static func read(database: ExportStateDatabase) throws -> (state: ExportState, directory: String)? {
        guard let (text, directory) = try database.text(), var state = ExportState(parsing: text),
              state.entries.count == 0 else { return nil }
        database.format = state.format
        database.allowsClientPaths = state.allowsClientPaths
        state.entries = try ExportEntries(database: database)
        return (state, directory)
    }
}
