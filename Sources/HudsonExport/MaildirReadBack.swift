/*!
 The read-back of a two-way Maildir export (issue 39): what mail clients changed since the
 last run, found by comparing each message's file with the name the export last knew it
 by (its baseline, the state's path). Maildir clients change flags by renaming a file
 (cr.yp.to/proto/maildir.html: the info after `:2,`), so a file not at its baseline name
 is looked for among the files the export does not know: by its unique part, or by what
 it says it is (MaildirIdentity: clients that give it a new unique name); a file found
 under other flags is a change of the flags, a message no file is any more was removed.

 What is read back: `S` (read), `F` (starred), `T` (trash), and a removed file (trash).
 Other flags (`R` replied, `P` passed, `D` draft, lowercase ones) have no Gmail meaning
 here and never cause a change; a relabel keeps them in the file's name.

 Bounded work: the state records cur/'s and new/'s modification times as they were before
 the last read (taken before it, so a rename during the read moves them past it). When
 both are unchanged no file was renamed, added or removed there since, and nothing is
 read. A time less than two seconds old when taken is not recorded: file systems stamp
 directories with a coarse clock, and a rename in the same tick would leave it unchanged.
 */
import Glibc
import HudsonStore

/// What clients changed, per message: the actions to queue and the new baseline.
struct MaildirReadBack {
    /// Per Gmail id, the actions that bring Gmail to what the client shows.
    var actions: [String: [TriageAction]] = [:]
    /// Per Gmail id, the name it is found under now (nil: removed by the client).
    var baseline: [String: String?] = [:]
    /// The directories' times taken before the read (0 when too recent to trust).
    var scanned = ExportState.Scanned(cur: 0, new: 0)
    /// The notmuch database's UUID and the revision read back to (a --notmuch export).
    var notmuch: (uuid: String, revision: Int64)?

    /// The order actions are queued in: trash and spam before the rest, so `untrash` (which
    /// puts a message back in the inbox) does not undo a flag or label the client set with it.
    static let order: [TriageAction] = [.trash, .untrash, .spam, .unspam, .archive, .unarchive, .read, .unread,
                                        .star, .unstar, .important, .unimportant]

    static func rank(_ action: TriageAction) -> (Int, String) {
        (order.firstIndex(of: action) ?? order.count, action.argument)
    }

    /// The distinct actions, in queueing order.
    var distinctActions: [TriageAction] {
        Set(actions.values.joined()).sorted { Self.rank($0) < Self.rank($1) }
    }

    /// One group per action, each on the messages it applies to (sorted, so a run is
    /// reproducible), for Store.perform(groups:): one recorded action.
    var groups: [TriageGroup] {
        distinctActions.map { action in
            TriageGroup(actions: [action], references: actions.filter { $0.value.contains(action) }.keys.sorted().map { .message($0) })
        }
    }

    /// "hd-export: read 2, trash 1", for hd-undo's list.
    var description: String {
        "hd-export: " + distinctActions.map { action in
            "\(action) \(actions.values.filter { $0.contains(action) }.count)"
        }.joined(separator: ", ")
    }

    /// The actions that take a message from the flags of `before` to those of `after`.
    static func actions(from before: String, to after: String) -> [TriageAction] {
        let old = flags(of: before), new = flags(of: after)
        var actions: [TriageAction] = []
        func compare(_ flag: Character, _ added: TriageAction, _ removed: TriageAction) {
            if new.contains(flag) && !old.contains(flag) { actions.append(added) }
            if !new.contains(flag) && old.contains(flag) { actions.append(removed) }
        }
        compare("T", .trash, .untrash)
        compare("S", .read, .unread)
        compare("F", .star, .unstar)
        return actions
    }

    /// The flags of a Maildir file name (after `:2,`); none without that info.
    static func flags(of path: String) -> Set<Character> {
        Set(info(of: path) ?? "")
    }

    /// The flags part of a name, after its `:2,`; nil when it has none.
    static func info(of path: String) -> Substring? {
        guard let colon = path.lastIndex(of: ":"), path[colon...].hasPrefix(":2,") else { return nil }
        return path[path.index(colon, offsetBy: 3)...]
    }

    /// Whether the name carries Maildir info (`:2,`): a file in new/ may have none yet.
    static func hasInfo(_ path: String) -> Bool { info(of: path) != nil }
}

extension ExportDirectory {
    /// The modification time of this directory, in nanoseconds since the epoch.
    func modificationTime() -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}

extension Exporter {
    /// Reads back what clients changed in the Maildir since the state's baseline. Reads
    /// nothing when cur/ and new/ are as they were before the last read.
    func readBack(_ layout: Layout, _ state: inout ExportState) throws -> MaildirReadBack {
        var result = MaildirReadBack()
        guard let cur = try layout.directory("cur", create: false), let new = try layout.directory("new", create: false) else {
            return result
        }
        // Taken before reading: a rename during the read moves them past what is recorded.
        let times = ExportState.Scanned(cur: cur.modificationTime(), new: new.modificationTime())
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let now = Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec)
        let settled: (Int64) -> Int64 = { $0 < now - 2_000_000_000 ? $0 : 0 }
        result.scanned = ExportState.Scanned(cur: settled(times.cur), new: settled(times.new))
        // Names a killed run was giving files (written ahead): the export's own, not a client's.
        for (id, path) in state.writingAhead {
            guard let entry = state.entries[id], layout.exists(path) else { continue }
            if entry.path != path && layout.exists(entry.path) { try layout.remove(entry.path) }
            state.entries[id]?.path = path
        }
        state.writingAhead = [:]
        if state.scanned == times && times.cur != 0 && times.new != 0 { return result }

        // cur/ and new/ listed (a stat of every exported file costs more at 100,000), each
        // path kept as a 128-bit hash, not a name: the names of a 2,000,000-message Maildir
        // took about 400 MiB. A message whose path is not listed is missing.
        var listed = Set<PathHash>(minimumCapacity: state.entries.count + 64)
        for directory in ["cur", "new"] {
            try layout.directory(directory, create: false)?.forEachName { listed.insert(PathHash(directory, $0)) }
        }
        var missing: [String: ExportState.Entry] = [:]
        var known = Set<PathHash>(minimumCapacity: state.entries.count)
        try state.entries.forEach { id, entry in
            let hash = PathHash(entry.path)
            known.insert(hash)
            if entry.status == .live && !listed.contains(hash) { missing[id] = entry }
        }
        guard !missing.isEmpty else { return result }
        listed = []
        // Where each missing message is now (MaildirIdentity): among the files whose names the
        // export does not know (listed again, by name: as many as clients renamed or added),
        // by Hudson's unique part, then by what the file says it is.
        var unknown: [String] = []
        for directory in ["cur", "new"] {
            try layout.directory(directory, create: false)?.forEachName { name in
                if !known.contains(PathHash(directory, name)) { unknown.append(directory + "/" + String(decoding: name, as: UTF8.self)) }
            }
        }
        known = []
        unknown.sort()
        var candidates: [String: [String]] = [:]
        var byUnique: [String: [String]] = [:]
        for path in unknown {
            if let part = MaildirNames.uniquePart(of: String(path.dropFirst(4))) { byUnique[part, default: []].append(path) }
        }
        var claimed = Set<String>()
        for (id, entry) in missing {
            guard let unique = MaildirNames.uniquePart(of: String(entry.path.dropFirst(4))), let paths = byUnique[unique] else { continue }
            candidates[id] = paths
            claimed.formUnion(paths)
        }
        let foundByName = Set(candidates.keys)
        var ambiguous = Set<String>()
        if candidates.count < missing.count {
            var byMessageID: [String: [String]] = [:]
            for path in unknown where !claimed.contains(path) {
                guard let prefix = try? layout.readPrefix(path, count: MaildirIdentity.headerLimit) else { continue }
                let claim = MaildirIdentity.claim(prefix, exportID: state.exportID)
                if let id = claim.gmailID {
                    // The export's own header: this file is that message (or a copy of one still in place).
                    if missing[id] != nil && !foundByName.contains(id) { candidates[id, default: []].append(path) }
                } else if let messageID = claim.messageID {
                    byMessageID[messageID, default: []].append(path)
                }
            }
            // A Message-ID names a message only when it is the one exported message that has it.
            // Two Gmail messages may share one (a message sent to oneself): then a file holding
            // it may be either, or a copy of the one still in place, so the messages whose file
            // is gone are left as they were, neither changed nor trashed.
            for (messageID, ids) in try gmailIDs(notmuchIDs: Array(byMessageID.keys)) {
                let gone = ids.filter { missing[$0] != nil && !foundByName.contains($0) }
                let exported = ids.filter { state.entries[$0]?.status == .live }
                if gone.count == 1, exported.count == 1, let id = gone.first, candidates[id] == nil {
                    candidates[id] = byMessageID[messageID]
                } else {
                    ambiguous.formUnion(gone.filter { candidates[$0] == nil })
                }
            }
        }
        for (id, entry) in missing where !ambiguous.contains(id) {
            let found = candidates[id] ?? []
            if !found.isEmpty && !found.contains(where: MaildirIdentity.isClientPath) {
                // Still there, under a name the state cannot hold (a control character, hidden):
                // left as it was, neither a change nor a removal.
                continue
            }
            if let path = MaildirIdentity.preferred(found.filter(MaildirIdentity.isClientPath)) {
                result.baseline[id] = .some(path)
                let actions = MaildirReadBack.hasInfo(path) ? MaildirReadBack.actions(from: entry.path, to: path) : []
                if !actions.isEmpty { result.actions[id] = actions }
            } else {
                // No file in the Maildir is this message: the client removed it.
                result.baseline[id] = .some(nil)
                if !MaildirReadBack.flags(of: entry.path).contains("T") { result.actions[id] = [.trash] }
            }
        }
        return result
    }

    /// Makes a read-back's baseline the state's: a found file's name becomes its path, a
    /// removed one leaves the state (and is not written again while in the trash).
    func adopt(_ baseline: [String: String?], into state: inout ExportState) {
        for (id, path) in baseline {
            if let path {
                state.entries[id]?.path = path
            } else if state.entries[id] != nil {
                state.entries[id] = nil
                state.removedByClient.insert(id)
            }
        }
    }
}

extension Exporter {
    /// A run's first step on a two-way export (and on one being made or unmade two-way):
    /// finishes a read-back a killed run left pending, then reads back what clients changed
    /// and queues it as one action. Order, so a kill at any point neither loses a change nor
    /// queues one twice: (1) the new baseline is saved in the state as pending, with the
    /// read-back's number; (2) the changes are queued and the number recorded in the
    /// store, in one transaction; (3) the baseline is made the state's. A run that finds a
    /// pending read-back asks the store: recorded, it takes the pending baseline (3);
    /// not, it drops it and reads again from the old baseline, which still shows every change.
    func readBack(_ layout: Layout, _ state: inout ExportState, _ report: inout ExportReport) throws {
        let requested = twoWayRequest
        if let requested, requested != .off, state.exportID.isEmpty {
            var random = SystemRandomNumberGenerator()
            state.exportID = (0..<16).map { _ in
                let byte = UInt8.random(in: 0...255, using: &random)
                return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
            }.joined()
        }
        let wasOff = state.twoWay == .off
        let wasNotmuch = state.twoWay == .notmuch
        // An idle run saves nothing: the state is saved (a transaction, after a flush of the
        // file system) only when something in it changed.
        var changedState = state.pendingIntake != nil || !state.writingAhead.isEmpty || !state.taggedBefore.isEmpty
            || (requested != nil && requested != state.twoWay)
        if let pending = state.pendingIntake {
            if try store.exportIntake(exportID: state.exportID) >= pending {
                adopt(state.pendingBaseline, into: &state)
                state.intake = pending
                if let revision = state.pendingRevision { state.notmuchRevision = revision }
                report.resumedReadBack = true
            }
            state.pendingIntake = nil
            state.pendingBaseline = [:]
            state.pendingRevision = nil
        }
        if let requested { state.twoWay = requested }
        report.twoWay = state.twoWay
        guard state.twoWay != .off else {
            state.taggedBefore = [:]
            if !dryRun && changedState { try saveState(&state, layout) }
            return
        }
        // Messages a killed run was relabelling, and (--notmuch) the tags notmuch had before.
        let inFlight = Set(state.writingAhead.keys).union(state.taggedBefore.keys)
        let taggedBefore = state.taggedBefore
        var found = try readBack(layout, &state)
        if state.twoWay == .notmuch {
            if !wasNotmuch {
                try checkNotmuchDatabase()
                _ = try runNotmuch(["new", "--quiet", "--no-hooks"])
            } else if !found.baseline.isEmpty {
                // Files renamed or removed since the last run: notmuch learns their flags
                // (synchronize_flags) before its tags are read, so a client that renamed a
                // file without notmuch is read back from the tags below.
                _ = try runNotmuch(["new", "--quiet", "--no-hooks"])
            }
            // Taken before this run tags anything: its own tagging is read next run (and
            // changes nothing, being what its X-Keywords say).
            let (uuid, revision) = try notmuchRevision()
            if !wasNotmuch || !state.notmuchUUID.isEmpty && uuid != state.notmuchUUID {
                // A database the export has not tagged yet (turned on, or rebuilt: another UUID):
                // every message is written (from its file: no fetch) and tagged once. Until a run
                // has done so whole, the tags there are notmuch's own, not a client's: nothing is
                // read back, and the UUID is recorded only when that run completes.
                state.seq = 0
                state.notmuchUUID = ""
                changedState = true
            }
            if state.notmuchUUID.isEmpty {
                notmuchOnCompletion = (uuid, revision)
            } else {
                if !found.actions.isEmpty, try notmuchSynchronizesFlags() {
                    // notmuch keeps S and F of every file of a message as its tags say: for two
                    // Gmail messages sharing one, the union the export tagged (the sent copy's
                    // file loses S when the other is unread). A file's S or F is then notmuch's,
                    // not a client's; a client's S or F reaches the tags (notmuch new above) and
                    // is read back from them. T and a removed file have no tag and stay read.
                    for (id, actions) in found.actions {
                        let kept = actions.filter { ![.read, .unread, .star, .unstar].contains($0) }
                        found.actions[id] = kept.isEmpty ? nil : kept
                    }
                }
                for (id, actions) in try notmuchReadBack(layout, state, baseline: found.baseline, inFlight: inFlight,
                                                           taggedBefore: taggedBefore, uuid: uuid, revision: revision) {
                    for action in actions where !(found.actions[id] ?? []).contains(action) { found.actions[id, default: []].append(action) }
                }
                found.notmuch = (uuid, revision)
            }
        }
        if wasOff {
            // Made two-way by this run: what the files show now is the baseline, not a change.
            found.actions = [:]
        }
        let changed = found.baseline.filter { id, path in found.actions[id] != nil || path == nil }
        if dryRun {
            if !found.actions.isEmpty {
                report.readBack = try store.perform(groups: found.groups, description: found.description,
                                                    accountID: account.id, dryRun: true)
            }
            return
        }
        let queues = !found.actions.isEmpty || !changed.isEmpty
        if queues {
            let number = state.intake + 1
            state.pendingIntake = number
            state.pendingBaseline = found.baseline
            state.pendingRevision = found.notmuch?.revision
            try saveState(&state, layout)
            checkpoint("read-back-saved")
            report.readBack = try store.queueExportIntake(found.groups, description: found.description, accountID: account.id,
                                                          exportID: state.exportID, intake: number)
            checkpoint("read-back-queued")
            state.intake = number
            state.pendingIntake = nil
            state.pendingBaseline = [:]
            state.pendingRevision = nil
        }
        if let notmuch = found.notmuch, notmuch != (state.notmuchUUID, state.notmuchRevision) {
            (state.notmuchUUID, state.notmuchRevision) = notmuch
            changedState = true
        }
        if !found.baseline.isEmpty || found.scanned != state.scanned || !wasNotmuch && state.twoWay == .notmuch { changedState = true }
        adopt(found.baseline, into: &state)
        state.scanned = found.scanned
        // Kept after the read-back too: notmuch has those tags until a batch tags the
        // message (Exporter forgets each entry then), and a run that stops before that
        // (a kill, a fetch that fails) must leave the next read-back knowing them.
        if queues {
            // Queued: the file holds it as pending, which a rerun adopts (the store has its
            // number), so the run's next save carries this (one save fewer).
            stateOwed = true
        } else if changedState {
            try saveState(&state, layout)
        }
    }
}

/// A path inside a Maildir (`cur/NAME`) as 128 bits (two FNV-1a hashes of its bytes from
/// different offsets, each finished by a 64-bit mixer): what a read-back keeps of every
/// file it lists. Two paths share one with a chance of about n²/2¹²⁹ (n files).
struct PathHash: Hashable {
    let high: UInt64
    let low: UInt64

    private static let prime: UInt64 = 0x0000_0100_0000_01B3

    private static func mixed(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private init(feeding: (inout UInt64, inout UInt64) -> Void) {
        var a: UInt64 = 0xCBF2_9CE4_8422_2325, b: UInt64 = 0x6C62_272E_07BB_0142
        feeding(&a, &b)
        high = Self.mixed(a)
        low = Self.mixed(b ^ 0x9E37_79B9_7F4A_7C15)
    }

    private static func feed(_ byte: UInt8, _ a: inout UInt64, _ b: inout UInt64) {
        a = (a ^ UInt64(byte)) &* prime
        b = (b ^ UInt64(byte ^ 0x5A)) &* prime
    }

    /// `directory/name`, the name as bytes.
    init(_ directory: String, _ name: UnsafeBufferPointer<UInt8>) {
        self.init { a, b in
            for byte in directory.utf8 { Self.feed(byte, &a, &b) }
            Self.feed(UInt8(ascii: "/"), &a, &b)
            for byte in name { Self.feed(byte, &a, &b) }
        }
    }

    init(_ path: String) {
        self.init { a, b in
            for byte in path.utf8 { Self.feed(byte, &a, &b) }
        }
    }
}
