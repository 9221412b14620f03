import HudsonStore
import SQLite
import Testing

@Suite("Mutation queue: effective labels, the collision table, the flusher's side")
struct MutationQueueTests {
    /// One message with canonical INBOX + UNREAD, archived locally (a pending remove).
    func archivedFixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100))
        try f.store.perform([.archive], on: [.message("m1")])
        return f
    }

    @Test("a claim takes whole messages and whole label sets, the oldest set first; only a set larger than the claim is cut")
    func claimsWholeMessagesBySet() throws {
        let f = try StoreFixture()
        for id in ["m1", "m2", "m3", "m4", "m5"] { try f.apply(f.snapshot(id, labels: ["INBOX", "UNREAD"])) }
        // Queue order: m1 -INBOX, m2 +STARRED, m3 -INBOX, m4 +STARRED, m1 -UNREAD, m5 -INBOX.
        try f.store.perform([.archive], on: [.message("m1")])
        try f.store.perform([.star], on: [.message("m2")])
        try f.store.perform([.archive], on: [.message("m3")])
        try f.store.perform([.star], on: [.message("m4")])
        try f.store.perform([.read], on: [.message("m1")])
        try f.store.perform([.archive], on: [.message("m5")])
        func claim(_ limit: Int) throws -> [String: [String]] {
            let rows = try f.store.claimPendingMutations(accountID: f.account.id, limit: limit)
            return Dictionary(grouping: rows, by: \.messageID).mapValues { $0.map { "\($0.op == .add ? "+" : "-")\($0.label)" }.sorted() }
        }
        // By queue order the first three rows would split m1 (-INBOX now, -UNREAD later)
        // and mix three label sets. By set: m1 whole (the oldest set); the stars (2 rows)
        // would pass the limit of 3, so they wait whole for the next claim.
        #expect(try claim(3) == ["m1": ["-INBOX", "-UNREAD"]])
        // A set larger than the claim is cut, by whole messages.
        #expect(try claim(1) == ["m2": ["+STARRED"]])
        #expect(try claim(10) == ["m3": ["-INBOX"], "m4": ["+STARRED"], "m5": ["-INBOX"]])
        #expect(try claim(10).isEmpty)
    }

    @Test("effective labels are canonical plus queued adds minus queued removes")
    func effectiveLabels() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", labels: ["INBOX", "UNREAD"]))
        try f.store.perform([.archive, .star], on: [.message("m1")])
        #expect(try f.effective("m1") == ["STARRED", "UNREAD"])
        #expect(try f.canonical("m1") == ["INBOX", "UNREAD"])  // triage never writes canonical
    }

    @Test("triage reads a (message, label)'s effective state as the view gives it, in all six cases of canonical and queue")
    func triageAgreesWithTheView() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", labels: ["INBOX"]))
        let key = try #require(try f.store.db.scalarInt("SELECT id FROM messages WHERE gmail_id = 'm1'"))
        for canonical in [false, true] {
            for queued in [nil, "add", "remove"] as [String?] {
                try f.store.db.execute("DELETE FROM mutation_queue")
                try f.store.db.execute("DELETE FROM message_labels WHERE message_id = ? AND label = 'STARRED'", key)
                if canonical { try f.store.db.execute("INSERT INTO message_labels VALUES (?, 'STARRED')", key) }
                if let queued {
                    try f.store.db.execute("""
                        INSERT INTO mutation_queue (account_id, message_id, label, op, state, created_at, updated_at, attempted_at)
                        VALUES (?, ?, 'STARRED', ?, 'pending', 1, 1, 1)
                        """, f.account.id, key, queued)
                }
                let starred = try f.effective("m1").contains("STARRED")
                let case_ = "canonical \(canonical), queued \(queued ?? "nothing"): the view says \(starred)"
                // A change the effective labels already satisfy queues nothing; the other one does.
                #expect(try f.store.perform([.star], on: [.message("m1")], dryRun: true).deltas.isEmpty == starred, "\(case_)")
                #expect(try f.store.perform([.unstar], on: [.message("m1")], dryRun: true).deltas.isEmpty == !starred, "\(case_)")
            }
        }
    }

    @Test("effective labels count queue rows in every state, in flight included")
    func inFlightRowsStillCount() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 500)
        #expect(try f.queue().first?.state == .inFlight)
        #expect(try f.effective("m1") == ["UNREAD"])
        #expect(try f.inbox().isEmpty)
    }

    @Test("collision: none + any inserts a pending row")
    func collisionNoneInserts() throws {
        let f = try archivedFixture()
        let row = try #require(try f.queue().first)
        #expect(row.op == .remove && row.state == .pending && row.label == "INBOX")
    }

    @Test("collision: pending + same op is a no-op (idempotent)")
    func collisionPendingSameIsNoOp() throws {
        let f = try archivedFixture()
        let before = try f.queue()
        // Marking twice queues nothing: the effective labels already satisfy it.
        #expect(try f.store.perform([.archive], on: [.message("m1")]).deltas.isEmpty)
        #expect(try f.queue() == before)
    }

    @Test("collision: pending + opposite op deletes the row, nothing was ever sent")
    func collisionPendingOppositeDeletes() throws {
        let f = try archivedFixture()
        let result = try f.store.perform([.unarchive], on: [.message("m1")])
        #expect(result.deltas.map(\.outcome) == [.cancelled])
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox() == ["m1"])
        try f.checkDerivedTables()
    }

    @Test("collision: in-flight + opposite op flips forward and resets to pending")
    func collisionInFlightOppositeFlips() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 500)
        let result = try f.store.perform([.unarchive], on: [.message("m1")])
        #expect(result.deltas.map(\.outcome) == [.flipped])
        let row = try #require(try f.queue().first)
        #expect(row.id == claimed[0].id)  // the same row, not a second insert
        #expect(row.op == .add && row.state == .pending && row.expectedHistoryID == nil)
        #expect(try f.inbox() == ["m1"])
        try f.checkDerivedTables()
    }

    @Test("collision: cancelling against a server that changed meanwhile still reaches the new intent")
    func cancelAfterServerChange() throws {
        let f = try archivedFixture()
        // The server archived it too (another device), then the user unarchives here.
        try f.store.applyHistoryChanges(
            [.labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 200)], accountID: f.account.id)
        let result = try f.store.perform([.unarchive], on: [.message("m1")])
        #expect(result.deltas.map(\.outcome) == [.inserted])
        #expect(try f.queue().map(\.op) == [.add])
        #expect(try f.inbox() == ["m1"])
    }

    @Test("a row being sent is flipped, not deleted, so its send cannot be lost")
    func claimedRowFlips() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        #expect(try f.store.perform([.unarchive], on: [.message("m1")]).deltas.map(\.outcome) == [.flipped])
        // The in-progress send of "remove INBOX" completes: the row is not marked in flight
        // for the old op; it stays pending with the new op for the next pass.
        #expect(try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 500) == 0)
        let row = try #require(try f.queue().first)
        #expect(row.op == .add && row.state == .pending)
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).map(\.op) == [.add])
    }

    @Test("claimed rows are not claimed again until released or expired")
    func claims() throws {
        let f = try archivedFixture()
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).count == 1)
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).isEmpty)
        f.clock.advance(by: Store.claimLifetimeMilliseconds + 1)
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).count == 1)
    }

    @Test("a transient failure keeps the row pending with attempts, error and a retry time")
    func transientFailure() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.recordMutationFailure(ids: claimed.map(\.id), error: "HTTP 503", retryAfterMilliseconds: 60_000)
        let row = try #require(try f.queue().first)
        #expect(row.state == .pending && row.attempts == 1 && row.lastError == "HTTP 503")
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).isEmpty)
        f.clock.advance(by: 60_000)
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 10).count == 1)
        #expect(try f.inbox().isEmpty)
    }

    @Test("retire on echo, not on 2xx: the row stays until the cursor passes its gate")
    func retireOnEcho() throws {
        let f = try archivedFixture()
        try f.store.recordInitialCursor(accountID: f.account.id, historyID: 100)
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 150)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 0)
        #expect(try f.inbox().isEmpty)  // no flicker between the 2xx and the echo
        // The echo lands: canonical loses INBOX, then the poll advances the cursor.
        try f.store.applyHistoryChanges(
            [.labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 150)], accountID: f.account.id)
        try f.store.advanceCursor(accountID: f.account.id, to: 160)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 1)
        #expect(try f.queue().isEmpty)
        #expect(try f.inbox().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("rollup in lockstep on enqueue, retire and drop")
    func rollupLockstep() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t", minute: 1), f.snapshot("m2", thread: "t", minute: 2))
        try f.store.recordInitialCursor(accountID: f.account.id, historyID: 100)
        try f.store.perform([.read], on: [.thread("t")])
        #expect(try f.rollup("t")?.unread == false)
        try f.checkDerivedTables()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        // Drop one row (terminal failure): that message reads unread again at once.
        let dropped = try f.store.dropMutations([(claimed[0].id, claimed[0].op)], reason: "refused")
        #expect(dropped.rowIDs == [claimed[0].id] && dropped.messages.count == 1)
        #expect(try f.rollup("t")?.unreadCount == 1)
        try f.checkDerivedTables()
        // Retire the other without its echo ever reaching canonical (a guard skipped it):
        // the rollup follows what readers now see.
        try f.store.markInFlight([(claimed[1].id, claimed[1].op)], gate: 90)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 1)
        #expect(try f.rollup("t")?.unreadCount == 2)
        try f.checkDerivedTables()
    }

    @Test("a terminal failure drops the row and readers see server truth")
    func dropRestoresCanonical() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        #expect(try f.store.dropMutations(claimed.map { ($0.id, $0.op) }, reason: "refused").messages == ["m1"])
        #expect(try f.effective("m1") == ["INBOX", "UNREAD"])
        #expect(try f.inbox() == ["m1"])
    }

    // MARK: - A change that may have reached Gmail is never treated as unsent (issue 17 §1)

    /// A row a request carried, and every way its claim can be released afterwards.
    func attemptedThenReleased(_ release: (StoreFixture, [QueuedMutation]) throws -> Void) throws -> StoreFixture {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        _ = try f.store.markMutationsAttempted(claimed.map { ($0.id, $0.op) })
        try release(f, claimed)
        return f
    }

    @Test("collision: a pending row a request carried flips forward, whatever released its claim",
          arguments: ["a transient failure (5xx, 429, network, timeout)", "a released claim (lost getProfile, stopped pass)",
                      "an expired claim (killed sender)"])
    func attemptedRowFlips(_ release: String) throws {
        let f = try attemptedThenReleased { f, claimed in
            switch release {
            case "a transient failure (5xx, 429, network, timeout)":
                try f.store.recordMutationFailure(ids: claimed.map(\.id), error: "network error", retryAfterMilliseconds: 0)
            case "a released claim (lost getProfile, stopped pass)":
                try f.store.releaseClaims(ids: claimed.map(\.id))
            default:
                f.clock.advance(by: Store.claimLifetimeMilliseconds + 1)
            }
        }
        let attempted = try #require(try f.queue().first?.attemptedAt)
        let result = try f.store.perform([.unarchive], on: [.message("m1")])
        #expect(result.deltas.map(\.outcome) == [.flipped])
        let row = try #require(try f.queue().first)
        #expect(row.op == .add && row.state == .pending && row.attemptedAt == attempted)
        #expect(try f.inbox() == ["m1"])
        try f.checkDerivedTables()
    }

    @Test("undo of a change whose answer was lost reverses it at Gmail instead of cancelling it")
    func undoAfterLostAnswerFlips() throws {
        let f = try attemptedThenReleased { f, claimed in
            try f.store.recordMutationFailure(ids: claimed.map(\.id), error: "network error", retryAfterMilliseconds: 0)
        }
        let undone = try f.store.undo(actionID: nil, accountID: f.account.id)
        #expect(undone.deltas.map(\.outcome) == [.flipped])
        #expect(try f.queue().map(\.op) == [.add])
        // And a redo after that: the row may still be at Gmail either way, so it stays.
        #expect(try f.store.perform([.archive], on: [.message("m1")]).deltas.map(\.outcome) == [.flipped])
        #expect(try f.queue().map(\.op) == [.remove])
        try f.checkDerivedTables()
    }

    @Test("a row no request ever carried is still cancelled locally")
    func unattemptedRowCancels() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.releaseClaims(ids: claimed.map(\.id))  // the pass stopped before its request
        #expect(try f.queue().first?.attemptedAt == nil)
        #expect(try f.store.perform([.unarchive], on: [.message("m1")]).deltas.map(\.outcome) == [.cancelled])
        #expect(try f.queue().isEmpty)
    }

    @Test("a row flipped or cancelled since its claim is not marked attempted, so its old op is never sent")
    func changedRowNotMarked() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", minute: 1), f.snapshot("m2", minute: 2))
        try f.store.perform([.archive], on: [.message("m1"), .message("m2")])
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        // The claim outlives its lifetime in a long pass: the user's unarchive of m1
        // cancels its row (no request ever carried it) and m2's is re-queued the same way.
        f.clock.advance(by: Store.claimLifetimeMilliseconds + 1)
        try f.store.perform([.unarchive], on: [.message("m1")])
        let marked = try f.store.markMutationsAttempted(claimed.map { ($0.id, $0.op) })
        #expect(marked == Set(claimed.filter { $0.messageID == "m2" }.map(\.id)))
        #expect(try f.queue().map(\.messageID) == ["m2"])
    }

    @Test("the first attempt's time is kept through later attempts and flips")
    func attemptTimeKept() throws {
        let f = try attemptedThenReleased { f, claimed in try f.store.releaseClaims(ids: claimed.map(\.id)) }
        let first = try #require(try f.queue().first?.attemptedAt)
        f.clock.advance(by: 1_000)
        let again = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        _ = try f.store.markMutationsAttempted(again.map { ($0.id, $0.op) })
        #expect(try f.queue().first?.attemptedAt == first)
    }

    // MARK: - Rejections keep Gmail's reason (issue 17 §3)

    @Test("a rejected change is dropped with Gmail's reason, for hd-pending and the undo history")
    func rejectionRecorded() throws {
        let f = try archivedFixture()
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.dropMutations(claimed.map { ($0.id, $0.op) }, reason: "request rejected by Gmail: Invalid label: INBOX")
        let rejected = try f.store.rejectedChanges(accountID: f.account.id)
        #expect(rejected.map(\.messageID) == ["m1"])
        #expect(rejected.first?.reason == "request rejected by Gmail: Invalid label: INBOX")
        #expect(rejected.first?.op == .remove && rejected.first?.label == "INBOX")
        let action = try #require(try f.store.recentActions(limit: 1).first)
        #expect(rejected.first?.actionID == action.id)
        #expect(action.rejected == 1 && action.rejection == "request rejected by Gmail: Invalid label: INBOX")
        // Listed for a week, then forgotten.
        f.clock.advance(by: Store.rejectionLifetimeMilliseconds + 1)
        #expect(try f.store.rejectedChanges(accountID: f.account.id).isEmpty)
        #expect(try f.store.recentActions(limit: 1).first?.rejected == 0)
    }

    // MARK: - No flicker after a history expiry (issue 17 §4)

    @Test("after an expired cursor, a row retires only once the re-list has confirmed its message")
    func retirementWaitsForRelist() throws {
        let f = try archivedFixture()
        try f.store.recordInitialCursor(accountID: f.account.id, historyID: 100)
        let claimed = try f.store.claimPendingMutations(accountID: f.account.id, limit: 10)
        try f.store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 150)
        // History expired before the echo was polled: the fresh cursor passes the gate.
        try f.store.resetForExpiredCursor(accountID: f.account.id, freshHistoryID: 500)
        #expect(try f.store.mutationsReadyToRetire(accountID: f.account.id) == 0)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 0)
        #expect(try f.inbox().isEmpty)  // canonical still says INBOX: the row must stay
        // The re-list lists the message as Gmail has it now: archived.
        _ = try f.store.applyBackfillPage([f.snapshot("m1", history: 400, labels: ["UNREAD"])], accountID: f.account.id,
                                          nextPageToken: nil, listed: 1, estimate: 1)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 1)
        #expect(try f.inbox().isEmpty)
        #expect(try f.queue().isEmpty)
        try f.checkDerivedTables()
    }

    // optimistic-mutations.md, "Crash safety": illegal op/state values are rejected on
    // INSERT and on UPDATE (by CHECK constraints since migration 007, by triggers before).
    @Test("a schema guard rejects an inserted row with an illegal op or state")
    func insertGuard() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1"))
        let key = try #require(try f.db.scalarInt("SELECT id FROM messages"))
        for (op, state) in [("toggle", "pending"), ("add", "sent"), ("add", "in_flight")] {
            do {
                try f.db.execute("""
                    INSERT INTO mutation_queue (account_id, message_id, label, op, state, created_at, updated_at)
                    VALUES (?, ?, 'INBOX', ?, ?, 0, 0)
                    """, f.account.id, key, op, state)
                Issue.record("accepted op \(op) state \(state)")
            } catch SQLiteError.constraintCheck {
            }
        }
        #expect(try f.queue().isEmpty)
    }

    @Test("a schema guard rejects an update to an illegal op or state")
    func updateGuard() throws {
        let f = try archivedFixture()
        for assignment in ["op = 'toggle'", "state = 'done'", "state = 'in_flight', expected_history_id = NULL"] {
            do {
                try f.db.execute("UPDATE mutation_queue SET \(assignment)")
                Issue.record("accepted \(assignment)")
            } catch SQLiteError.constraintCheck {
            }
        }
        #expect(try f.queue().map(\.op) == [.remove])
    }

    @Test("at most one live row per (account, message, label)")
    func uniqueRow() throws {
        let f = try archivedFixture()
        let key = try #require(try f.db.scalarInt("SELECT id FROM messages"))
        #expect(throws: SQLiteError.self) {
            try f.db.execute("""
                INSERT INTO mutation_queue (account_id, message_id, label, op, state, created_at, updated_at)
                VALUES (?, ?, 'INBOX', 'add', 'pending', 0, 0)
                """, f.account.id, key)
        }
    }
}
