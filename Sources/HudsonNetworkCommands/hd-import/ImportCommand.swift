/*!
 `hd-import`: mail from an mbox (Google Takeout's included), a Maildir or .eml files into
 Gmail through `messages.import` (gmail-api.md §2.13), with its labels, once.

 What is read (HudsonMail's MailSourceReader): a source the user names is an mbox, one
 message, or empty, judged by its start, and otherwise refused as not mail; files are
 regular files only and a tree's symbolic links stay inside it (InputFiles). A message the
 reader marks truncated (the mbox ends inside it) or too large is reported and not sent:
 a fragment imported now would make the whole message "already imported" later.

 Per message, in source order:
 1. its key: the Message-ID, or `sha256:` and the digest of its bytes (line ends as LF) when it
    has no Message-ID `rfc822msgid:` can search for. A key seen before in this run is a
    duplicate and skipped; so is a message whose Message-ID the store holds (it is in Gmail
    already) or whose key the import record (`imports`, migration 019) says is imported.
 2. its identity at Gmail: a message with no Message-ID field gets one, made from its digest
    (ImportLabels.addedMessageID), as the outbox gives a message it sends: without it, an
    import whose answer was lost could never be looked for. Nothing else is added or changed.
 3. its labels (HudsonMail's ImportLabels, plus `--label`): a user label name must keep the one
    rule of what a label may hold (LabelNameRule), else the message is refused with the name
    shown escaped; user labels are found by name in Gmail's label list (case-insensitively,
    as Gmail compares them), created when missing.
 4. a record left `sending` by an earlier run (a lost answer, a kill) is looked for first, by
    HudsonSync's MessageProbe, after Gmail's search has had 5 s since that attempt began (the
    outbox's settle time, docs/architecture.md): `rfc822msgid:<id> in:anywhere`, then the
    messages history shows added since the history id taken before the attempt (migration
    026), compared by Message-ID. Found: recorded as imported, nothing is sent. Not found: sent
    again. A record an older hd-import left `sending` for a message without a Message-ID
    cannot be looked for, and is not sent again (reported as unknown): nothing that may have
    reached Gmail is treated as unsent.
 5. the record is marked `sending` durably, then messages.import goes out once (the client
    repeats it only after a 429, which means Gmail did not act). An answer makes it imported;
    a refusal (400, 404: Gmail did not store it) makes it failed and the import goes on; any
    other failure leaves it `sending`, and after the last message those are looked for and
    sent again, up to three rounds. Five such failures in a row stop the run (the network or
    Gmail is down): exit 75, and running the same command again carries on.
 Nothing here writes the mail into the store: the next hd-sync brings the imported messages
 (as messagesAdded in history), so the store has one writer of canonical mail.
 */
import Foundation
import Glibc
import HudsonCLI
import HudsonGmail
import HudsonMail
import HudsonOutput
import HudsonStore
import HudsonSync

@MainActor
public enum ImportCommand {
    struct Counts {
        var read = 0
        var imported = 0
        var found = 0
        var alreadyImported = 0
        var inStore = 0
        var duplicates = 0
        var failed = 0
        var truncated = 0
        var unknown = 0
    }

    /// A message whose import's outcome is not known yet in this run.
    struct Pending {
        var key: String
        var message: SourceMessage
        /// The message as it goes to Gmail: as read, or with the Message-ID Hudson added.
        var raw: [UInt8]
        /// The Message-ID the message carries to Gmail (written or added): what the probe
        /// looks for.
        var messageID: String?
        var labelIDs: [String]
    }

    enum Outcome {
        case imported(String)
        case found(String)
        case refused(String)
        case uncertain(String)
        case cannotTell
        /// The user said Gmail has it (`--settle-unknown in-gmail`).
        case settled
    }

    /// Gmail's search may not show a message stored a moment ago (the outbox's probe waits as long).
    static let settleMilliseconds: Int64 = 5_000
    static let maximumUncertainInARow = 5
    /// Gmail's history id is taken again after this many attempts, so a probe reads history
    /// from shortly before the attempt, not from the start of a long run.
    static let attemptsPerHistoryID = 100

    public static func run(_ cli: Invocation) async throws -> ExitStatus {
        let sources = cli.arguments.operands
        if sources.filter({ $0 == "-" }).count > 1 { throw UsageError("standard input (-) can be read once") }
        if sources.contains("-") && isatty(0) == 1 {
            throw UsageError("- reads an mbox or a message from standard input, which is a terminal")
        }
        var extraSystem: [String] = []
        var extraUser: [String] = []
        for name in cli.arguments.strings("label") {
            switch ImportLabels.meaning(of: name) {
            case .system(let id): extraSystem.append(id)
            case .user(let label):
                if let problem = LabelNameRule.problem(label) {
                    throw UsageError("--label \(TerminalSafety.quoted(name)): \(problem)")
                }
                extraUser.append(label)
            case .ignored: throw UsageError("--label \(TerminalSafety.quoted(name)): not a label Gmail lets an import set")
            }
        }
        let options = ImportOptions(dateFromHeader: !cli.arguments.flag("received-time"),
                                    neverMarkSpam: cli.arguments.flag("never-spam"),
                                    processForCalendar: cli.arguments.flag("calendar"))
        let dryRun = cli.arguments.flag("dry-run")
        // The user's answer for records no probe can decide (Imports.swift: `settled`).
        let settle: Bool? = switch cli.arguments.string("settle-unknown") {
        case nil: nil
        case "in-gmail": true
        case "not-in-gmail": false
        case let other?: throw UsageError("--settle-unknown: \(TerminalSafety.quoted(other)): in-gmail or not-in-gmail")
        }
        let store = try cli.openStore(dryRun ? .readOnly : .readWrite)
        let account = try DraftsCommand.account(cli, store)
        let reader = MailSourceReader(paths: sources)
        let progress = ImportProgress(enabled: Terminal.stderrIsTerminal || cli.arguments.flag("verbose"),
                                      verbose: cli.arguments.flag("verbose"))
        var counts = Counts()
        var seen = Set<String>()
        var problems: [String] = []
        /// Sources refused as not mail (or not files): with nothing read, the run is bad data (65).
        var refusedSources = 0
        /// Gmail's history id before the next attempt (MessageProbe reads history from there).
        var historyID: Int64?
        var attemptsSinceHistoryID = 0

        // The labels Gmail has, by lowercased name (the store's copy for a dry run: no network).
        var labelIDs: [String: String] = [:]
        var access: GmailAccess?
        var importLock: ImportLock?
        defer { withExtendedLifetime(importLock) {} }
        if dryRun {
            for label in try store.labels(accountID: account.id) { labelIDs[lowered(label.name ?? label.id)] = label.id }
        } else {
            // Two imports of one account at once could each find the other's message not yet
            // in Gmail and send it again; the second waits for nothing and says so.
            guard let lock = try ImportLock(storePath: try cli.storePath(), email: account.email) else {
                throw CommandFailure(.temporaryFailure, "another hd-import of \(account.email) is running; run this one when it ends")
            }
            importLock = lock
            let made = try GmailAccess(email: account.email, configDirectory: try cli.configDirectory(),
                                       endpoints: try GmailEndpoints(environment: cli.environment), patience: .unattended)
            access = made
            for label in try await made.background.listLabels() { labelIDs[lowered(label.name ?? label.id)] = label.id }
            historyID = try await currentHistoryID(made.background)
        }
        // --json: one `import` record per message read (docs/json.md).
        let sink: (any Sink)? = cli.arguments.flag("json") ? cli.makeSink() : nil
        func record(_ origin: String, _ status: String, messageID: String?, gmailID: String? = nil,
                    labels: [String] = [], error: String? = nil) throws {
            try sink?.emit(Records.importRecord(origin: origin, status: status, messageID: messageID, gmailID: gmailID,
                                                labels: labels, error: error))
        }
        var toCreate: [String] = []
        var refusedLabels: [String: String] = [:]
        var pending: [Pending] = []
        var uncertainInARow = 0
        var stopped: String?
        let crash = CrashPoints(environment: cli.environment)

        /// The next message: `.some(nil)` for a source that could not be read (reported, and
        /// the reader goes on after it), nil after the last.
        func nextMessage() -> SourceMessage?? {
            do {
                guard let message = try reader.next() else { return nil }
                return .some(message)
            } catch {
                counts.failed += 1
                let source = error as? MailSourceError
                if let source, source.kind != .unreadable { refusedSources += 1 }
                problems.append(source.map { "\(shown($0.path)): \($0.reason)" } ?? "\(error)")
                try? record(source?.path ?? "", "unreadable", messageID: nil, error: source?.reason ?? "\(error)")
                return .some(nil)
            }
        }

        while stopped == nil, let next = nextMessage() {
            guard let message = next else { continue }
            counts.read += 1
            progress.update(counts)
            if let defect = message.defect {
                // Not sent: a fragment imported now would make the whole message "already
                // imported" when the complete file is imported later.
                let messageID = message.raw.isEmpty ? nil : ImportLabels.metadata(of: message.raw, maildirFlags: nil).writtenMessageID
                if case .truncated = defect { counts.truncated += 1 } else { counts.failed += 1 }
                problems.append("\(shown(message.origin)): \(messageID.map { shown($0) + ": " } ?? "")\(defect); not imported"
                                + (defect == .tooLarge ? "" : " (import the whole file again to bring it)"))
                try record(message.origin, defect == .tooLarge ? "unreadable" : "truncated", messageID: messageID,
                           error: defect.description)
                continue
            }
            let metadata = ImportLabels.metadata(of: message.raw, maildirFlags: message.maildirFlags)
            let digest = hex(SHA256.hash(lineFeeds(message.raw)))
            let key = metadata.messageID ?? "sha256:" + digest
            guard seen.insert(key).inserted else {
                counts.duplicates += 1
                try record(message.origin, "duplicate", messageID: metadata.messageID)
                continue
            }
            // What goes to Gmail, and the Message-ID it carries there (see step 2 above).
            var raw = message.raw
            var carriedID = metadata.writtenMessageID
            if carriedID == nil {
                // 128 bits of the digest: unique enough, and the field stays one short line.
                let added = ImportLabels.addedMessageID(digestHex: String(digest.prefix(32)))
                raw = ImportLabels.addingMessageID(added, to: raw)
                carriedID = added
            }
            let previous = try store.importRecord(accountID: account.id, sourceKey: key)
            if previous?.state == .imported || previous?.state == .settled {
                counts.alreadyImported += 1
                try record(message.origin, "already_imported", messageID: carriedID, gmailID: previous?.gmailID)
                continue
            }
            if previous?.state != .sending, let id = metadata.messageID ?? (metadata.writtenMessageID == nil ? carriedID : nil),
               try store.holdsMessage(messageID: id, accountID: account.id) {
                counts.inStore += 1
                try record(message.origin, "in_gmail", messageID: id)
                continue
            }
            let userNames = unique(metadata.userLabels + extraUser)
            // The one rule of what a label name may hold: a name from the mail that breaks it
            // is not sent to Gmail, and neither is the message (nothing dropped without a word).
            if let bad = userNames.first(where: { LabelNameRule.problem($0) != nil }) {
                let problem = "label \(shown(bad)): \(LabelNameRule.problem(bad) ?? "")"
                counts.failed += 1
                problems.append("\(shown(message.origin)): \(problem); not imported")
                try record(message.origin, "refused", messageID: carriedID, error: problem)
                continue
            }
            if dryRun {
                for name in userNames where labelIDs[lowered(name)] == nil && !toCreate.contains(where: { lowered($0) == lowered(name) }) {
                    toCreate.append(name)
                }
                counts.imported += 1
                try record(message.origin, "would_import", messageID: carriedID,
                           labels: unique(metadata.systemLabels + extraSystem) + userNames)
                continue
            }
            guard let access else { break }
            // User labels by id, created when Gmail has none of that name.
            var ids = unique(metadata.systemLabels + extraSystem)
            var labelProblem: String?
            for name in userNames {
                if let id = labelIDs[lowered(name)] {
                    ids.append(id)
                } else if let refusal = refusedLabels[lowered(name)] {
                    labelProblem = refusal
                } else {
                    do {
                        let id = try await createLabel(name, client: access.background)
                        labelIDs[lowered(name)] = id
                        ids.append(id)
                    } catch let error as GmailError where !error.isRetryable && !error.isAccountWide {
                        let refusal = "label \(shown(name)): \(error)"
                        refusedLabels[lowered(name)] = refusal
                        labelProblem = refusal
                    }
                }
            }
            if let labelProblem {
                counts.failed += 1
                problems.append("\(shown(message.origin)): \(labelProblem)")
                try record(message.origin, "refused", messageID: carriedID, error: labelProblem)
                continue
            }
            if attemptsSinceHistoryID >= attemptsPerHistoryID {
                // An older id stays valid (history from further back), so a failure keeps it.
                if let fresh = try? await currentHistoryID(access.background) { historyID = fresh }
                attemptsSinceHistoryID = 0
            }
            attemptsSinceHistoryID += 1
            let item = Pending(key: key, message: message, raw: raw, messageID: carriedID, labelIDs: unique(ids))
            let outcome = try await attempt(item, record: previous, store: store, accountID: account.id,
                                            client: access.background, options: options, historyID: historyID, crash: crash,
                                            settle: settle)
            switch outcome {
            case .uncertain(let reason):
                uncertainInARow += 1
                pending.append(item)
                if uncertainInARow >= maximumUncertainInARow { stopped = reason }
            default:
                uncertainInARow = 0
                tally(outcome, item, &counts, &problems)
                try emit(outcome, item, record)
            }
            progress.update(counts)
        }

        // What this run could not settle: looked for, then sent again, a few rounds.
        var round = 0
        while stopped == nil, !pending.isEmpty, round < 3, let access {
            round += 1
            var still: [Pending] = []
            for item in pending {
                let current = try store.importRecord(accountID: account.id, sourceKey: item.key)
                let outcome = try await attempt(item, record: current, store: store, accountID: account.id,
                                                client: access.background, options: options, historyID: historyID, crash: crash,
                                                settle: settle)
                if case .uncertain = outcome {
                    still.append(item)
                } else {
                    tally(outcome, item, &counts, &problems)
                    try emit(outcome, item, record)
                }
            }
            pending = still
        }
        for item in pending {
            counts.unknown += 1
            let reason = (try? store.importRecord(accountID: account.id, sourceKey: item.key))??.lastError ?? "no answer"
            problems.append("\(shown(item.message.origin)): \(item.messageID.map(shown) ?? "(no Message-ID)"): not known to be imported (\(reason)); run again to finish")
            try record(item.message.origin, "unknown", messageID: item.messageID, labels: item.labelIDs, error: reason)
        }
        try sink?.finish()
        progress.finish()

        // Every source refused and nothing read: the input is not mail (one line each, no
        // summary of nothing).
        if counts.read == 0 && refusedSources > 0 && refusedSources == problems.count, let last = problems.last {
            for problem in problems.dropLast() { cli.warn(TerminalSafety.field(problem)) }
            throw CommandFailure(.dataError, TerminalSafety.field(last))
        }
        for problem in problems { cli.warn(TerminalSafety.field(problem)) }
        report(cli, counts, dryRun: dryRun, toCreate: toCreate)
        if let stopped {
            throw CommandFailure(.temporaryFailure, "stopped after \(maximumUncertainInARow) failures in a row (\(stopped)); run the same command again to carry on: nothing is imported twice")
        }
        if counts.unknown > 0 { return .temporaryFailure }
        return counts.failed + counts.truncated > 0 ? .partialFailure : .success
    }

    /// The mailbox's current history id (getProfile, 1 unit): history read from it shows
    /// every message stored after. Nil when Gmail's answer has none that reads.
    static func currentHistoryID(_ client: GmailClient) async throws -> Int64? {
        try await client.getProfile().historyId.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Text from a file name or a message, for a diagnostic: unsafe characters escaped
    /// visibly, long text cut (TerminalSafety.quoted).
    static func shown(_ text: String) -> String {
        TerminalSafety.quoted(text, limit: 200)
    }

    // MARK: - One message

    /// Looks for a message that may be in Gmail already, then imports it unless found.
    /// `settle`: the user's answer (`--settle-unknown`) for a record no probe can decide:
    /// true, Gmail has it (settled, never sent again); false, it does not (imported now).
    static func attempt(_ item: Pending, record: ImportRecord?, store: Store, accountID: Int64,
                        client: GmailClient, options: ImportOptions, historyID: Int64?, crash: CrashPoints,
                        settle: Bool? = nil) async throws -> Outcome {
        var probed: Outcome?
        if let record, record.state == .sending {
            if try await !probe(item, record: record, store: store, accountID: accountID, client: client, outcome: &probed),
               let settle {
                // No probe can decide; the user has: Gmail has it, or it is imported now.
                try store.settleImport(accountID: accountID, sourceKey: item.key, inGmail: settle)
                if settle { return .settled }
            } else if let probed {
                return probed
            }
        }
        guard try store.beginImport(accountID: accountID, sourceKey: item.key, messageID: item.messageID,
                                    origin: item.message.origin, historyID: historyID) else {
            // Imported meanwhile (another hd-import of the same mail).
            return .found(try store.importRecord(accountID: accountID, sourceKey: item.key)?.gmailID ?? "")
        }
        crash.reach("import-sending")
        do {
            let stored = try await client.importMessage(raw: item.raw, labelIDs: item.labelIDs, options: options)
            crash.reach("import-answered")
            guard !stored.id.isEmpty else { throw GmailError.invalidResponse("messages.import answered without an id") }
            try store.markImported(accountID: accountID, sourceKey: item.key, gmailID: stored.id)
            return .imported(stored.id)
        } catch let error as GmailError where error.isAccountWide {
            throw error
        } catch let error as GmailError where error.isRefusal {
            try store.markImportFailed(accountID: accountID, sourceKey: item.key, reason: "\(error)")
            return .refused("\(error)")
        } catch let error as GmailError {
            try store.noteImportUncertain(accountID: accountID, sourceKey: item.key, reason: "\(error)")
            return .uncertain("\(error)")
        }
    }

    /// Looks for a record an earlier attempt left `sending`. Returns false when nothing can
    /// decide it (`outcome` is then `.cannotTell`); true otherwise, with `outcome` set when
    /// the probe settled it (found, or could not be asked) and nil when Gmail does not have
    /// it, so it is imported again.
    static func probe(_ item: Pending, record: ImportRecord, store: Store, accountID: Int64, client: GmailClient,
                      outcome: inout Outcome?) async throws -> Bool {
        // An attempt by an older hd-import of a message without a Message-ID carried none,
        // and cannot be looked for.
        guard let messageID = record.messageID else {
            outcome = .cannotTell
            return false
        }
        let wait = (record.attemptStartedAt ?? 0) + settleMilliseconds - store.now
        if wait > 0 { try await Task.sleep(nanoseconds: UInt64(min(wait, settleMilliseconds)) * 1_000_000) }
        do {
            switch try await MessageProbe.find(messageID: messageID, since: record.attemptHistoryID,
                                               excluding: try store.importedGmailIDs(accountID: accountID), api: client) {
            case .found(let id, _):
                try store.markImported(accountID: accountID, sourceKey: item.key, gmailID: id)
                outcome = .found(id)
            case .cannotLook:
                outcome = .cannotTell
                return false
            case .notFound:
                outcome = nil
            }
        } catch let error as GmailError where !error.isAccountWide {
            // Without an answer to "is it there?", nothing is sent.
            try store.noteImportUncertain(accountID: accountID, sourceKey: item.key, reason: "looking for it: \(error)")
            outcome = .uncertain("looking for it: \(error)")
        }
        return true
    }

    /// The `import` record of a message's outcome.
    static func emit(_ outcome: Outcome, _ item: Pending,
                     _ record: (String, String, String?, String?, [String], String?) throws -> Void) throws {
        let origin = item.message.origin
        switch outcome {
        case .imported(let id): try record(origin, "imported", item.messageID, id, item.labelIDs, nil)
        case .found(let id): try record(origin, "found", item.messageID, id.isEmpty ? nil : id, item.labelIDs, nil)
        case .refused(let reason): try record(origin, "refused", item.messageID, nil, item.labelIDs, reason)
        case .cannotTell:
            try record(origin, "unknown", item.messageID, nil, item.labelIDs,
                       "an earlier attempt may have imported it, and it cannot be looked for")
        case .settled:
            try record(origin, "already_imported", item.messageID, nil, item.labelIDs, "settled by the user: in Gmail")
        case .uncertain(let reason): try record(origin, "unknown", item.messageID, nil, item.labelIDs, reason)
        }
    }

    static func tally(_ outcome: Outcome, _ item: Pending, _ counts: inout Counts, _ problems: inout [String]) {
        switch outcome {
        case .imported: counts.imported += 1
        case .found: counts.found += 1
        case .refused(let reason):
            counts.failed += 1
            problems.append("\(shown(item.message.origin)): \(item.messageID.map(shown) ?? "(no Message-ID)"): refused: \(reason)")
        case .cannotTell:
            counts.unknown += 1
            problems.append("\(shown(item.message.origin)): an earlier attempt may have imported it, and Gmail cannot be asked for it (no Message-ID its search takes, and no history back to that attempt); not sent again: check Gmail, then run again with --settle-unknown in-gmail or not-in-gmail")
        case .settled:
            counts.alreadyImported += 1
        case .uncertain(let reason):
            counts.unknown += 1
            problems.append("\(shown(item.message.origin)): not known to be imported (\(reason))")
        }
    }


    /// `labels.create`; a name Gmail already has (409, or 400 by some reports, gmail-api.md
    /// §2.10) is found in labels.list instead, as LabelFlusher does.
    static func createLabel(_ name: String, client: GmailClient) async throws -> String {
        do {
            return try await client.createLabel(name: name).id
        } catch let error as GmailError where !error.isRetryable {
            if let existing = try await client.listLabels().first(where: { lowered($0.name ?? $0.id) == lowered(name) }) {
                return existing.id
            }
            throw error
        }
    }

    // MARK: - Output

    static func report(_ cli: Invocation, _ counts: Counts, dryRun: Bool, toCreate: [String]) {
        if dryRun {
            cli.warn("dry run: \(counts.read) read; would import \(counts.imported); already imported \(counts.alreadyImported), already in Gmail \(counts.inStore), duplicates \(counts.duplicates), unreadable \(counts.failed)"
                     + (counts.truncated > 0 ? ", truncated \(counts.truncated)" : ""))
            // One label one field (Records.labelText): "Trips, 2019" is not two labels.
            if !toCreate.isEmpty { cli.warn("dry run: would create labels: " + Records.labelList(toCreate, separator: ", ")) }
            return
        }
        var parts = ["imported \(counts.imported + counts.found)"]
        if counts.found > 0 { parts[0] += " (\(counts.found) found in Gmail from an interrupted run)" }
        parts.append("already imported \(counts.alreadyImported)")
        parts.append("already in Gmail \(counts.inStore)")
        parts.append("duplicates \(counts.duplicates)")
        parts.append("failed \(counts.failed)")
        if counts.truncated > 0 { parts.append("truncated \(counts.truncated)") }
        if counts.unknown > 0 { parts.append("unknown \(counts.unknown)") }
        cli.warn("\(counts.read) read: " + parts.joined(separator: ", ") + (counts.imported + counts.found > 0 ? "; hd-sync brings them into the store" : ""))
    }

    // MARK: - Helpers

    static func lowered(_ text: String) -> String { text.lowercased() }

    static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert(lowered($0)).inserted }
    }

    /// The bytes with CRLF as LF: the same message from an mbox and from a Maildir file has one key.
    static func lineFeeds(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            if raw[index] == 13 && index + 1 < raw.count && raw[index + 1] == 10 { index += 1; continue }
            out.append(raw[index])
            index += 1
        }
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// One hd-import per account at a time: an exclusive `flock` on `<store>.import-<email>.lock`,
/// taken without waiting and dropped by the kernel when the process ends (as SendLock).
final class ImportLock {
    private let file: LockFile

    /// Takes the import lock of `email` (LockFile: a regular file, no link followed), or
    /// returns nil when another process holds it.
    init?(storePath: String, email: String) throws {
        guard let file = try LockFile(path: LockFile.path(storePath: storePath, email: email, purpose: "import")) else { return nil }
        self.file = file
    }
}

/// The reliability suite's seam (TestHooks): `HUDSON_TEST_CRASH_AT=import-sending` or
/// `import-answered`, with `:N` for the N-th time (default the first), kills the process
/// there as `kill -9` would: after the record says `sending` and before the request, or after
/// Gmail answered and before the answer is recorded.
final class CrashPoints: @unchecked Sendable {
    private let point: String?
    private let at: Int
    private var reached = 0

    init(environment: [String: String]) {
        guard let text = TestHooks.crashPoint(environment: environment) else {
            point = nil
            at = 0
            return
        }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        point = parts[0]
        at = parts.count > 1 ? max(1, Int(parts[1]) ?? 1) : 1
    }

    func reach(_ name: String) {
        guard name == point else { return }
        reached += 1
        if reached == at { TestHooks.crash() }
    }
}

/// Progress on standard error: one line rewritten on a terminal, a line per update with
/// --verbose, nothing in a pipe (CONTRACT.md "Output").
@MainActor
final class ImportProgress {
    let enabled: Bool
    let verbose: Bool
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var shown = false

    init(enabled: Bool, verbose: Bool) {
        self.enabled = enabled
        self.verbose = verbose && !Terminal.stderrIsTerminal
    }

    func update(_ counts: ImportCommand.Counts) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= (verbose ? 1 : 0.25) else { return }
        lastDraw = now
        shown = true
        let rate = Double(counts.imported + counts.found) / max(0.001, now.timeIntervalSince(started))
        let line = "read \(counts.read) · imported \(counts.imported + counts.found) · skipped \(counts.alreadyImported + counts.inStore + counts.duplicates) · failed \(counts.failed) · \(Int(rate)) msg/s"
        if verbose {
            writeError("hd-import: \(line)\n")
        } else {
            writeTerminalControl("\r\u{1B}[K" + TerminalSafety.field(line))
        }
    }

    func finish() {
        if shown && !verbose { writeTerminalControl("\r\u{1B}[K") }
        shown = false
    }
}
