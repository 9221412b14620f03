import HudsonStore
import Testing

@Suite("History changes and tombstones")
struct HistoryTests {
    @Test("label changes apply to canonical labels and carry their history id")
    func labelChanges() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100))
        let report = try f.store.applyHistoryChanges([
            .labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 110),
            .labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED", "Label_3"], historyID: 120),
        ], accountID: f.account.id)
        #expect(report.applied == 2 && report.unknownMessageIDs.isEmpty)
        #expect(try f.canonical("m1") == ["Label_3", "STARRED", "UNREAD"])
        #expect(try f.inbox().isEmpty)
        #expect(try f.rollup("m1")?.starred == true)
        try f.checkDerivedTables()
    }

    @Test("r10_history_record_adding_and_removing_labels_applies_both: one record's labelsAdded and labelsRemoved share its id")
    func r10_history_record_adding_and_removing_labels_applies_both() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100, labels: ["INBOX", "UNREAD"]))
        // One modify on another device archived and starred the message: one record, id 110.
        let report = try f.store.applyHistoryChanges([
            .labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED"], historyID: 110),
            .labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 110),
        ], accountID: f.account.id)
        #expect(report.applied == 2)
        #expect(try f.canonical("m1") == ["STARRED", "UNREAD"])
        #expect(try f.inbox().isEmpty)
        // Re-polled after a crash, the same record changes nothing: the row is at version 110.
        let again = try f.store.applyHistoryChanges([
            .labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED"], historyID: 110),
            .labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 110),
        ], accountID: f.account.id)
        #expect(again.skipped == 2)
        #expect(try f.canonical("m1") == ["STARRED", "UNREAD"])
        try f.checkDerivedTables()
    }

    @Test("version guard: a snapshot taken at a record's version makes the whole record stale")
    func snapshotAtRecordVersion() throws {
        let f = try StoreFixture()
        // A snapshot at the record's version already shows the record, so the record is
        // skipped whatever the snapshot says: the stored row is not older than it.
        try f.apply(f.snapshot("m1", history: 110, labels: ["INBOX", "STARRED"]))
        let report = try f.store.applyHistoryChanges([
            .labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED"], historyID: 110),
            .labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX"], historyID: 110),
        ], accountID: f.account.id)
        #expect(report.skipped == 2)
        #expect(try f.canonical("m1") == ["INBOX", "STARRED"])
    }

    @Test("version guard, history first: a stale snapshot after a newer label change is refused")
    func historyThenStaleSnapshot() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100, labels: ["INBOX", "UNREAD"]))
        try f.store.applyHistoryChanges(
            [.labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["UNREAD"], historyID: 130)], accountID: f.account.id)
        // A snapshot fetched before the change (history 120) lands afterwards.
        #expect(try f.apply(f.snapshot("m1", history: 120, labels: ["INBOX", "UNREAD"])).stale == 1)
        #expect(try f.canonical("m1") == ["INBOX"])
        try f.checkDerivedTables()
    }

    @Test("version guard, snapshot first: re-polled history older than the snapshot is skipped")
    func snapshotThenStaleHistory() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 200, labels: ["INBOX"]))
        let report = try f.store.applyHistoryChanges(
            [.labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["UNREAD"], historyID: 150)], accountID: f.account.id)
        #expect(report.skipped == 1 && report.applied == 0)
        #expect(try f.canonical("m1") == ["INBOX"])
    }

    @Test("changes about unknown messages are reported for fetching, once each, in order")
    func unknownMessages() throws {
        let f = try StoreFixture()
        let report = try f.store.applyHistoryChanges([
            .messageAdded(messageID: "n2", threadID: "n2", historyID: 10),
            .labelsAdded(messageID: "n1", threadID: "n1", labelIDs: ["STARRED"], historyID: 11),
            .labelsAdded(messageID: "n2", threadID: "n2", labelIDs: ["STARRED"], historyID: 12),
        ], accountID: f.account.id)
        #expect(report.unknownMessageIDs == ["n2", "n1"])
    }

    @Test("applying history never moves the cursor; advancing does, once, and never backwards")
    func cursorUntouchedByApply() throws {
        let f = try StoreFixture()
        try f.store.recordInitialCursor(accountID: f.account.id, historyID: 500)
        try f.apply(f.snapshot("m1", history: 100))
        try f.store.applyHistoryChanges(
            [.labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED"], historyID: 900)], accountID: f.account.id)
        #expect(try f.store.account(id: f.account.id)?.historyID == 500)
        try f.store.advanceCursor(accountID: f.account.id, to: 950)
        try f.store.advanceCursor(accountID: f.account.id, to: 940)
        #expect(try f.store.account(id: f.account.id)?.historyID == 950)
    }

    @Test("the initial cursor is recorded once; expiry replaces it and resets backfill to pending")
    func initialCursorAndExpiry() throws {
        let f = try StoreFixture()
        #expect(try f.store.recordInitialCursor(accountID: f.account.id, historyID: 500) == 500)
        #expect(try f.store.recordInitialCursor(accountID: f.account.id, historyID: 900) == 500)
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: nil, listed: 10, estimate: 10)
        #expect(try f.store.account(id: f.account.id)?.backfillState == .complete)
        try f.store.resetForExpiredCursor(accountID: f.account.id, freshHistoryID: 1000)
        let account = try #require(try f.store.account(id: f.account.id))
        #expect(account.historyID == 1000 && account.backfillState == .pending && account.backfillPageToken == nil)
        #expect(account.backfillQuery == "after:\(1_767_225_600 - 90 * 86_400)")
    }

    @Test("r10_messages_deleted_while_history_was_expired_are_removed: what a complete re-list did not list is left to fetch again")
    func r10_relist_leaves_unlisted_messages_to_fetch_again() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100), f.snapshot("m2", history: 100, minute: 2), f.snapshot("m3", history: 100, minute: 3))
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: nil, listed: 3, estimate: 3)
        #expect(try f.store.messagesUnconfirmedByRelist(accountID: f.account.id, limit: 10).isEmpty)
        try f.store.resetForExpiredCursor(accountID: f.account.id, freshHistoryID: 1000)
        // While the listing runs, nothing is to be fetched yet.
        _ = try f.store.applyBackfillPage([f.snapshot("m3", history: 100, minute: 3)], accountID: f.account.id,
                                          nextPageToken: "2", listed: 1, estimate: 2)
        #expect(try f.store.messagesUnconfirmedByRelist(accountID: f.account.id, limit: 10).isEmpty)
        // m2 is listed (unchanged: the version guard refuses it, but it is confirmed); m1 is not.
        let last = try f.store.applyBackfillPage([f.snapshot("m2", history: 100, minute: 2)], accountID: f.account.id,
                                                 nextPageToken: nil, listed: 1, estimate: 2)
        #expect(last.stale == 1)
        #expect(try f.store.messagesUnconfirmedByRelist(accountID: f.account.id, limit: 10) == ["m1"])
        try f.store.deleteVanishedMessage(gmailID: "m1", accountID: f.account.id)
        #expect(try f.store.messagesUnconfirmedByRelist(accountID: f.account.id, limit: 10).isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a deleted message leaves the store, the index and its thread, and stays deleted")
    func tombstone() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", thread: "t", history: 100, minute: 1, subject: "unicorn"),
                    f.snapshot("m2", thread: "t", history: 100, minute: 2))
        try f.store.applyHistoryChanges([.messageDeleted(messageID: "m2", historyID: 300)], accountID: f.account.id)
        #expect(try f.store.effectiveLabels(gmailID: "m2", accountID: f.account.id) == nil)
        #expect(try f.rollup("t")?.messageCount == 1)
        #expect(try f.store.changes(since: 0).contains { $0.messageID == "m2" && $0.deleted })
        // A snapshot fetched before the deletion must not resurrect it.
        #expect(try f.apply(f.snapshot("m2", thread: "t", history: 250)).stale == 1)
        try f.store.deleteVanishedMessage(gmailID: "m1", accountID: f.account.id)
        #expect(try f.rollup("t") == nil)
        #expect(try f.ftsHits("unicorn").isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a deletion of a message never seen still guards against a stale snapshot of it")
    func deletionOfUnknownMessage() throws {
        let f = try StoreFixture()
        try f.store.applyHistoryChanges([.messageDeleted(messageID: "ghost", historyID: 300)], accountID: f.account.id)
        #expect(try f.apply(f.snapshot("ghost", history: 200)).stale == 1)
        #expect(try f.apply(f.snapshot("ghost", history: 400)).applied == 1)
    }

    @Test("a hydration 404 tombstones the message and removes its queued changes")
    func tombstoneRemovesQueue() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1"))
        try f.store.perform([.archive], on: [.message("m1")])
        #expect(try f.queue().count == 1)
        #expect(try f.store.deleteVanishedMessage(gmailID: "m1", accountID: f.account.id))
        #expect(try f.queue().isEmpty)
        try f.checkDerivedTables()
    }
}

@Suite("Widening the backfill window")
struct WideningTests {
    @Test("widening a complete window lists only the older range, with both bounds fixed")
    func widenComplete() throws {
        let f = try StoreFixture()
        let consent: Int64 = 1_767_225_600
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: nil, listed: 5, estimate: 5)
        try f.store.widenBackfillWindow(accountID: f.account.id, lookbackDays: 365)
        var account = try #require(try f.store.account(id: f.account.id))
        #expect(account.backfillState == .pending)
        #expect(account.backfillQuery == "after:\(consent - 365 * 86_400) before:\(consent - 90 * 86_400)")
        // When the older range is done, the window is the whole widened range.
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: "p2", listed: 100, estimate: 300)
        #expect(try f.store.account(id: f.account.id)?.backfillQuery == account.backfillQuery)
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: nil, listed: 100, estimate: nil)
        account = try #require(try f.store.account(id: f.account.id))
        #expect(account.backfillState == .complete)
        #expect(account.lookbackDays == 365)
    }

    @Test("widening during a listing lets it finish, then lists the older range")
    func widenDuringListing() throws {
        let f = try StoreFixture()
        let consent: Int64 = 1_767_225_600
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: "p2", listed: 100, estimate: 300)
        try f.store.widenBackfillWindow(accountID: f.account.id, lookbackDays: 0)
        #expect(try f.store.account(id: f.account.id)?.backfillQuery == "after:\(consent - 90 * 86_400)")
        try f.store.recordBackfillPage(accountID: f.account.id, nextPageToken: nil, listed: 100, estimate: nil)
        let account = try #require(try f.store.account(id: f.account.id))
        #expect(account.backfillState == .pending)
        #expect(account.backfillQuery == "before:\(consent - 90 * 86_400)")
    }

    @Test("narrowing is refused")
    func narrowing() throws {
        let f = try StoreFixture()
        #expect(throws: StoreError.self) { try f.store.widenBackfillWindow(accountID: f.account.id, lookbackDays: 30) }
        try f.store.widenBackfillWindow(accountID: f.account.id, lookbackDays: 90)  // unchanged: fine
    }
}

@Suite("Regressions found by the cookbook")
struct HistoryRegressionTests {
    @Test("r8_one history record that adds and removes labels on a message applies both halves")
    func addAndRemoveInOneRecord() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m1", history: 100, labels: ["INBOX", "Label_2"]))
        let report = try f.store.applyHistoryChanges([
            .labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED", "Label_1"], historyID: 120),
            .labelsRemoved(messageID: "m1", threadID: "m1", labelIDs: ["INBOX", "Label_2"], historyID: 120),
        ], accountID: f.account.id)
        #expect(report.applied == 2)
        #expect(try f.canonical("m1") == ["Label_1", "STARRED"])
        // Re-polling the same record later changes nothing.
        try f.store.applyHistoryChanges(
            [.labelsAdded(messageID: "m1", threadID: "m1", labelIDs: ["STARRED", "Label_1"], historyID: 120)], accountID: f.account.id)
        #expect(try f.canonical("m1") == ["Label_1", "STARRED"])
        try f.checkDerivedTables()
    }
}
