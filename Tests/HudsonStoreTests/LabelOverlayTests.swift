// Labels as objects in the store (issue 21 §2): the overlay of label operations, composed
// with canonical labels by the one view, and every derived table kept in step.
import Foundation
import HudsonQuery
@testable import HudsonStore
import SQLite
import Testing

@Suite("Label objects: local-first create, rename and delete over canonical labels")
struct LabelOverlayTests {
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        try f.store.replaceLabels(accountID: f.account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "UNREAD", name: "UNREAD", kind: .system),
            LabelInfo(id: "Label_1", name: "Work", kind: .user), LabelInfo(id: "Label_2", name: "Travel/2026", kind: .user),
        ])
        try f.apply(f.snapshot("m1", thread: "t1", history: 100, minute: 1, labels: ["INBOX", "Label_1"]),
                    f.snapshot("m2", thread: "t1", history: 101, minute: 2, labels: ["INBOX", "UNREAD"]),
                    f.snapshot("m3", thread: "t3", history: 102, minute: 3, labels: ["Label_1", "Label_2"]))
        return f
    }

    func names(_ f: StoreFixture) throws -> [String] {
        try f.store.labels(accountID: f.account.id).compactMap(\.name)
    }

    func canonicalNames(_ f: StoreFixture) throws -> [String] {
        try f.db.map("SELECT coalesce(name, id) FROM labels WHERE account_id = ? ORDER BY 1", f.account.id) { $0.string(0) }
    }

    func search(_ f: StoreFixture, _ text: String) throws -> [String] {
        let options = SearchOptions(accountID: f.account.id, now: f.clock.now)
        return try f.store.searchMessages(try Query.parse(text), options: options, limit: 100).map(\.messageID).sorted()
    }

    @Test("create: a provisional label every read shows at once; canonical labels untouched")
    func createShowsAtOnce() throws {
        let f = try fixture()
        let before = try canonicalNames(f)
        let label = try f.store.createLabel(name: "  Receipts/2026 ", accountID: f.account.id)
        #expect(label.name == "Receipts/2026" && label.id.hasPrefix(Store.provisionalLabelPrefix))
        #expect(try names(f).contains("Receipts/2026"))
        #expect(try canonicalNames(f) == before)
        #expect(try f.store.label(named: "receipts-2026", accountID: f.account.id)?.id == label.id)
        try f.store.perform([.addLabel("Receipts/2026")], on: [.thread("t1")])
        #expect(try search(f, "label:receipts/2026") == ["m1", "m2"])
        #expect(try f.store.labelCounts(accountID: f.account.id).first { $0.label.id == label.id }?.threads == 1)
        try f.checkDerivedTables()
    }

    @Test("hd-mark --create: an unknown +LABEL is created in the same transaction; -LABEL never creates")
    func performCreates() throws {
        let f = try fixture()
        #expect(throws: StoreError.unknownLabel("New")) { try f.store.perform([.addLabel("New")], on: [.message("m1")]) }
        #expect(try !names(f).contains("New"))
        let result = try f.store.perform([.addLabel("New")], on: [.message("m1")], createLabels: true)
        let id = try #require(try f.store.label(named: "New", accountID: f.account.id)?.id)
        #expect(result.deltas.map(\.label) == [id] && id.hasPrefix(Store.provisionalLabelPrefix))
        #expect(throws: StoreError.unknownLabel("Other")) {
            try f.store.perform([.removeLabel("Other")], on: [.message("m1")], createLabels: true)
        }
        // A dry run creates nothing.
        _ = try f.store.perform([.addLabel("Dry")], on: [.message("m1")], dryRun: true, createLabels: true)
        #expect(try !names(f).contains("Dry"))
        try f.checkDerivedTables()
    }

    @Test("bad names are refused with nothing written: empty, control characters, system labels, a name taken")
    func badNames() throws {
        let f = try fixture()
        let before = try f.store.pendingLabelChanges()
        for bad in ["", "   ", "a\u{1B}[31mb", "tab\there", "INBOX", "inbox", "Spam", "Flip\u{202E}txt", "Del\u{7F}", "Iso\u{2066}x",
                    "C1\u{85}", "Bell\u{07}", "Two\r\nLines"] {
            #expect(throws: StoreError.self) { try f.store.createLabel(name: bad, accountID: f.account.id) }
        }
        #expect(throws: StoreError.labelExists("Work")) { try f.store.createLabel(name: "work", accountID: f.account.id) }
        #expect(throws: StoreError.labelExists("Travel/2026")) { try f.store.renameLabel("Work", to: "TRAVEL/2026", accountID: f.account.id) }
        #expect(throws: StoreError.systemLabel("INBOX")) { try f.store.renameLabel("INBOX", to: "Box", accountID: f.account.id) }
        #expect(throws: StoreError.systemLabel("UNREAD")) { try f.store.deleteLabel("UNREAD", accountID: f.account.id) }
        #expect(throws: StoreError.unknownLabel("Nope")) { try f.store.deleteLabel("Nope", accountID: f.account.id) }
        #expect(throws: StoreError.unknownLabel("Nope")) { try f.store.renameLabel("Nope", to: "X", accountID: f.account.id) }
        #expect(try f.store.pendingLabelChanges() == before)
    }

    @Test("a label Gmail has whose name breaks the rule is kept, and named by the spelling text shows for it, or by its id")
    func hostileNameFromGmail() throws {
        let f = try fixture()
        let evil = "Evil\u{1B}[2J\u{202E}"
        try f.store.replaceLabels(accountID: f.account.id, with: try f.store.labels(accountID: f.account.id).filter { $0.localChange == nil }
                                  + [LabelInfo(id: "Label_66", name: evil, kind: .user)])
        #expect(try f.store.label(named: "Evil\\e[2J\\u{202E}", accountID: f.account.id)?.id == "Label_66")
        #expect(try f.store.label(named: "evil\\e[2j\\u{202e}", accountID: f.account.id)?.id == "Label_66")
        #expect(try f.store.label(named: "Label_66", accountID: f.account.id)?.name == evil)
        #expect(try f.store.label(named: evil, accountID: f.account.id)?.id == "Label_66")
        #expect(try f.store.label(named: "Evil[2J", accountID: f.account.id) == nil)
        #expect(LabelNameRule.escaped(evil) == "Evil\\e[2J\\u{202E}" && LabelNameRule.escaped("a\\b") == "a\\\\b")
        // A name that keeps the rule has no second spelling.
        #expect(try f.store.label(named: "Work", accountID: f.account.id) != nil)
    }

    @Test("rename: the new name at once; a listing before Gmail's answer cannot bring the old name back")
    func renameSurvivesStaleListing() throws {
        let f = try fixture()
        try f.store.renameLabel("Work", to: "Jobs", accountID: f.account.id)
        #expect(try names(f).contains("Jobs") && !names(f).contains("Work"))
        #expect(try search(f, "label:jobs") == ["m1", "m3"])
        #expect(try f.store.label(named: "Work", accountID: f.account.id) == nil)
        let listing = [LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "Label_1", name: "Work", kind: .user),
                       LabelInfo(id: "Label_2", name: "Travel/2026", kind: .user)]
        try f.store.replaceLabels(accountID: f.account.id, with: listing, listedAt: f.clock.now)
        #expect(try names(f).contains("Jobs") && !names(f).contains("Work"))
        // Gmail answers the patch; a listing that began before the answer still shows "Work".
        let change = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(try f.store.markLabelChangeAttempted(change))
        let listedBefore = f.clock.now
        f.clock.advance(by: 10)
        try f.store.labelRenamed(change)
        try f.store.replaceLabels(accountID: f.account.id, with: listing, listedAt: listedBefore)
        #expect(try names(f).contains("Jobs"))
        // A listing that agrees retires the overlay row.
        var renamed = listing
        renamed[1].name = "Jobs"
        try f.store.replaceLabels(accountID: f.account.id, with: renamed, listedAt: f.clock.now)
        #expect(try f.store.pendingLabelChanges().isEmpty && names(f).contains("Jobs"))
        try f.checkDerivedTables()
    }

    @Test("delete: hidden at once, every message loses it, its removes are held back and go in flight on the delete")
    func deleteHoldsRemoves() throws {
        let f = try fixture()
        #expect(try f.store.labelDeletionImpact("work", accountID: f.account.id).messages == 2)
        let deletion = try f.store.deleteLabel("work", accountID: f.account.id)
        #expect(deletion.messages == 2 && deletion.label.id == "Label_1")
        #expect(try !names(f).contains("Work"))
        #expect(try f.effective("m1") == ["INBOX"] && f.effective("m3") == ["Label_2"])
        #expect(try f.canonical("m1").contains("Label_1"))
        #expect(try f.store.label(named: "Work", accountID: f.account.id) == nil)
        try f.checkDerivedTables()
        // The removes are never claimed: labels.delete does their work.
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).isEmpty)
        let change = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(change.op == .delete && change.previousName == "Work")
        try f.store.labelDeleted(change, gmailID: "Label_1", gate: 200)
        #expect(try f.queue().allSatisfy { $0.state == .inFlight && $0.expectedHistoryID == 200 })
        // Gmail's listing no longer has it; the echo lands; all retires.
        try f.store.replaceLabels(accountID: f.account.id, with: [LabelInfo(id: "INBOX", name: "INBOX", kind: .system)],
                                  listedAt: f.clock.now)
        #expect(try f.store.pendingLabelChanges().isEmpty)
        _ = try f.store.applyHistoryChanges([.labelsRemoved(messageID: "m1", threadID: "t1", labelIDs: ["Label_1"], historyID: 200),
                                      .labelsRemoved(messageID: "m3", threadID: "t3", labelIDs: ["Label_1"], historyID: 200)],
                                     accountID: f.account.id)
        try f.store.advanceCursor(accountID: f.account.id, to: 200)
        #expect(try f.store.retireConfirmedMutations(accountID: f.account.id) == 2)
        #expect(try f.effective("m1") == ["INBOX"])
        try f.checkDerivedTables()
    }

    @Test("a label created here and deleted before any request carried it is forgotten, with its changes")
    func deleteUnsentCreate() throws {
        let f = try fixture()
        try f.store.perform([.addLabel("Temp")], on: [.thread("t1")], createLabels: true)
        #expect(try f.queue().count == 2)
        try f.store.deleteLabel("Temp", accountID: f.account.id)
        #expect(try f.queue().isEmpty && f.store.pendingLabelChanges().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("changes using a provisional label are not claimed; Gmail's id replaces it everywhere in one transaction")
    func mappingRemapsEverything() throws {
        let f = try fixture()
        let result = try f.store.perform([.addLabel("Trips")], on: [.thread("t1"), .message("m3")], createLabels: true)
        let provisional = try #require(result.deltas.first?.label)
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).isEmpty)
        let change = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(try f.store.markLabelChangeAttempted(change))
        try f.store.labelCreated(change, gmailID: "Label_7", sentName: "Trips")
        #expect(try f.queue().map(\.label) == ["Label_7", "Label_7", "Label_7"])
        #expect(try f.db.scalarInt("SELECT count(*) FROM action_items WHERE label = ?", provisional) == 0)
        #expect(try f.db.scalarInt("SELECT count(*) FROM thread_labels WHERE label = ?", provisional) == 0)
        #expect(try f.rollup("t1")?.labels.contains("Label_7") == true)
        #expect(try search(f, "label:trips") == ["m1", "m2", "m3"])
        #expect(try f.store.claimPendingMutations(accountID: f.account.id, limit: 100).count == 3)
        try f.checkDerivedTables()
        // Undo after the mapping removes Gmail's label; the label itself stays.
        let undo = try f.store.undo()
        #expect(undo.deltas.allSatisfy { $0.label == "Label_7" && $0.op == .remove })
        #expect(try names(f).contains("Trips"))
        try f.checkDerivedTables()
    }

    @Test("a create renamed while it was out becomes a rename of Gmail's label")
    func renamedWhileCreating() throws {
        let f = try fixture()
        try f.store.createLabel(name: "Draft name", accountID: f.account.id)
        let change = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(try f.store.markLabelChangeAttempted(change))
        try f.store.renameLabel("Draft name", to: "Final name", accountID: f.account.id)
        try f.store.labelCreated(change, gmailID: "Label_8", sentName: "Draft name")
        let next = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(next.op == .rename && next.labelID == "Label_8" && next.name == "Final name")
        #expect(try f.store.label(named: "Final name", accountID: f.account.id)?.id == "Label_8")
    }

    @Test("a label deleted while its create was out is deleted at Gmail under Gmail's id; a refusal of an intent changed since changes nothing")
    func deletedWhileCreating() throws {
        let f = try fixture()
        try f.store.perform([.addLabel("Brief")], on: [.message("m1")], createLabels: true)
        let create = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(try f.store.markLabelChangeAttempted(create))
        try f.store.deleteLabel("Brief", accountID: f.account.id)
        try f.store.labelCreated(create, gmailID: "Label_8", sentName: "Brief")
        let next = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        #expect(next.op == .delete && next.labelID == "Label_8" && next.state == .pending)
        #expect(try f.store.label(named: "Brief", accountID: f.account.id) == nil)
        try f.checkDerivedTables()

        try f.store.renameLabel("Work", to: "Jobs", accountID: f.account.id)
        let rename = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first { $0.op == .rename })
        try f.store.renameLabel("Jobs", to: "Tasks", accountID: f.account.id)
        try f.store.rejectLabelChange(rename, reason: "Label name exists or conflicts")
        #expect(try f.store.label(named: "Tasks", accountID: f.account.id)?.id == "Label_1")
        #expect(try f.store.rejectedLabelChanges().isEmpty)
    }

    @Test("a provisional label and one made elsewhere with the same name become one label")
    func nameClashResolvesToOne() throws {
        let f = try fixture()
        try f.store.perform([.addLabel("Receipts")], on: [.message("m1")], createLabels: true)
        try f.store.replaceLabels(accountID: f.account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "Label_1", name: "Work", kind: .user),
            LabelInfo(id: "Label_2", name: "Travel/2026", kind: .user), LabelInfo(id: "Label_9", name: "receipts", kind: .user),
        ], listedAt: f.clock.now)
        #expect(try f.store.labels(accountID: f.account.id).filter { $0.name?.lowercased() == "receipts" }.map(\.id) == ["Label_9"])
        #expect(try f.queue().map(\.label) == ["Label_9"] && f.store.pendingLabelChanges().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a refused create drops the changes that used it, each recorded; a refused delete gives the label back")
    func refusals() throws {
        let f = try fixture()
        try f.store.perform([.addLabel("Bad")], on: [.message("m1")], createLabels: true)
        let create = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        try f.store.rejectLabelChange(create, reason: "Invalid label name")
        #expect(try f.queue().isEmpty && !names(f).contains("Bad"))
        #expect(try f.store.rejectedLabelChanges().map(\.op) == [.create])
        #expect(try f.store.rejectedChanges().map(\.labelName) == ["Bad"])
        try f.store.deleteLabel("Work", accountID: f.account.id)
        let delete = try #require(try f.store.dueLabelChanges(accountID: f.account.id).first)
        try f.store.rejectLabelChange(delete, reason: "Invalid label")
        #expect(try names(f).contains("Work") && f.effective("m1").contains("Label_1") && f.queue().isEmpty)
        try f.checkDerivedTables()
    }

    @Test("a pending rename of a label deleted on Gmail is refused and recorded by the listing")
    func renameOfLabelDeletedElsewhere() throws {
        let f = try fixture()
        try f.store.renameLabel("Travel/2026", to: "Trips/2026", accountID: f.account.id)
        try f.store.replaceLabels(accountID: f.account.id, with: [LabelInfo(id: "INBOX", name: "INBOX", kind: .system),
                                                                   LabelInfo(id: "Label_1", name: "Work", kind: .user)],
                                  listedAt: f.clock.now)
        #expect(try f.store.pendingLabelChanges().isEmpty)
        #expect(try f.store.rejectedLabelChanges().first?.reason == "the label was deleted on Gmail")
    }
}
