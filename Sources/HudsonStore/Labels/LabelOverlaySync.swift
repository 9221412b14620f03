/*!
 The label overlay's other side (LabelObjects.swift): what the flusher records as Gmail
 answers each label operation, what a refusal undoes, the one remapping of a provisional
 label id to Gmail's, and the settling of the overlay against each labels.list. Every
 write that changes what a reader sees maintains the derived tables in the same
 transaction (through `writeTrackingLabels`).
 */
import SQLite

extension Store {
    // MARK: - Flusher side

    /// The label operations due to be sent, oldest first: each goes out before any queued
    /// message change that uses its label (those are not claimed meanwhile).
    public func dueLabelChanges(accountID: Int64) throws -> [PendingLabelChange] {
        try db.map("""
            SELECT \(Self.pendingLabelColumns) FROM label_overlay AS o JOIN accounts AS a ON a.id = o.account_id
             WHERE o.account_id = ? AND o.state = 'pending' AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ?)
             ORDER BY o.seq
            """, accountID, now, transform: Self.pendingLabelChange(from:))
    }

    /// Records, durably, that a request for this operation is about to go out (with the
    /// name it carries): from here on it may be at Gmail whatever becomes of the answer.
    /// Returns false when the row changed meanwhile (deleted, or another operation now):
    /// then nothing is sent this pass.
    public func markLabelChangeAttempted(_ change: PendingLabelChange) throws -> Bool {
        try db.durableWrite {
            try db.execute("""
                UPDATE label_overlay SET attempted_at = coalesce(attempted_at, ?), attempted_name = coalesce(?, attempted_name),
                       updated_at = ?
                 WHERE seq = ? AND op = ? AND label_id = ? AND name IS ? AND state = 'pending'
                """, now, change.op == .create ? change.name : nil, now, change.seq, change.op.rawValue, change.labelID,
                change.name)
            return db.changes > 0
        }
    }

    /// A transient failure (429, 5xx, network): the operation stays pending with its
    /// error and is not tried again for `retryAfterMilliseconds`.
    public func recordLabelChangeFailure(seq: Int64, error: String, retryAfterMilliseconds: Int64) throws {
        try db.write {
            try db.execute("""
                UPDATE label_overlay SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, updated_at = ?
                 WHERE seq = ?
                """, error, now + max(0, retryAfterMilliseconds), now, seq)
        }
    }

    /// Gmail has the created label as `gmailID` (its answer, or a label of that name found
    /// by labels.list): the provisional id becomes Gmail's everywhere, in one transaction.
    /// The row then waits for labels.list (`sent`), or, when the label was renamed while the
    /// create was out, becomes a rename to send.
    public func labelCreated(_ change: PendingLabelChange, gmailID: String, sentName: String) throws {
        try writeTrackingLabels { touched in
            try mapProvisionalLabel(change.labelID, to: gmailID, accountID: change.accountID, touched: &touched)
            try db.execute("""
                UPDATE label_overlay
                   SET op = CASE WHEN name = ?2 THEN 'create' ELSE 'rename' END,
                       previous_name = CASE WHEN name = ?2 THEN previous_name ELSE ?2 END,
                       state = CASE WHEN name = ?2 THEN 'sent' ELSE 'pending' END,
                       sent_at = CASE WHEN name = ?2 THEN ?3 END, attempts = attempts + 1, last_error = NULL,
                       next_attempt_at = NULL, attempted_at = CASE WHEN name = ?2 THEN attempted_at END, updated_at = ?3
                 WHERE seq = ?1 AND op = 'create'
                """, change.seq, sentName, now)
            // Deleted while the create was out: the row stays a pending delete, now of
            // Gmail's id (mapped above), and the next round deletes it there.
        }
    }

    /// Gmail renamed the label (labels.patch answered). The row waits for labels.list;
    /// if it was renamed again meanwhile it stays pending, and the new name goes out next.
    public func labelRenamed(_ change: PendingLabelChange) throws {
        try db.write {
            try db.execute("""
                UPDATE label_overlay SET state = 'sent', sent_at = ?, attempts = attempts + 1, last_error = NULL,
                       next_attempt_at = NULL, updated_at = ?
                 WHERE seq = ? AND op = 'rename' AND name IS ?
                """, now, now, change.seq, change.name)
        }
    }

    /// Gmail deleted the label (or no longer had it): the messages' queued removes of it
    /// are in flight from here, retired once the cursor passes `gate` (the history id read
    /// after the delete, so at least its labelRemoved records'), and the row waits for
    /// labels.list.
    public func labelDeleted(_ change: PendingLabelChange, gmailID: String?, gate: Int64) throws {
        guard gate > 0 else { throw StoreError.invalidArgument("retirement gate must be positive") }
        try db.write {
            try db.execute("""
                UPDATE mutation_queue
                   SET state = 'in_flight', expected_history_id = ?1, attempted_at = coalesce(attempted_at, ?2),
                       held = 0, claimed_at = NULL, last_error = NULL, next_attempt_at = NULL, updated_at = ?2
                 WHERE account_id = ?3 AND label IN (?4, ?5) AND op = 'remove' AND state = 'pending'
                """, gate, now, change.accountID, change.labelID, gmailID ?? change.labelID)
            try db.execute("""
                UPDATE label_overlay SET label_id = coalesce(?, label_id), state = 'sent', sent_at = ?, attempts = attempts + 1,
                       last_error = NULL, next_attempt_at = NULL, updated_at = ?
                 WHERE seq = ? AND op = 'delete'
                """, gmailID, now, now, change.seq)
        }
    }

    /// A created label whose request never reached Gmail, deleted since: nothing is left
    /// to do at Gmail, and the row goes.
    public func forgetLabelChange(seq: Int64) throws {
        try db.write { try db.execute("DELETE FROM label_overlay WHERE seq = ?", seq) }
    }

    /// Gmail refused the operation for good (a 400: an invalid name, a name taken, a
    /// system label; a 404: the label is gone). It is recorded with Gmail's `reason` for
    /// `hd-pending --rejected`, and undone locally so readers see Gmail's truth: a refused
    /// create drops the changes that used the label (each recorded as refused), a refused
    /// delete gives the label back to its messages. Nothing else in the queue waits on it.
    public func rejectLabelChange(_ change: PendingLabelChange, reason: String) throws {
        let used = try db.map("""
            SELECT id, op FROM mutation_queue WHERE account_id = ? AND label = ?
            """, change.accountID, change.labelID) { (id: $0.int64(0), op: LabelOp(rawValue: $0.string(1)) ?? .add) }
        try db.write {
            // Changed since it was sent (renamed again, deleted): the new intent goes next,
            // and the refusal of the old one changes nothing.
            guard try db.scalarInt("""
                SELECT 1 FROM label_overlay WHERE seq = ? AND op = ? AND label_id = ? AND name IS ?
                """, change.seq, change.op.rawValue, change.labelID, change.name) != nil else { return }
            try db.execute("""
                INSERT INTO rejected_label_changes (account_id, label_id, op, name, previous_name, reason, rejected_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [change.accountID, change.labelID, change.op.rawValue, change.name, change.previousName,
                                 reason, now])
            try db.execute("DELETE FROM label_overlay WHERE seq = ?", change.seq)
            try db.execute("DELETE FROM rejected_label_changes WHERE rejected_at < ?", now - Self.rejectionLifetimeMilliseconds)
            if change.op != .rename && !used.isEmpty {
                _ = try dropMutations(used, reason: "label \(change.op.rawValue) refused by Gmail: \(reason)")
            }
        }
    }

    /// Replaces the provisional id `provisional` with `gmailID` wherever it appears: queue
    /// rows, undo items, refused changes, the overlay, and the rollups and thread_labels of
    /// the threads it is on (recomputed from the remapped queue, in the same transaction).
    /// A message that already has a row for `gmailID` keeps that one.
    func mapProvisionalLabel(_ provisional: String, to gmailID: String, accountID: Int64, touched: inout LabelTouches) throws {
        guard provisional != gmailID else { return }
        try db.forEach("""
            SELECT DISTINCT m.thread_id FROM mutation_queue AS q JOIN messages AS m ON m.id = q.message_id
             WHERE q.account_id = ? AND q.label = ?
            """, accountID, provisional) { row in
            let thread = ThreadKey(accountID: accountID, threadID: row.string(0))
            touched.insert(thread, label: provisional)
            touched.insert(thread, label: gmailID)
        }
        try db.execute("UPDATE OR IGNORE mutation_queue SET label = ? WHERE account_id = ? AND label = ?",
                       gmailID, accountID, provisional)
        try db.execute("DELETE FROM mutation_queue WHERE account_id = ? AND label = ?", accountID, provisional)
        try db.execute("""
            UPDATE OR IGNORE action_items SET label = ?1
             WHERE label = ?2 AND message_id IN (SELECT id FROM messages WHERE account_id = ?3)
            """, gmailID, provisional, accountID)
        try db.execute("""
            DELETE FROM action_items WHERE label = ?1 AND message_id IN (SELECT id FROM messages WHERE account_id = ?2)
            """, provisional, accountID)
        try db.execute("UPDATE rejected_changes SET label = ? WHERE account_id = ? AND label = ?", gmailID, accountID, provisional)
        try db.execute("UPDATE OR IGNORE label_overlay SET label_id = ? WHERE account_id = ? AND label_id = ?",
                       gmailID, accountID, provisional)
    }

    /// After labels.list (inside `replaceLabels`' transaction): retire what the listing
    /// confirms, and reconcile what happened elsewhere. `listedAt`: when the listing's
    /// request went out; only a listing that began after Gmail's answer may retire a sent row.
    ///
    /// - a provisional label whose name a listed label has (made elsewhere, or by a create
    ///   whose answer was lost) becomes that label: one label, not two;
    /// - a sent create, rename or delete that the listing confirms retires (a delete once
    ///   the removes it holds are in flight);
    /// - a pending rename of a label the listing no longer has (deleted elsewhere) is
    ///   refused, recorded, and retired.
    func settleLabelOverlay(accountID: Int64, listed: [LabelInfo], listedAt: Int64?, touched: inout LabelTouches) throws {
        let rows = try db.map("""
            SELECT \(Self.pendingLabelColumns), o.sent_at FROM label_overlay AS o JOIN accounts AS a ON a.id = o.account_id
             WHERE o.account_id = ? ORDER BY o.seq
            """, accountID) { (change: Self.pendingLabelChange(from: $0), sentAt: $0.optionalInt64(16)) }
        let byID = Dictionary(listed.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (change, sentAt) in rows {
            let confirmedAfterAnswer = sentAt.map { sent in listedAt.map { $0 >= sent } ?? false } ?? false
            switch (change.op, change.state) {
            case (.create, .pending) where change.isProvisional:
                let wanted = (change.name ?? "").lowercased()
                if let match = listed.first(where: { $0.kind == .user && $0.name?.lowercased() == wanted }) {
                    try mapProvisionalLabel(change.labelID, to: match.id, accountID: accountID, touched: &touched)
                    try db.execute("DELETE FROM label_overlay WHERE seq = ?", change.seq)
                }
            case (.create, .sent), (.rename, .sent):
                // Listed as asked, or by a listing that began after Gmail's answer (what
                // it says then is Gmail's truth, a later change elsewhere included).
                if byID[change.labelID]?.name == change.name || confirmedAfterAnswer {
                    try db.execute("DELETE FROM label_overlay WHERE seq = ?", change.seq)
                }
            case (.rename, .pending):
                if byID[change.labelID] == nil {
                    try db.execute("""
                        INSERT INTO rejected_label_changes (account_id, label_id, op, name, previous_name, reason, rejected_at)
                        VALUES (?, ?, 'rename', ?, ?, 'the label was deleted on Gmail', ?)
                        """, accountID, change.labelID, change.name, change.previousName, now)
                    try db.execute("DELETE FROM label_overlay WHERE seq = ?", change.seq)
                }
            case (.delete, .sent):
                let holding = try db.scalarInt("""
                    SELECT count(*) FROM mutation_queue WHERE account_id = ? AND label = ? AND state = 'pending'
                    """, accountID, change.labelID) ?? 0
                if holding == 0 && (byID[change.labelID] == nil || confirmedAfterAnswer) {
                    try db.execute("DELETE FROM label_overlay WHERE seq = ?", change.seq)
                }
            default:
                break
            }
        }
    }
}
