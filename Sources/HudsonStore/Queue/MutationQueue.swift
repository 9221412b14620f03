/*!
 The mutation queue: the overlay of local, unconfirmed label deltas
 (optimistic-mutations.md). Enqueueing resolves collisions with the live row:

   existing                       new op     result
   none                           any        insert pending
   any, same                      same       no-op (idempotent)
   pending, never sent, opposite  opposite   delete: net no-op, nothing was ever sent
   may be at Gmail, opposite      opposite   flip the op forward and reset to pending

 "May be at Gmail" is every row a request has carried, whatever became of the request
 (in flight; or pending again after a lost answer, a timeout, a 5xx, a 429, a killed
 sender, a lost getProfile: `attempted_at`, set durably before the request leaves), and
 every row a live claim holds (its request may be on the wire). Only a row that provably
 never left may be cancelled locally: deleting one that reached Gmail would lose the
 user's last intent, the lost update the spec's "in_flight, opposite" row exists for.

 and the flusher's side: claim pending rows, mark them in flight with the retirement
 gate, retire them once the cursor has passed the gate (the echo, not the 2xx), drop
 them on a terminal failure, or record a transient one for a later retry. Every
 branch that changes what a reader sees recomputes the thread in the same transaction.
 */
import SQLite

public enum LabelOp: String, Sendable, Hashable {
    case add, remove

    public var inverse: LabelOp { self == .add ? .remove : .add }
}

public enum MutationState: String, Sendable {
    case pending
    case inFlight = "in_flight"
}

/// A live queue row, joined with what a reader or the flusher needs to know about it.
public struct QueuedMutation: Equatable, Sendable {
    public var id: Int64
    public var accountID: Int64
    public var accountEmail: String
    public var messageID: String
    public var threadID: String
    public var label: String
    public var labelName: String?
    public var op: LabelOp
    public var state: MutationState
    /// The retirement gate: the mailbox's history id read once Gmail had accepted the
    /// change (getProfile after the request), so at least the change's own.
    public var expectedHistoryID: Int64?
    public var actionID: Int64?
    public var attempts: Int
    public var lastError: String?
    public var nextAttemptAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// When the first request carrying this row went out (epoch ms); nil while no request
    /// ever did. Once set, the row may be at Gmail and is never cancelled locally.
    public var attemptedAt: Int64?
    /// Held for the user's approval (HeldChanges.swift): in the local view, never sent.
    public var held: Bool = false
    /// Who made the action that queued it: "agent" (hd-mcp), nil for the user.
    public var origin: ActionOrigin?
}

/// What one enqueue did to the queue (the collision table's rows).
public enum EnqueueOutcome: Equatable, Sendable {
    /// A new pending row.
    case inserted
    /// The live row already had this op.
    case unchanged
    /// A pending opposite row was deleted: the two cancel, nothing is sent.
    case cancelled
    /// An opposite row that may already be at the server was flipped forward.
    case flipped
}

extension Store {
    /// How long a flusher's claim on a row lasts. A sender that crashed loses its claim
    /// after this and the row is sent again, which is harmless: label changes are idempotent.
    public static let claimLifetimeMilliseconds: Int64 = 5 * 60 * 1000

    static let queueColumns = """
        q.id, q.account_id, a.email, m.gmail_id, m.thread_id, q.label,
        coalesce(l.name, (SELECT c.name FROM labels AS c WHERE c.account_id = q.account_id AND c.id = q.label)), q.op, q.state,
        q.expected_history_id, q.action_id, q.attempts, q.last_error, q.next_attempt_at, q.created_at, q.updated_at,
        q.attempted_at, q.held, (SELECT x.origin FROM actions AS x WHERE x.id = q.action_id)
        """

    static let queueJoins = """
        FROM mutation_queue AS q
        JOIN messages AS m ON m.id = q.message_id
        JOIN accounts AS a ON a.id = q.account_id
        LEFT JOIN shown_labels AS l ON l.account_id = q.account_id AND l.id = q.label
        """

    static func queuedMutation(from row: Row) -> QueuedMutation {
        QueuedMutation(
            id: row.int64(0), accountID: row.int64(1), accountEmail: row.string(2), messageID: row.string(3),
            threadID: row.string(4), label: row.string(5), labelName: row.optionalString(6),
            op: LabelOp(rawValue: row.string(7)) ?? .add, state: MutationState(rawValue: row.string(8)) ?? .pending,
            expectedHistoryID: row.optionalInt64(9), actionID: row.optionalInt64(10), attempts: row.int(11),
            lastError: row.optionalString(12), nextAttemptAt: row.optionalInt64(13), createdAt: row.int64(14),
            updatedAt: row.int64(15), attemptedAt: row.optionalInt64(16), held: row.bool(17),
            origin: row.optionalString(18).flatMap(ActionOrigin.init(rawValue:)))
    }

    // MARK: - Enqueue

    /// A message as triage names it: enough to queue a delta for it and move it in the
    /// change sequence without reading its row again.
    struct TriageTarget {
        var key: Int64
        var accountID: Int64
        var gmailID: String
        var threadID: String
        /// Effectively in trash or spam (triage reads it when it resolves a thread).
        var inTrashOrSpam = false
        /// Gmail's date, which orders a thread's members.
        var internalDate: Int64 = 0
    }

    /// A row of label_counts.
    struct LabelCountKey: Hashable {
        var accountID: Int64
        var label: String
    }

    /// What one write adds to a row of label_counts (negative: takes away).
    struct LabelCountChange {
        var messages = 0
        var threads = 0
        var unreadThreads = 0
    }

    /// Adds each change to its label_counts row, made when missing, in one statement. The
    /// writers that keep the counts themselves rather than by trigger (`enqueue` for new
    /// queue rows, migration 021; the rollup's writer for threads, migration 020) add up a
    /// write's changes per label and apply them here.
    static func addToLabelCounts(_ changes: [LabelCountKey: LabelCountChange], in db: Connection) throws {
        let rows = SQLiteRows(columns: 5)
        for (key, change) in changes where change.messages != 0 || change.threads != 0 || change.unreadThreads != 0 {
            rows.append(.integer(key.accountID), .text(key.label), .integer(Int64(change.messages)),
                        .integer(Int64(change.threads)), .integer(Int64(change.unreadThreads)))
        }
        guard !rows.isEmpty else { return }
        try db.execute("""
            INSERT INTO label_counts (account_id, label, messages, threads, unread_threads)
            SELECT c0, c1, c2, c3, c4 FROM hudson_rows(?) WHERE 1
            ON CONFLICT (account_id, label) DO UPDATE
               SET messages = messages + excluded.messages, threads = threads + excluded.threads,
                   unread_threads = unread_threads + excluded.unread_threads
            """, rows)
    }

    /// One change triage asks for: a label added to or removed from a message.
    struct LabelChange {
        var target: TriageTarget
        var label: String
        var op: LabelOp
    }

    /// What the store says of one (message, label) before a change: whether the message
    /// effectively carries it, whether canonical truth does, and the live queue row.
    struct LabelSlot {
        var effective: Bool
        var canonical: Bool
        var queued: (id: Int64, op: LabelOp, state: MutationState, claimedAt: Int64?, attemptedAt: Int64?)?
    }

    /// The slot of each change's (message, label), in the changes' order: one statement
    /// for all of them (it was one per change), which reads each (message, label) in
    /// message_labels and in the queue once, and its effective state from those two rows
    /// through the one rule.
    func labelSlots(_ changes: [LabelChange]) throws -> [LabelSlot] {
        let rows = SQLiteRows(columns: 2)
        for change in changes { rows.append(.integer(change.target.key), .text(change.label)) }
        var slots = [LabelSlot](repeating: LabelSlot(effective: false, canonical: false, queued: nil), count: changes.count)
        try db.forEach("""
            SELECT c.rowid, \(EffectiveLabels.carries(canonicalPresent: "ml.label IS NOT NULL", queuedOp: "q.op")),
                   ml.label IS NOT NULL, q.id, q.op, q.state, q.claimed_at, q.attempted_at
              FROM hudson_rows(?) AS c
              LEFT JOIN message_labels AS ml ON ml.message_id = c.c0 AND ml.label = c.c1
              LEFT JOIN mutation_queue AS q ON q.message_id = c.c0 AND q.label = c.c1
            """, rows) { row in
            slots[row.int(0)] = LabelSlot(
                effective: row.bool(1), canonical: row.bool(2),
                queued: row.optionalInt64(3).map { id in
                    (id: id, op: LabelOp(rawValue: row.string(4)) ?? .add,
                     state: MutationState(rawValue: row.string(5)) ?? .pending, claimedAt: row.optionalInt64(6),
                     attemptedAt: row.optionalInt64(7))
                })
        }
        return slots
    }

    /// The collision table (this file's header) for one change: what it does to the live
    /// row `slot` describes, and what it is reported as.
    enum QueueWrite: Equatable {
        /// A new pending row.
        case insert
        /// The live row already has this op.
        case none
        /// The pending row is deleted: the two cancel.
        case delete
        /// The pending row is deleted and a new one queued: the server changed the label
        /// meanwhile, so canonical alone does not give the new intent.
        case deleteAndInsert
        /// The row that may be at the server is overlaid forward.
        case flip(Int64)
    }

    static func collision(_ slot: LabelSlot, op: LabelOp, now: Int64) -> (write: QueueWrite, outcome: EnqueueOutcome) {
        guard let existing = slot.queued else { return (.insert, .inserted) }
        if existing.op == op { return (.none, .unchanged) }
        let beingSent = existing.claimedAt.map { now - $0 < claimLifetimeMilliseconds } ?? false
        if existing.state == .pending && !beingSent && existing.attemptedAt == nil {
            // No request ever carried it: the two deltas cancel.
            return slot.canonical != (op == .add) ? (.deleteAndInsert, .inserted) : (.delete, .cancelled)
        }
        // In flight, carried by a request whose answer was lost, or being sent right now:
        // the old op may reach or have reached the server and cannot be recalled, so
        // deleting the row would lose the new intent. Overlay forward: same row, new op,
        // pending again (its attempt stays recorded); a sender that is mid-request keeps
        // its claim and will see the op changed under it.
        return (.flip(existing.id), .flipped)
    }

    /// Queues `changes` (one per message and label), each resolved against its live row
    /// by the collision table, with one statement per kind of write for all of them.
    /// Every change that alters the queue moves its message in the change sequence. Must
    /// run inside a tracked write transaction; the caller recomputes the threads.
    ///
    /// `held`: every row this write inserts or flips is held for approval (or, false,
    /// released): a row takes the hold of the last intent written to it, so a user's
    /// opposite change over an agent's held row that may be at Gmail goes out, and an
    /// agent's over a user's row waits.
    func enqueue(_ changes: [LabelChange], slots: [LabelSlot], actionID: Int64?, held: Bool = false) throws -> [EnqueueOutcome] {
        let now = self.now
        let deleted = SQLiteRows(columns: 1), inserted = SQLiteRows(columns: 4), flipped = SQLiteRows(columns: 2)
        let moved = SQLiteRows(columns: 4)
        // What the new rows do to label_counts.messages, per (account, label): a row
        // counts where its op differs from canonical truth (migration 021: added up here,
        // the one writer of queue rows, not by a trigger per row).
        var messageCounts: [LabelCountKey: LabelCountChange] = [:]
        // The changes come label by label (one step of an action is one label): a run of
        // one (account, label) is added up here and goes into the map once, not a lookup
        // per change.
        var run: (key: LabelCountKey, messages: Int)?
        var outcomes: [EnqueueOutcome] = []
        outcomes.reserveCapacity(changes.count)
        for (change, slot) in zip(changes, slots) {
            let (write, outcome) = Self.collision(slot, op: change.op, now: now)
            outcomes.append(outcome)
            let target = change.target
            switch write {
            case .none: continue
            case .insert, .deleteAndInsert, .delete:
                if write != .insert, let existing = slot.queued { deleted.append(.integer(existing.id)) }
                if write != .delete {
                    inserted.append(.integer(target.accountID), .integer(target.key), .text(change.label),
                                    .text(change.op.rawValue))
                    if (change.op == .add) != slot.canonical {
                        let messages = change.op == .add ? 1 : -1
                        if let current = run, current.key.accountID == target.accountID, current.key.label == change.label {
                            run?.messages += messages
                        } else {
                            if let current = run { messageCounts[current.key, default: .init()].messages += current.messages }
                            run = (LabelCountKey(accountID: target.accountID, label: change.label), messages)
                        }
                    }
                }
            case .flip(let id):
                flipped.append(.integer(id), .text(change.op.rawValue))
            }
            moved.append(.integer(target.accountID), .text(target.gmailID), .text(target.threadID), .integer(target.key))
        }
        if let current = run { messageCounts[current.key, default: .init()].messages += current.messages }
        if !deleted.isEmpty {
            try db.execute("DELETE FROM mutation_queue WHERE id IN (SELECT c0 FROM hudson_rows(?))", deleted)
        }
        if !inserted.isEmpty {
            try db.execute("""
                INSERT INTO mutation_queue (account_id, message_id, label, op, state, action_id, created_at, updated_at, held)
                SELECT c0, c1, c2, c3, 'pending', ?2, ?3, ?3, ?4 FROM hudson_rows(?1)
                """, inserted, actionID, now, held)
            try Self.addToLabelCounts(messageCounts, in: db)
        }
        if !flipped.isEmpty {
            try db.execute("""
                UPDATE mutation_queue
                   SET op = c.c1, state = 'pending', expected_history_id = NULL,
                       action_id = coalesce(?2, action_id), attempts = 0, last_error = NULL, next_attempt_at = NULL,
                       updated_at = ?3, held = ?4
                  FROM hudson_rows(?1) AS c
                 WHERE mutation_queue.id = c.c0
                """, flipped, actionID, now, held)
        }
        if !moved.isEmpty { try bumpSequence(moved) }
        return outcomes
    }

    // MARK: - Flusher side

    /// A queue row (`q`) whose label Gmail can take now: not a label still to be created
    /// (its provisional id means nothing to Gmail; it goes once the flusher has created
    /// it and mapped the id), nor one being deleted (labels.delete removes it from every
    /// message, and the row retires on that echo: LabelObjects.swift).
    static let labelReadyCondition = """
        NOT EXISTS (SELECT 1 FROM label_overlay AS o
                     WHERE o.account_id = q.account_id AND o.label_id = q.label
                       AND (o.op = 'delete' OR (o.op = 'create' AND o.state = 'pending')))
        """

    /// Claims about `limit` pending rows that are due (whole messages, label set by label
    /// set, the oldest set first), so that no other flusher (in this or another process)
    /// sends them meanwhile. A flusher that holds
    /// the account's flush lock passes `takingOverClaims`: only the lock's holder claims,
    /// so every claim it finds was left by a flusher that died, and it takes them over at
    /// once instead of waiting for them to expire.
    public func claimPendingMutations(accountID: Int64, limit: Int, takingOverClaims: Bool = false) throws -> [QueuedMutation] {
        try db.write {
            let now = self.now
            let claimable = takingOverClaims ? Int64.max : now - Self.claimLifetimeMilliseconds
            // Whole messages, whole label sets: a message's due rows are claimed together
            // (split, its one batchModify would become two with different label sets), and
            // the messages with the same adds and removes are claimed together, set by set,
            // oldest set first (by its oldest row, so no old change waits behind newer
            // ones), as many whole sets as `limit` holds: a set is never split between two
            // claims (issue 23: a request per 1,000 messages per label set). A first set
            // larger than `limit` is cut at a multiple of 1,000 messages, Gmail's
            // batchModify size. The signature only groups; the flusher builds requests.
            let rows = try db.map("""
                WITH due AS (
                    SELECT q.id, q.message_id, q.op, q.label FROM mutation_queue AS q
                     WHERE q.account_id = ?1 AND q.state = 'pending' AND q.held = 0
                       AND (q.next_attempt_at IS NULL OR q.next_attempt_at <= ?2)
                       AND (q.claimed_at IS NULL OR q.claimed_at <= ?3)
                       AND \(Self.labelReadyCondition)
                ),
                due_messages AS (
                    SELECT message_id, min(id) AS oldest, count(*) AS n, group_concat(op || ' ' || label, ',') AS signature
                      FROM (SELECT * FROM due ORDER BY message_id, label, op) GROUP BY message_id
                ),
                sets AS (
                    SELECT signature, set_n, sum(set_n) OVER (ORDER BY set_oldest, signature ROWS UNBOUNDED PRECEDING) AS running
                      FROM (SELECT signature, min(oldest) AS set_oldest, sum(n) AS set_n FROM due_messages GROUP BY signature)
                ),
                placed AS (
                    SELECT m.message_id, m.n, s.set_n, s.running,
                           row_number() OVER (PARTITION BY m.signature ORDER BY m.oldest, m.message_id) AS place
                      FROM due_messages AS m JOIN sets AS s USING (signature)
                )
                SELECT \(Self.queueColumns) \(Self.queueJoins)
                 WHERE q.id IN (SELECT id FROM due WHERE message_id IN (
                        SELECT message_id FROM placed
                         WHERE running <= ?4
                            OR (running = set_n AND place <= CASE WHEN ?4 / n >= 1000 THEN ?4 / n / 1000 * 1000
                                                                  ELSE max(1, ?4 / n) END)))
                 ORDER BY q.id
                """, accountID, now, claimable, limit, transform: Self.queuedMutation(from:))
            for row in rows {
                try db.execute("UPDATE mutation_queue SET claimed_at = ? WHERE id = ?", now, row.id)
            }
            return rows
        }
    }

    /// Records, durably, that a request carrying these rows is about to go out: from
    /// here on they may be at Gmail whatever becomes of the request or of this process
    /// (see the collision table). Committed with `synchronous=FULL` whatever the
    /// connection's setting, so not even an OS crash can make a sent row look unsent.
    /// The first attempt's time is kept. Only rows that still hold the op they were
    /// claimed with are marked: one flipped or cancelled since (say, after its claim ran
    /// out during a long pass) must not be sent with its old op. Returns the ids marked,
    /// which are all the request may carry.
    public func markMutationsAttempted(_ rows: [(id: Int64, op: LabelOp)]) throws -> Set<Int64> {
        guard !rows.isEmpty else { return [] }
        let claimed = SQLiteRows(columns: 2)
        for row in rows { claimed.append(.integer(row.id), .text(row.op.rawValue)) }
        return try db.durableWrite {
            var marked = Set<Int64>()
            try db.forEach("""
                UPDATE mutation_queue SET attempted_at = coalesce(attempted_at, ?2)
                  FROM hudson_rows(?1) AS c
                 WHERE mutation_queue.id = c.c0 AND mutation_queue.op = c.c1
                RETURNING mutation_queue.id
                """, claimed, now) { marked.insert($0.int64(0)) }
            return marked
        }
    }

    /// After a successful send: rows still holding the op that was sent become in
    /// flight with `gate` as their retirement gate. A row whose op was flipped while the
    /// request was out stays pending (its new op goes out on the next pass). Returns the
    /// number of rows marked.
    @discardableResult
    public func markInFlight(_ sent: [(id: Int64, op: LabelOp)], gate: Int64) throws -> Int {
        guard gate > 0 else { throw StoreError.invalidArgument("retirement gate must be positive") }
        return try db.write {
            var marked = 0
            for row in sent {
                try db.execute("""
                    UPDATE mutation_queue
                       SET state = 'in_flight', expected_history_id = ?, claimed_at = NULL, attempts = attempts + 1,
                           last_error = NULL, next_attempt_at = NULL, updated_at = ?
                     WHERE id = ? AND op = ? AND state = 'pending'
                    """, gate, now, row.id, row.op.rawValue)
                marked += db.changes
                try db.execute("UPDATE mutation_queue SET claimed_at = NULL WHERE id = ?", row.id)
            }
            return marked
        }
    }

    /// A transient failure (429, 5xx, network): the row stays pending with its attempt
    /// count and error, and is not retried for `retryAfterMilliseconds` (by the store's clock).
    public func recordMutationFailure(ids: [Int64], error: String, retryAfterMilliseconds: Int64) throws {
        try db.write {
            let retryAt = now + max(0, retryAfterMilliseconds)
            for id in ids {
                try db.execute("""
                    UPDATE mutation_queue
                       SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, claimed_at = NULL, updated_at = ?
                     WHERE id = ?
                    """, error, retryAt, now, id)
            }
        }
    }

    /// Gives up claims without recording anything (a pass that stopped early).
    public func releaseClaims(ids: [Int64]) throws {
        try db.write {
            for id in ids {
                try db.execute("UPDATE mutation_queue SET claimed_at = NULL WHERE id = ?", id)
            }
        }
    }

    /// The rows whose replacement is stored: in flight, the account's cursor at or past
    /// the gate (the echo has been applied), and the message not awaiting a re-list's
    /// confirmation. After an expired cursor the fresh cursor passes every gate at once,
    /// while the canonical labels that replace the rows come only with the re-list: until
    /// it lists (or refetches) the message, retiring would show neither the change nor
    /// Gmail's state (optimistic-mutations.md: "no window where neither is true").
    static let retirableCondition = """
        q.state = 'in_flight' AND a.history_id IS NOT NULL AND q.expected_history_id <= a.history_id
        AND NOT EXISTS (SELECT 1 FROM relist_unconfirmed AS r WHERE r.message_id = q.message_id)
        """

    /// Retires in-flight rows whose gate the account's cursor has reached: the history
    /// echo has landed and canonical labels now carry the change ("Retirement: on echo,
    /// not on 2xx"). Returns the number retired.
    @discardableResult
    public func retireConfirmedMutations(accountID: Int64) throws -> Int {
        try writeTrackingLabels { touched in
            let rows = try db.map("""
                SELECT q.id, q.message_id, q.label, q.op, m.thread_id
                  FROM mutation_queue AS q JOIN messages AS m ON m.id = q.message_id
                  JOIN accounts AS a ON a.id = q.account_id
                 WHERE q.account_id = ? AND \(Self.retirableCondition)
                """, accountID) {
                (id: $0.int64(0), messageKey: $0.int64(1), label: $0.string(2),
                 op: LabelOp(rawValue: $0.string(3)) ?? .add, threadID: $0.string(4))
            }
            for row in rows {
                try removeQueueRow(id: row.id, messageKey: row.messageKey, label: row.label, op: row.op,
                                   thread: ThreadKey(accountID: accountID, threadID: row.threadID), touched: &touched)
            }
            return rows.count
        }
    }

    /// The number of in-flight rows whose gate the account's cursor has reached: what
    /// `retireConfirmedMutations` would retire now.
    public func mutationsReadyToRetire(accountID: Int64) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM mutation_queue AS q JOIN accounts AS a ON a.id = q.account_id
             WHERE q.account_id = ? AND \(Self.retirableCondition)
            """, accountID) ?? 0)
    }

    /// How long a rejected change stays listed (`hd-pending`, `hd-undo --list`).
    public static let rejectionLifetimeMilliseconds: Int64 = 7 * 24 * 3600 * 1000

    /// A definite rejection (Gmail refused the change itself: a 400 narrowed down to it,
    /// or a 404 for a message that is gone): the rows are dropped, so readers see
    /// canonical truth again, and each is recorded with Gmail's `reason` for `hd-pending`
    /// and the undo history. Only rows still holding the op that was refused are dropped:
    /// a row flipped meanwhile carries a newer intent.
    /// What `dropMutations` dropped: the rows, and the Gmail ids of their messages.
    public struct DroppedMutations: Equatable, Sendable {
        public var rowIDs: [Int64] = []
        public var messages: [String] = []
    }

    @discardableResult
    public func dropMutations(_ failed: [(id: Int64, op: LabelOp)], reason: String) throws -> DroppedMutations {
        try writeTrackingLabels { touched in
            var dropped = DroppedMutations()
            let now = self.now
            for entry in failed {
                guard let row = try db.first("""
                    SELECT q.message_id, q.label, q.account_id, m.thread_id, m.gmail_id, q.action_id
                      FROM mutation_queue AS q JOIN messages AS m ON m.id = q.message_id
                     WHERE q.id = ? AND q.op = ?
                    """, entry.id, entry.op.rawValue, transform: {
                        (messageKey: $0.int64(0), label: $0.string(1), accountID: $0.int64(2),
                         threadID: $0.string(3), gmailID: $0.string(4), actionID: $0.optionalInt64(5))
                    })
                else { continue }
                try removeQueueRow(id: entry.id, messageKey: row.messageKey, label: row.label, op: entry.op,
                                   thread: ThreadKey(accountID: row.accountID, threadID: row.threadID), touched: &touched)
                try db.execute("""
                    INSERT INTO rejected_changes (account_id, gmail_id, thread_id, label, op, action_id, reason, rejected_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [row.accountID, row.gmailID, row.threadID, row.label, entry.op.rawValue, row.actionID,
                                     reason, now])
                dropped.rowIDs.append(entry.id)
                if !dropped.messages.contains(row.gmailID) { dropped.messages.append(row.gmailID) }
            }
            try db.execute("DELETE FROM rejected_changes WHERE rejected_at < ?", now - Self.rejectionLifetimeMilliseconds)
            return dropped
        }
    }

    /// A change Gmail refused for good, as `hd-pending` and the undo history show it.
    public struct RejectedChange: Equatable, Sendable {
        public var accountID: Int64
        public var accountEmail: String
        public var messageID: String
        public var threadID: String
        public var label: String
        public var labelName: String?
        public var op: LabelOp
        public var actionID: Int64?
        public var reason: String
        public var rejectedAt: Int64
    }

    /// The changes Gmail refused in the last `rejectionLifetimeMilliseconds`, newest
    /// first; one account's, or one action's, when given.
    public func rejectedChanges(accountID: Int64? = nil, actionID: Int64? = nil) throws -> [RejectedChange] {
        try db.map("""
            SELECT r.account_id, a.email, r.gmail_id, r.thread_id, r.label,
                   coalesce(l.name, (SELECT c.name FROM labels AS c WHERE c.account_id = r.account_id AND c.id = r.label),
                            (SELECT x.name FROM rejected_label_changes AS x
                              WHERE x.account_id = r.account_id AND x.label_id = r.label ORDER BY x.id DESC LIMIT 1)),
                   r.op, r.action_id, r.reason, r.rejected_at
              FROM rejected_changes AS r
              JOIN accounts AS a ON a.id = r.account_id
              LEFT JOIN shown_labels AS l ON l.account_id = r.account_id AND l.id = r.label
             WHERE (?1 IS NULL OR r.account_id = ?1) AND (?2 IS NULL OR r.action_id = ?2) AND r.rejected_at >= ?3
             ORDER BY r.id DESC
            """, accountID, actionID, now - Self.rejectionLifetimeMilliseconds) {
            RejectedChange(accountID: $0.int64(0), accountEmail: $0.string(1), messageID: $0.string(2), threadID: $0.string(3),
                           label: $0.string(4), labelName: $0.optionalString(5), op: LabelOp(rawValue: $0.string(6)) ?? .add,
                           actionID: $0.optionalInt64(7), reason: $0.string(8), rejectedAt: $0.int64(9))
        }
    }

    /// Deletes a queue row; when that changes the message's effective labels (canonical
    /// does not already agree with the row), the message moves in the change sequence
    /// and its thread is recomputed.
    private func removeQueueRow(id: Int64, messageKey: Int64, label: String, op: LabelOp,
                                thread: ThreadKey, touched: inout LabelTouches) throws {
        try db.execute("DELETE FROM mutation_queue WHERE id = ?", id)
        let canonical = try db.scalarInt(
            "SELECT 1 FROM message_labels WHERE message_id = ? AND label = ?", messageKey, label) != nil
        if canonical != (op == .add) {
            try bumpSequence(messageKey: messageKey)
        }
        touched.insert(thread, label: label)
    }

    /// Every live queue row, oldest first; one account's when `accountID` is given.
    public func queuedMutations(accountID: Int64? = nil) throws -> [QueuedMutation] {
        try db.map("""
            SELECT \(Self.queueColumns) \(Self.queueJoins)
             WHERE ?1 IS NULL OR q.account_id = ?1
             ORDER BY q.id
            """, accountID, transform: Self.queuedMutation(from:))
    }

    /// The number of live queue rows a sync has to send or confirm: held rows wait for the
    /// user, not for Gmail, and never keep a sync from being caught up.
    public func queuedMutationCount(accountID: Int64? = nil) throws -> Int {
        Int(try db.scalarInt(
            "SELECT count(*) FROM mutation_queue WHERE (?1 IS NULL OR account_id = ?1) AND held = 0", accountID) ?? 0)
    }
}
