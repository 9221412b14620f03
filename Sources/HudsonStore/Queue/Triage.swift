/*!
 Triage: `hd-mark`'s actions turned into queue deltas, in one transaction per
 invocation, and undo. Thread-level actions touch every message of the thread that
 needs the change — archiving only the newest message of a thread would leave it in
 the inbox, because `in_inbox` is true while any message carries INBOX
 (optimistic-mutations.md, "Thread-level vs message-level"). Star, unstar and unread
 touch the newest message only (CONTRACT.md, "Ids and input"). Nothing is queued
 when the effective labels already satisfy the action (notmuch's `_optimize_tag_query`).
 */
import GmailIDShape
import SQLite

/// One `hd-mark` action.
public enum TriageAction: Hashable, Sendable, CustomStringConvertible {
    case archive, unarchive, read, unread, star, unstar
    case trash, untrash, spam, unspam, important, unimportant
    /// `+NAME`: add the label with this name (or id).
    case addLabel(String)
    /// `-NAME`: remove the label with this name (or id).
    case removeLabel(String)

    public init?(parsing text: String) {
        if let named = Self.named.first(where: { $0.description == text }) {
            self = named
        } else if text.count > 1, text.hasPrefix("+") {
            self = .addLabel(String(text.dropFirst()))
        } else if text.count > 1, text.hasPrefix("-") {
            self = .removeLabel(String(text.dropFirst()))
        } else {
            return nil
        }
    }

    /// Every action with a name of its own, in the order help lists them.
    static let named: [TriageAction] = [
        .archive, .unarchive, .read, .unread, .star, .unstar,
        .trash, .untrash, .spam, .unspam, .important, .unimportant,
    ]

    public static let names = named.map(\.description)

    /// The action as one `hd-mark` argument (`+Travel 2026`), what JSON output gives.
    public var argument: String {
        switch self {
        case .addLabel(let name): return "+\(name)"
        case .removeLabel(let name): return "-\(name)"
        default: return description
        }
    }

    /// The action as text shows it, one of several separated by blanks.
    public var description: String {
        switch self {
        case .archive: return "archive"
        case .unarchive: return "unarchive"
        case .read: return "read"
        case .unread: return "unread"
        case .star: return "star"
        case .unstar: return "unstar"
        case .trash: return "trash"
        case .untrash: return "untrash"
        case .spam: return "spam"
        case .unspam: return "unspam"
        case .important: return "important"
        case .unimportant: return "unimportant"
        // Quoted where blanks or commas would split it (LabelNameRule.field): `+"Travel 2026"`,
        // as the rules file writes it, so a recorded action reads as the actions it was.
        case .addLabel(let name): return "+" + LabelNameRule.field(name, quotingSpaces: true)
        case .removeLabel(let name): return "-" + LabelNameRule.field(name, quotingSpaces: true)
        }
    }

    /// Whether, on a thread reference, the members it changes depend on which are in
    /// trash or spam (`Store.members(_:of:)`).
    var choosesMembersByLocation: Bool {
        switch self {
        case .star, .unstar, .unread, .unarchive: return true
        default: return false
        }
    }

    /// On a thread reference: every message that needs the change, or the newest only.
    var appliesToWholeThread: Bool {
        switch self {
        case .star, .unstar, .unread: return false
        default: return true
        }
    }

    /// One label change of an action.
    struct Step {
        /// The system label it changes; nil for the action's user-named label.
        var systemLabel: String?
        var op: LabelOp
        /// When set, only the messages the step at this index changed get this one.
        var onlyWhereStepChanged: Int? = nil
    }

    /// The label changes, in order. A message is in at most one of inbox, spam and trash
    /// (Gmail's locations; gmail-api.md §6 `in:`): moving it into one (unarchive, trash,
    /// spam) takes it out of the other two, so `hd-undo` restores exactly where it was
    /// whatever the server does with INBOX on a trash (§2.8 says only "Trash adds
    /// TRASH"). untrash and unspam put in the inbox only the messages that were in trash
    /// or spam, as Gmail's "Move to Inbox" and "Not spam" do. No action touches any
    /// other label.
    var steps: [Step] {
        switch self {
        case .archive: return [Step(systemLabel: "INBOX", op: .remove)]
        case .unarchive:
            return [Step(systemLabel: "INBOX", op: .add), Step(systemLabel: "TRASH", op: .remove),
                    Step(systemLabel: "SPAM", op: .remove)]
        case .read: return [Step(systemLabel: "UNREAD", op: .remove)]
        case .unread: return [Step(systemLabel: "UNREAD", op: .add)]
        case .star: return [Step(systemLabel: "STARRED", op: .add)]
        case .unstar: return [Step(systemLabel: "STARRED", op: .remove)]
        case .trash:
            return [Step(systemLabel: "TRASH", op: .add), Step(systemLabel: "INBOX", op: .remove),
                    Step(systemLabel: "SPAM", op: .remove)]
        case .untrash:
            return [Step(systemLabel: "TRASH", op: .remove), Step(systemLabel: "INBOX", op: .add, onlyWhereStepChanged: 0)]
        case .spam:
            return [Step(systemLabel: "SPAM", op: .add), Step(systemLabel: "INBOX", op: .remove),
                    Step(systemLabel: "TRASH", op: .remove)]
        case .unspam:
            return [Step(systemLabel: "SPAM", op: .remove), Step(systemLabel: "INBOX", op: .add, onlyWhereStepChanged: 0)]
        case .important: return [Step(systemLabel: "IMPORTANT", op: .add)]
        case .unimportant: return [Step(systemLabel: "IMPORTANT", op: .remove)]
        case .addLabel: return [Step(systemLabel: nil, op: .add)]
        case .removeLabel: return [Step(systemLabel: nil, op: .remove)]
        }
    }

    public var labelName: String? {
        switch self {
        case .addLabel(let name), .removeLabel(let name): return name
        default: return nil
        }
    }
}

/// One delta an invocation queued (or would queue, in a dry run).
public struct TriageDelta: Equatable, Sendable {
    public var accountID: Int64
    public var messageID: String
    public var threadID: String
    public var label: String
    public var op: LabelOp
    public var outcome: EnqueueOutcome
    /// The message's store key.
    var messageKey: Int64
}

/// Actions and the references they apply to: one part of a grouped `perform`.
public struct TriageGroup: Equatable, Sendable {
    public var actions: [TriageAction]
    public var references: [Reference]

    public init(actions: [TriageAction], references: [Reference]) {
        self.actions = actions
        self.references = references
    }
}

public struct TriageResult: Equatable, Sendable {
    /// The recorded action, for undo; nil when nothing needed to change (or a dry run).
    public var actionID: Int64?
    public var deltas: [TriageDelta] = []
    /// References the store does not have (in the given account, if one was given).
    public var unknownReferences: [Reference] = []
    /// Threads whose snooze the action set or moved (Snoozes.swift): changes with no delta.
    public var snoozesSet = 0

    /// How many threads the changes are on.
    public var threadCount: Int {
        Set(deltas.map { ThreadKey(accountID: $0.accountID, threadID: $0.threadID) }).count
    }
}

public struct UndoResult: Equatable, Sendable {
    /// The action undone (or found already undone).
    public var actionID: Int64
    /// The undo's own action id; nil when there was nothing to do.
    public var undoActionID: Int64?
    public var alreadyUndone: Bool
    public var deltas: [TriageDelta] = []
    /// Snoozes put back as they were before the action (Snoozes.swift, `restoreSnoozes`).
    public var snoozesRestored = 0
}

extension Store {
    /// Applies `actions` to every reference in one write transaction and records one
    /// action for undo. An unknown label name throws before anything is queued, unless
    /// `createLabels`: then a `+NAME` that names no label creates it (a provisional label,
    /// LabelObjects.swift) in the same transaction. With `dryRun`, reports what would be
    /// queued and writes nothing: the same work runs in a transaction that is rolled back,
    /// so a later action sees what an earlier one queued exactly as in a real run.
    @discardableResult
    public func perform(
        _ actions: [TriageAction], on references: [Reference], accountID: Int64? = nil, dryRun: Bool = false,
        createLabels: Bool = false, held: Bool = false, origin: ActionOrigin? = nil
    ) throws -> TriageResult {
        try perform(groups: [TriageGroup(actions: actions, references: references)],
                    description: actions.map(\.description).joined(separator: " "),
                    accountID: accountID, dryRun: dryRun, createLabels: createLabels, held: held, origin: origin)
    }

    /// Several groups of actions, each on its own references (the rules of `hd-filters`,
    /// one group per rule), as ONE recorded action: one transaction, one `hd-undo`. The
    /// groups run in order, so a later one sees what an earlier one queued. `held`: the
    /// changes are held for the user's approval (HeldChanges.swift); `origin`: who asked.
    @discardableResult
    public func perform(
        groups: [TriageGroup], description: String, accountID: Int64? = nil, dryRun: Bool = false,
        createLabels: Bool = false, held: Bool = false, origin: ActionOrigin? = nil
    ) throws -> TriageResult {
        let work = { () throws -> TriageResult in
            try self.writeTrackingLabels { touched in
                var result = TriageResult()
                let actionID = try self.insertAction(description: description, origin: origin, held: held)
                var recorded = Set<ActionItem>()
                var labelCache: [String: String] = [:]
                for group in groups where !group.references.isEmpty {
                    let (actions, references) = (group.actions, group.references)
                    let resolved = try self.resolve(
                        references, accountID: accountID, locating: actions.contains(where: \.choosesMembersByLocation))
                    for (reference, targets) in zip(references, resolved) where targets.isEmpty {
                        result.unknownReferences.append(reference)
                    }
                    // One batch per step of each action, in the order given: a later one sees
                    // what an earlier one queued (`+x -x` nets out, as one change after another
                    // would).
                    for action in actions {
                        var changedByStep: [Set<Int64>] = []
                        for step in action.steps {
                            var changes: [LabelChange] = []
                            // After a step on every member of a thread, every member has the label
                            // or none does: the rollup need not count them again.
                            var wholeThreads: [ThreadKey: Int] = [:]
                            for (reference, targets) in zip(references, resolved) {
                                let threads = Self.threads(of: targets)
                                for thread in threads {
                                    let label = try self.resolveLabel(
                                        step.systemLabel, named: action.labelName, accountID: thread.accountID, cache: &labelCache,
                                        creating: createLabels && step.op == .add)
                                    let all = threads.count == 1
                                        ? targets
                                        : targets.filter { $0.accountID == thread.accountID && $0.threadID == thread.threadID }
                                    var members = all
                                    if case .thread = reference {
                                        members = Self.members(all, of: action)
                                        if step.onlyWhereStepChanged == nil && members.count == all.count && action.appliesToWholeThread {
                                            wholeThreads[thread] = step.op == .add ? members.count : 0
                                        }
                                    }
                                    if let earlier = step.onlyWhereStepChanged {
                                        members = members.filter { changedByStep[earlier].contains($0.key) }
                                    }
                                    for member in members {
                                        changes.append(LabelChange(target: member, label: label, op: step.op))
                                    }
                                }
                            }
                            let deltas = try self.queueDeltas(changes, actionID: actionID, recorded: &recorded, held: held)
                            changedByStep.append(Set(deltas.map(\.messageKey)))
                            var previous: TriageDelta?
                            for delta in deltas {
                                // A thread's deltas of a step come together and say the same
                                // thing of it: one touch per thread.
                                if let previous, previous.threadID == delta.threadID, previous.accountID == delta.accountID,
                                   previous.label == delta.label { continue }
                                previous = delta
                                let thread = ThreadKey(accountID: delta.accountID, threadID: delta.threadID)
                                touched.insert(thread, label: delta.label, carriers: wholeThreads[thread])
                            }
                            result.deltas += deltas
                        }
                    }
                }
                // An action whose changes all cancelled one another (`trash untrash`) leaves
                // nothing to undo and is not recorded.
                if recorded.isEmpty {
                    try self.db.execute("DELETE FROM actions WHERE id = ?", actionID)
                } else {
                    result.actionID = actionID
                    try self.forgetOldActions()
                }
                return result
            }
        }
        if dryRun {
            // Run the same work inside a transaction that is always rolled back.
            var planned: TriageResult?
            do {
                _ = try db.write { () throws -> Int in
                    planned = try work()
                    throw DryRunRollback()
                }
            } catch is DryRunRollback {}
            planned?.actionID = nil
            return planned ?? TriageResult()
        }
        return try work()
    }

    /// The members of a thread an action named by the thread changes (newest first). Star,
    /// unstar and unread: the newest message, the newest outside trash and spam when there
    /// is one (the one the thread is listed by). Unarchive: the members outside trash and
    /// spam, unless every member is there (a thread wholly in trash comes back whole; a
    /// message trashed on purpose in a thread that is elsewhere stays in the trash, as
    /// Gmail's conversation actions outside the Trash view leave it). Every other action:
    /// every member.
    private static func members(_ all: [TriageTarget], of action: TriageAction) -> [TriageTarget] {
        let listed = all.filter { !$0.inTrashOrSpam }
        switch action {
        case .star, .unstar, .unread:
            return Array((listed.first ?? all.first).map { [$0] } ?? [])
        case .unarchive:
            return listed.isEmpty ? all : listed
        default:
            return all
        }
    }

    /// Undoes an action (the most recent one when `actionID` is nil) by queueing the
    /// inverse of each delta it queued. The collision table does the rest: a delta still
    /// pending cancels outright, one in flight is overlaid forward.
    /// An undo is itself an action: `held` and `origin` as for `perform` (an agent's undo
    /// under the hold policy is held too; the inverse of a held change that never left
    /// cancels it, which is how a held change is discarded). `onlyOwn`: only an action
    /// `origin` made may be undone (the newest of them by default), so an agent held for
    /// approval cannot discard or cancel the user's own changes (issue 40).
    @discardableResult
    public func undo(actionID: Int64? = nil, accountID: Int64? = nil, held: Bool = false,
                     origin: ActionOrigin? = nil, onlyOwn: Bool = false) throws -> UndoResult {
        try writeTrackingLabels { touched in
            let targetID: Int64
            let ownOnly = onlyOwn ? origin?.rawValue ?? "" : nil
            if let actionID {
                targetID = actionID
            } else if let last = try db.scalarInt("""
                SELECT max(a.id) FROM actions AS a
                 WHERE a.undoes IS NULL AND (?2 IS NULL OR a.origin IS ?2) AND (?1 IS NULL OR EXISTS (
                       SELECT 1 FROM action_items AS i \(Self.itemMessageJoin)
                        WHERE i.action_id = a.id AND m.account_id = ?1)
                       OR EXISTS (SELECT 1 FROM snooze_moves AS sm WHERE sm.action_id = a.id AND sm.account_id = ?1))
                """, accountID, ownOnly) {
                targetID = last
            } else {
                throw StoreError.nothingToUndo
            }
            guard let action = try db.first(
                "SELECT undone_by, undoes, origin FROM actions WHERE id = ?", targetID,
                transform: { (undoneBy: $0.optionalInt64(0), undoes: $0.optionalInt64(1), origin: $0.optionalString(2)) })
            else { throw StoreError.noSuchAction(targetID) }
            if let ownOnly, action.origin != ownOnly {
                throw StoreError.invalidArgument("action:\(targetID) was not made by the \(ownOnly); it may undo only its own")
            }
            if action.undoneBy != nil {
                return UndoResult(actionID: targetID, undoActionID: nil, alreadyUndone: true)
            }
            let items = try db.map("""
                SELECT i.message_id, i.label, i.op, m.account_id, m.gmail_id, m.thread_id
                  FROM action_items AS i \(Self.itemMessageJoin)
                 WHERE i.action_id = ? ORDER BY i.message_id, i.label
                """, targetID) {
                (target: TriageTarget(key: $0.int64(0), accountID: $0.int64(3), gmailID: $0.string(4), threadID: $0.string(5)),
                 label: $0.string(1), op: LabelOp(rawValue: $0.string(2)) ?? .add)
            }
            let undoID = try insertAction(description: "undo \(targetID)", undoes: targetID, origin: origin, held: held)
            try db.execute("UPDATE actions SET undone_by = ? WHERE id = ?", undoID, targetID)
            var result = UndoResult(actionID: targetID, undoActionID: undoID, alreadyUndone: false)
            var recorded = Set<ActionItem>()
            result.deltas = try queueDeltas(
                items.map { LabelChange(target: $0.target, label: $0.label, op: $0.op.inverse) }, actionID: undoID,
                recorded: &recorded, held: held)
            for delta in result.deltas {
                touched.insert(ThreadKey(accountID: delta.accountID, threadID: delta.threadID), label: delta.label)
            }
            result.snoozesRestored = try restoreSnoozes(undoing: targetID, by: undoID)
            try forgetOldActions()
            return result
        }
    }

    /// A recorded action, for `hd-undo --list`.
    public struct ActionSummary: Equatable, Sendable {
        public var id: Int64
        public var description: String
        public var createdAt: Int64
        /// How many label changes it queued, and wake times it set or moved.
        public var changes: Int
        public var undoes: Int64?
        public var undoneBy: Int64?
        /// How many of its changes Gmail refused for good (in the last week), and the
        /// newest refusal's reason.
        public var rejected: Int = 0
        public var rejection: String?
        /// Who made it: "agent" (hd-mcp), nil for the user.
        public var origin: ActionOrigin?
        /// How many of its changes are held for approval now.
        public var held: Int = 0
    }

    /// Recorded actions, newest first (one account's when given).
    public func recentActions(limit: Int = 20, accountID: Int64? = nil) throws -> [ActionSummary] {
        try db.map("""
            SELECT a.id, a.description, a.created_at,
                   (SELECT count(*) FROM action_items AS i WHERE i.action_id = a.id)
                     + (SELECT count(*) FROM snooze_moves AS sm WHERE sm.action_id = a.id), a.undoes, a.undone_by,
                   (SELECT count(*) FROM rejected_changes AS r WHERE r.action_id = a.id AND r.rejected_at >= ?3),
                   (SELECT r.reason FROM rejected_changes AS r WHERE r.action_id = a.id AND r.rejected_at >= ?3
                     ORDER BY r.id DESC LIMIT 1),
                   a.origin, (SELECT count(*) FROM mutation_queue AS q WHERE q.action_id = a.id AND q.held = 1)
              FROM actions AS a
             WHERE ?2 IS NULL OR EXISTS (SELECT 1 FROM action_items AS i \(Self.itemMessageJoin)
                                          WHERE i.action_id = a.id AND m.account_id = ?2)
                   OR EXISTS (SELECT 1 FROM snooze_moves AS sm WHERE sm.action_id = a.id AND sm.account_id = ?2)
             ORDER BY a.id DESC LIMIT ?1
            """, limit, accountID, now - Self.rejectionLifetimeMilliseconds) {
            ActionSummary(id: $0.int64(0), description: $0.string(1), createdAt: $0.int64(2), changes: $0.int(3),
                          undoes: $0.optionalInt64(4), undoneBy: $0.optionalInt64(5), rejected: $0.int(6),
                          rejection: $0.optionalString(7), origin: $0.optionalString(8).flatMap(ActionOrigin.init(rawValue:)),
                          held: $0.int(9))
        }
    }

    private struct DryRunRollback: Error {}

    /// The messages each reference names (newest first), in the references' order: one
    /// statement for all thread references and one for all message references. Whether a
    /// thread's member is in trash or spam is read only when `locating` (an action picks
    /// members by it: `members(_:of:)`); a message reference names its message whatever
    /// its place.
    private func resolve(_ references: [Reference], accountID: Int64?, locating: Bool) throws -> [[TriageTarget]] {
        let threads = SQLiteRows(columns: 2), messages = SQLiteRows(columns: 2)
        for (index, reference) in references.enumerated() {
            switch reference {
            case .thread(let id): threads.append(.integer(Int64(index)), .text(id))
            case .message(let id): messages.append(.integer(Int64(index)), .text(id))
            }
        }
        var resolved = [[TriageTarget]](repeating: [], count: references.count)
        func collect(_ row: Row, threadID: String) {
            resolved[row.int(0)].append(
                TriageTarget(key: row.int64(1), accountID: row.int64(2), gmailID: row.string(3), threadID: threadID,
                             inTrashOrSpam: row.bool(5), internalDate: row.int64(6)))
        }
        if !threads.isEmpty {
            // Each thread's members are put newest first here, a few at a time, rather than
            // by an ORDER BY, which sorted every member of every thread named in one go.
            try db.forEach("""
                SELECT r.c0, m.id, m.account_id, m.gmail_id, m.thread_id,
                       \(locating ? EffectiveLabels.inTrashOrSpam(messageColumn: "m.id") : "0"), m.internal_date
                  FROM hudson_rows(?1) AS r
                  JOIN messages AS m ON m.thread_id = r.c1 AND (?2 IS NULL OR m.account_id = ?2)
                """, threads, accountID) { row in
                // A thread's members share the reference's thread id (the join is on it), one
                // string for all of them rather than one read per member.
                guard case .thread(let threadID) = references[row.int(0)] else { return }
                collect(row, threadID: threadID)
            }
            for index in resolved.indices where resolved[index].count > 1 {
                resolved[index].sort { ($0.internalDate, $0.key) > ($1.internalDate, $1.key) }
            }
        }
        if !messages.isEmpty {
            try db.forEach("""
                SELECT r.c0, m.id, m.account_id, m.gmail_id, m.thread_id, 0, m.internal_date
                  FROM hudson_rows(?1) AS r
                  JOIN messages AS m ON m.gmail_id = r.c1 AND (?2 IS NULL OR m.account_id = ?2)
                """, messages, accountID) { collect($0, threadID: $0.string(4)) }
        }
        return resolved
    }

    /// The threads of `targets`, in the order they first appear.
    private static func threads(of targets: [TriageTarget]) -> [ThreadKey] {
        // A thread reference's targets are all one thread's: no set to build.
        if let first = targets.first,
           targets.allSatisfy({ $0.accountID == first.accountID && $0.threadID == first.threadID }) {
            return [ThreadKey(accountID: first.accountID, threadID: first.threadID)]
        }
        var seen = Set<ThreadKey>()
        return targets.compactMap {
            let key = ThreadKey(accountID: $0.accountID, threadID: $0.threadID)
            return seen.insert(key).inserted ? key : nil
        }
    }

    /// The label id a step changes: its system label, or the action's user-named one; with
    /// `creating` (an add), a name that names no label creates it (a remove never does:
    /// there is nothing to remove).
    private func resolveLabel(
        _ systemLabel: String?, named name: String?, accountID: Int64, cache: inout [String: String],
        creating: Bool = false
    ) throws -> String {
        if let systemLabel { return systemLabel }
        let name = name ?? ""
        let cacheKey = "\(accountID)\u{0}\(name)"
        if let id = cache[cacheKey] { return id }
        if let label = try label(named: name, accountID: accountID) {
            cache[cacheKey] = label.id
            return label.id
        }
        guard creating else { throw StoreError.unknownLabel(name) }
        let created = try insertProvisionalLabel(name: try Self.checkedLabelName(name), color: nil, accountID: accountID)
        cache[cacheKey] = created.id
        return created.id
    }

    /// How many actions undo remembers at least. Older ones are forgotten (their items go
    /// with them) once `actionsSlack` more have been recorded, so the undo history stays
    /// small and the forgetting (which looks for references to each forgotten action in
    /// the queue and among the actions) runs once per hundred actions, not per action.
    public static let actionsKept: Int64 = 1_000
    public static let actionsSlack: Int64 = 100

    func insertAction(description: String, undoes: Int64? = nil, origin: ActionOrigin? = nil, held: Bool = false) throws -> Int64 {
        try db.execute("INSERT INTO actions (description, created_at, undoes, origin, held) VALUES (?, ?, ?, ?, ?)",
                       description, now, undoes, origin?.rawValue, held)
        return db.lastInsertRowID
    }

    /// Forgets all but the newest `actionsKept` actions, once there are more than
    /// `actionsKept + actionsSlack`, counted (not by ids, which no-op invocations also use).
    /// An action that a remembered undo undid stays: forgetting it would clear the undo's
    /// `undoes` (ON DELETE SET NULL), and the undo would pass for an ordinary action.
    func forgetOldActions() throws {
        guard let count = try db.scalarInt("SELECT count(*) FROM actions"), count > Self.actionsKept + Self.actionsSlack
        else { return }
        try db.execute("""
            WITH oldest_kept (id) AS (SELECT id FROM actions ORDER BY id DESC LIMIT 1 OFFSET ?1)
            DELETE FROM actions
             WHERE id < (SELECT id FROM oldest_kept)
               AND id NOT IN (SELECT undoes FROM actions
                               WHERE undoes IS NOT NULL AND id >= (SELECT id FROM oldest_kept))
            """, Self.actionsKept - 1)
    }

    /// An undo item (`i`) joined to the message it was queued for (`m`): an item whose
    /// message is gone, or whose key now names another message, joins nothing and is
    /// passed over (Schema: 005_triage_locality).
    static let itemMessageJoin = "JOIN messages AS m ON m.id = i.message_id AND m.gmail_id = i.gmail_id"

    /// An undo item's (message, label): one item per pair and action.
    struct ActionItem: Hashable {
        var key: Int64
        var label: String
    }

    /// The changes of an action or of an undo, one per (message, label) (the first asked
    /// for): each queued (in a dry run only planned) when the message's effective labels
    /// do not already satisfy it, and recorded for undo. A few statements for all of them,
    /// whatever their number (MutationQueue: labelSlots, enqueue). `recorded` holds the
    /// items the action has so far: it is new, made by this transaction, so every item it
    /// has was recorded here and none need be read back.
    private func queueDeltas(
        _ requested: [LabelChange], actionID: Int64?, recorded: inout Set<ActionItem>, held: Bool = false
    ) throws -> [TriageDelta] {
        // Sized once: grown insert by insert, the two sets rehashed their items at every
        // doubling (3 M instructions archiving a thousand threads).
        var asked = Set<ActionItem>(minimumCapacity: requested.count)
        let changes = requested.filter { asked.insert(ActionItem(key: $0.target.key, label: $0.label)).inserted }
        guard !changes.isEmpty else { return [] }
        let slots = try labelSlots(changes)
        var needed: [LabelChange] = [], neededSlots: [LabelSlot] = []
        for (change, slot) in zip(changes, slots) where slot.effective != (change.op == .add) {
            needed.append(change)
            neededSlots.append(slot)
        }
        let outcomes = try enqueue(needed, slots: neededSlots, actionID: actionID, held: held)
        var deltas: [TriageDelta] = []
        deltas.reserveCapacity(needed.count)
        // Undo restores what the message had before the whole action: a change to a
        // (message, label) this action already changed takes it back to where it was
        // (each change here flips the effective state), so the two net out and the item
        // goes; otherwise the item is the change.
        let netted = SQLiteRows(columns: 2)
        var added: [LabelChange] = []
        if actionID != nil { recorded.reserveCapacity(recorded.count + needed.count) }
        for (change, outcome) in zip(needed, outcomes) {
            let target = change.target
            if actionID != nil && outcome != .unchanged {
                let item = ActionItem(key: target.key, label: change.label)
                if recorded.remove(item) != nil {
                    netted.append(.integer(target.key), .text(change.label))
                } else {
                    recorded.insert(item)
                    added.append(change)
                }
            }
            deltas.append(TriageDelta(accountID: target.accountID, messageID: target.gmailID, threadID: target.threadID,
                                      label: change.label, op: change.op, outcome: outcome, messageKey: target.key))
        }
        if let actionID, !netted.isEmpty {
            try db.execute("""
                DELETE FROM action_items
                 WHERE action_id = ?1 AND (message_id, label) IN (SELECT c0, c1 FROM hudson_rows(?2))
                """, actionID, netted)
        }
        if let actionID, !added.isEmpty {
            // In key order, so each lands after the one before in the items' primary key.
            added.sort { ($0.target.key, $0.label) < ($1.target.key, $1.label) }
            let items = SQLiteRows(columns: 4)
            for change in added {
                items.append(.integer(change.target.key), .text(change.target.gmailID), .text(change.label),
                             .text(change.op.rawValue))
            }
            try db.execute("""
                INSERT INTO action_items (action_id, message_id, gmail_id, label, op)
                SELECT ?1, c0, c1, c2, c3 FROM hudson_rows(?2)
                """, actionID, items)
        }
        return deltas
    }
}
