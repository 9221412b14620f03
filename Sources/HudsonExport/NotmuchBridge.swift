/*!
 The notmuch side of a two-way export (issue 39, `--notmuch`): a notmuch database on the
 Maildir kept in step through notmuch's own command-line program (its database is never
 touched otherwise), and the tags clients change read back.

 - After each batch the export runs `notmuch new` for the files it wrote and gives them
   Gmail's labels as tags itself (`notmuch tag --batch`, NotmuchBatch's lines): no tag file
   is left for the user. A message whose tags this run's read-back saw already equal
   them (a client's change, now Gmail's) gets no line: its file's new flags say the same.
   A message without a Message-ID is named by the id notmuch gives it,
   `notmuch-sha1-<SHA-1 of the file>`; two Gmail messages with one Message-ID are one
   notmuch message, tagged with the union of their tags.
 - Each run reads back the messages whose tags changed since the database revision the
   last run recorded (`lastmod:` of notmuch-search-terms(7)), taken before that run tagged
   anything: the export's own tagging is read back too, and changes nothing, since what
   is read is compared with the tags the export wrote in the file's `X-Keywords:` header.
   A tag added or removed among the tags the export manages becomes a triage action
   (inbox, unread, flagged, trash, spam, important, the user labels by their tag name);
   any other tag is left alone. For two Gmail messages sharing a notmuch message, a tag
   added or removed there is added to or removed from both.
 - A database whose UUID changed (rebuilt) is not read back once: the run takes it as it is.
 */
import Glibc
import HudsonStore

/// The notmuch program, run by the caller (a library starts no process and reads no
/// environment): `notmuch ARGUMENTS`, `input` on its standard input.
public protocol NotmuchProgram {
    /// Its standard output; throws `NotmuchFailure` when it fails.
    func run(_ arguments: [String], input: [UInt8]) throws -> [UInt8]
}

/// notmuch failed: the command, the line it said last, and all it said (standard error).
public struct NotmuchFailure: Error, CustomStringConvertible {
    public var command: String
    public var message: String
    public var output: String

    public init(command: String, message: String, output: String = "") {
        self.command = command
        self.message = message
        self.output = output
    }

    public var description: String { "notmuch \(command): \(message)" }

    /// Whether notmuch failed because another process holds its database's write lock (Xapian's
    /// DatabaseLockError, "Unable to get write lock on ...: already locked"): worth trying again.
    public var isDatabaseBusy: Bool {
        let text = (message + "\n" + output).lowercased()
        return ["unable to get write lock", "already locked", "database is locked", "database locked"].contains { text.contains($0) }
    }
}

/// Gmail's labels that triage can change, by the tag the export names them with, and
/// the actions that add and remove them.
enum NotmuchTags {
    static let system: [String: (add: TriageAction, remove: TriageAction)] = [
        "inbox": (.unarchive, .archive), "unread": (.unread, .read), "flagged": (.star, .unstar),
        "trash": (.trash, .untrash), "spam": (.spam, .unspam), "important": (.important, .unimportant),
    ]

    /// `%XX` decoded (notmuch dump's batch-tag encoding, notmuch-dump(1)).
    static func decode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let first = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex), first < utf8.endIndex,
               let second = utf8.index(first, offsetBy: 1, limitedBy: utf8.endIndex), second < utf8.endIndex,
               let value = UInt8(String(decoding: [utf8[first], utf8[second]], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index = utf8.index(after: second)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `notmuch dump --format=batch-tag` lines: each message's id and tags.
    static func parseDump(_ output: [UInt8]) -> [(id: String, tags: Set<String>)] {
        var result: [(id: String, tags: Set<String>)] = []
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let separator = line.range(of: " -- id:") ?? (line.hasPrefix("-- id:") ? line.startIndex..<line.index(line.startIndex, offsetBy: 5) : nil)
            else { continue }
            var id = line[separator.upperBound...]
            if id.hasPrefix("id:") { id = id.dropFirst(3) }
            let tags = line[..<separator.lowerBound].split(separator: " ").filter { $0.hasPrefix("+") }.map { decode($0.dropFirst()) }
            result.append((decode(id), Set(tags)))
        }
        return result
    }
}

extension Substring {
    /// The first occurrence of `needle` (no Foundation here).
    func range(of needle: String) -> Range<Index>? {
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty else { return nil }
        var start = startIndex
        while start < endIndex {
            if self[start...].utf8.starts(with: pattern) {
                return start..<utf8.index(start, offsetBy: pattern.count)
            }
            start = index(after: start)
        }
        return nil
    }
}

extension Exporter {
    /// The program, which a notmuch export needs.
    func requireNotmuch() throws -> NotmuchProgram {
        guard let notmuch else {
            throw ExportError.unusableTarget(path: path, reason: "a --notmuch export needs the notmuch program, which is not on PATH")
        }
        return notmuch
    }

    func runNotmuch(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
        do {
            return try requireNotmuch().run(arguments, input: input)
        } catch let failure as NotmuchFailure {
            if failure.isDatabaseBusy {
                throw ExportError.temporarilyUnavailable(path: path, reason: "notmuch's database is locked by another program (\(failure.description)); try again")
            }
            throw ExportError.unusableTarget(path: path, reason: failure.description)
        }
    }

    /// Checks that notmuch's database is this Maildir's (its configured path is the export's
    /// directory): otherwise its tags would be another mail store's.
    func checkNotmuchDatabase() throws {
        let configured = String(decoding: try runNotmuch(["config", "get", "database.path"]), as: UTF8.self).trimmingSpaces
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        guard let mine = real(path), real(configured) == mine else {
            throw ExportError.unusableTarget(
                path: path, reason: "notmuch's database.path is \(configured.isEmpty ? "not set" : configured), not this Maildir: a --notmuch export keeps the database whose path it is (set database.path, or NOTMUCH_CONFIG)")
        }
    }

    /// Whether notmuch keeps the files' Maildir flags and its tags in step
    /// (`maildir.synchronize_flags`, true unless set otherwise).
    func notmuchSynchronizesFlags() throws -> Bool {
        String(decoding: try runNotmuch(["config", "get", "maildir.synchronize_flags"]), as: UTF8.self).trimmingSpaces != "false"
    }

    /// The database's UUID and revision (`notmuch count --lastmod`: count, UUID, revision).
    func notmuchRevision() throws -> (uuid: String, revision: Int64) {
        let fields = String(decoding: try runNotmuch(["count", "--lastmod", "--", "*"]), as: UTF8.self).split(whereSeparator: { $0 == "\t" || $0 == " " || $0 == "\n" })
        guard fields.count >= 3, let revision = Int64(fields[2]) else {
            throw ExportError.unusableTarget(path: path, reason: "notmuch count --lastmod: an answer that is not count, UUID and revision")
        }
        return (String(fields[1]), revision)
    }

    /// The actions the tags clients changed in notmuch since `state`'s revision ask for, per
    /// Gmail id. `inFlight`: messages a killed run was relabelling, whose tags in notmuch may
    /// be those before the relabel (`taggedBefore`) or after it (the file's X-Keywords): a tag
    /// is the client's only when it differs from both. Without `taggedBefore` (a state an
    /// older version wrote) such a message is left out.
    func notmuchReadBack(_ layout: Layout, _ state: ExportState, baseline: [String: String?], inFlight: Set<String>,
                         taggedBefore: [String: Set<String>], uuid: String, revision: Int64) throws -> [String: [TriageAction]] {
        guard uuid == state.notmuchUUID, revision > state.notmuchRevision else { return [:] }
        let dump = try runNotmuch(["dump", "--format=batch-tag", "--", "lastmod:\(state.notmuchRevision + 1)..\(revision)"])
        let messages = NotmuchTags.parseDump(dump)
        guard !messages.isEmpty else { return [:] }
        for message in messages { notmuchTagsKnown[message.id] = message.tags }
        // notmuch id → Gmail ids: by Message-ID through the store, by SHA-1 through the state.
        var bySHA: [String: [String]] = [:]
        for (gmailID, sha) in state.notmuchSHA1 { bySHA["notmuch-sha1-" + sha, default: []].append(gmailID) }
        let headers = messages.map(\.id).filter { !$0.hasPrefix("notmuch-sha1-") }
        let byHeader = try gmailIDs(notmuchIDs: headers)
        var labelByTag: [String: String] = [:]
        var ambiguous = Set<String>()
        // Keyed as X-Keywords writes a tag (a comma there separates tags, so it is written as
        // a space): notmuch's `a,b` and the file's `a b` are one tag; two labels that read
        // the same so are ambiguous and never read back.
        for (id, name) in labelNames where MaildirNames.systemTags[id] == nil {
            let tag = MaildirNames.tag(labelID: id, names: labelNames).replacingCommas
            if labelByTag[tag] != nil || NotmuchTags.system[tag] != nil { ambiguous.insert(tag) }
            labelByTag[tag] = name
        }
        for tag in ambiguous { labelByTag[tag] = nil }
        var result: [String: [TriageAction]] = [:]
        for message in messages {
            let gmailIDs = (message.id.hasPrefix("notmuch-sha1-") ? bySHA[message.id] : byHeader[message.id]) ?? []
            let exported = gmailIDs.filter { state.entries[$0]?.status == .live && (!inFlight.contains($0) || taggedBefore[$0] != nil) }
            guard !exported.isEmpty else { continue }
            // What the export wrote for them: the union of their X-Keywords.
            var written = Set<String>()
            var before = Set<String>()
            var read = false
            for id in exported {
                if let tags = taggedBefore[id] { before.formUnion(tags) }
                // A file the client removed has no tags to compare with (its trash comes from the Maildir).
                if case .some(.none) = baseline[id] { continue }
                // (A lookup that fails reads as none here; the run's next save throws it.)
                guard let relative = (baseline[id] ?? nil) ?? state.entries[id]?.path,
                      let file = try? layout.readPrefix(relative, count: MaildirIdentity.headerLimit) else { continue }
                let tags = MaildirNames.tagsWritten(file)
                written.formUnion(tags)
                if taggedBefore[id] == nil { before.formUnion(tags) }
                read = true
            }
            // No file to compare with: every tag would look added by the client.
            guard read else { continue }
            var actions: [TriageAction] = []
            // Added: in notmuch, given by the export neither before nor after a relabel; removed:
            // given both before and after (the same set when no relabel was in flight).
            let current = Set(message.tags.map(\.replacingCommas))
            let added = current.subtracting(written.union(before))
            let removed = written.intersection(before).subtracting(current)
            for tag in added.union(removed) {
                let added = added.contains(tag)
                if let pair = NotmuchTags.system[tag] {
                    actions.append(added ? pair.add : pair.remove)
                } else if let name = labelByTag[tag] {
                    actions.append(added ? .addLabel(name) : .removeLabel(name))
                }
            }
            guard !actions.isEmpty else { continue }
            for id in exported { result[id, default: []].append(contentsOf: actions) }
        }
        return result
    }

    /// After a batch: index the files it wrote and tag them. A guarded tagging (a message
    /// notmuch had, which a client may be changing) is applied only to a message no one
    /// changed since: not one changed since `since` (the read-back's revision; checked before
    /// `notmuch new`, whose own changes to the rewritten messages would hide it), and, in the
    /// same `notmuch tag` (which holds the database's write lock from its query to its
    /// last tag), only where `lastmod:` is at most `since` itself for a message whose file
    /// kept its name (`notmuch new` does not touch it), or else the revision taken after
    /// `notmuch new` (a change between the check and `notmuch new` is then not seen). Returns the ids left untagged, a client's change on them kept for the next read-back.
    func tagInNotmuch(_ taggings: [NotmuchTagging], since: Int64?) throws -> Set<String> {
        var left = Set<String>()
        let guarded = taggings.filter(\.guarded)
        if let since, !guarded.isEmpty {
            // A message this run tagged already (in an earlier batch) is the client's only
            // where it changed after that.
            var bySince: [Int64: [String]] = [:]
            for tagging in guarded { bySince[max(since, notmuchTaggedAt[tagging.id] ?? since), default: []].append(tagging.id) }
            for (since, ids) in bySince {
                for chunk in Self.chunks(ids) {
                    let found = try runNotmuch(["search", "--output=messages", "--", "lastmod:\(since + 1)..", "and", "("] + Self.idTerms(chunk) + [")"])
                    for line in String(decoding: found, as: UTF8.self).split(separator: "\n") where line.hasPrefix("id:") {
                        left.insert(String(line.dropFirst(3)))
                    }
                }
            }
        }
        _ = try runNotmuch(["new", "--quiet", "--no-hooks"])
        let applied = guarded.filter { !left.contains($0.id) }
        // Taken at once: the messages tagged by the batch below are not the guarded ones.
        let revision = applied.isEmpty ? 0 : try notmuchRevision().revision
        let plain = taggings.filter { !$0.guarded }
        if !plain.isEmpty {
            let lines = plain.map { NotmuchBatch.line(messageID: $0.id, tags: $0.tags, managed: $0.managed) }.joined()
            _ = try runNotmuch(["tag", "--batch"], input: Array(lines.utf8))
        }
        defer {
            if since != nil, !taggings.isEmpty, let after = try? notmuchRevision().revision {
                for tagging in taggings where !left.contains(tagging.id) { notmuchTaggedAt[tagging.id] = after }
            }
        }
        guard !applied.isEmpty else { return left }
        // One `notmuch tag` per set of changes and bound (a batch line's query can only be `id:`).
        var groups: [[String]: [String]] = [:]
        for tagging in applied {
            var bound = revision
            if let since, !tagging.renamed { bound = max(since, notmuchTaggedAt[tagging.id] ?? since) }
            let operations = tagging.tags.filter { !$0.isEmpty }.sorted().map { "+" + $0 }
                + tagging.managed.subtracting(tagging.tags).filter { !$0.isEmpty }.sorted().map { "-" + $0 }
            groups[["lastmod:..\(bound)"] + operations, default: []].append(tagging.id)
        }
        for (key, ids) in groups.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            for chunk in Self.chunks(ids) {
                _ = try runNotmuch(["tag"] + key.dropFirst() + ["--", key[0], "and", "("] + Self.idTerms(chunk) + [")"])
            }
        }
        // The messages the query left (changed after `revision`) do not have the tags set.
        var now: [String: Set<String>] = [:]
        for chunk in Self.chunks(applied.map(\.id)) {
            for message in NotmuchTags.parseDump(try runNotmuch(["dump", "--format=batch-tag", "--"] + Self.idTerms(chunk))) {
                now[message.id, default: []].formUnion(message.tags)
            }
        }
        for tagging in applied {
            // A message notmuch does not have (it did not index the file) has nothing to keep.
            guard let tags = now[tagging.id] else { continue }
            if !tagging.tags.isSubset(of: tags) || !tags.isDisjoint(with: tagging.managed.subtracting(tagging.tags)) {
                left.insert(tagging.id)
            }
        }
        return left
    }

    /// `id:"A" or id:"B" ...`, one argument per term (notmuch joins them; one long argument
    /// could pass the kernel's limit on one).
    static func idTerms(_ ids: [String]) -> [String] {
        var terms: [String] = []
        for id in ids {
            if !terms.isEmpty { terms.append("or") }
            terms.append("id:\"" + id.replacing("\"", with: "\"\"") + "\"")
        }
        return terms
    }

    /// At most 1,000 ids a command.
    static func chunks(_ ids: [String]) -> [[String]] {
        stride(from: 0, to: ids.count, by: 1000).map { Array(ids[$0..<min($0 + 1000, ids.count)]) }
    }
}

/// One message's tags for notmuch: `tags` added, every other tag of `managed` removed;
/// guarded: applied only if no one changed the message meanwhile (Exporter.tagInNotmuch).
struct NotmuchTagging {
    var id: String
    var tags: Set<String>
    var managed: Set<String>
    var guarded: Bool
    /// A file of it got a new name in this batch, which `notmuch new` indexes (a change to the message).
    var renamed = false
}

extension Exporter {
    /// Gmail ids by the id notmuch gives a message (NotmuchBatch.messageID): the store's
    /// lookup by `<id>`, then, for the ids it missed, its messages whose header notmuch reads
    /// otherwise (`(comment) <id>`, `<a b>`, no brackets), read as notmuch reads them.
    func gmailIDs(notmuchIDs ids: [String]) throws -> [String: [String]] {
        guard !ids.isEmpty else { return [:] }
        // An id of one character is never `<x>`'s: notmuch takes that header whole.
        var result = try store.exportGmailIDs(accountID: account.id, messageIDs: ids).filter { $0.key.utf8.count > 1 }
        let missed = Set(ids).subtracting(result.keys)
        guard !missed.isEmpty else { return result }
        for row in try store.exportIrregularMessageIDHeaders(accountID: account.id) {
            guard let id = NotmuchBatch.messageID(row.header), missed.contains(id) else { continue }
            result[id, default: []].append(row.gmailID)
        }
        return result
    }
}

extension MaildirNames {
    /// The tags an export wrote in a file's `X-Keywords:` header (none when it has none).
    static func tagsWritten(_ file: [UInt8]) -> Set<String> {
        let prefix = Array("X-Keywords:".utf8)
        guard file.starts(with: prefix) else { return [] }
        let stripped = strippingKeywords(file)
        let header = Array(file[..<(file.count - stripped.count)])
        let newline = newline(of: file)
        return Set(tags(inHeader: header, newline: newline).filter { !$0.isEmpty })
    }
}
