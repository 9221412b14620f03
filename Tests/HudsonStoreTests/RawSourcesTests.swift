// Kept RFC 822 sources (migration 018) and the export feed (issue 24 §1, §2).
import HudsonStore
import Testing

@Suite("Raw sources and the export feed")
struct RawSourcesTests {
    @Test("keep-raw is off by default and set per account")
    func setting() throws {
        let f = try StoreFixture()
        #expect(try f.store.account(id: f.account.id)?.keepRaw == false)
        try f.store.setKeepRaw(true, accountID: f.account.id)
        #expect(try f.store.account(id: f.account.id)?.keepRaw == true)
        try f.store.setKeepRaw(false, accountID: f.account.id)
        #expect(try f.store.account(id: f.account.id)?.keepRaw == false)
    }

    @Test("a hydration with a source keeps it, in the same write as the body; the source goes with its message")
    func keptWithBody() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("a"), f.snapshot("b", minute: 1))
        let source = Array("From: b@example.org\r\nSubject: x\r\n\r\n\u{FF}bytes\r\n".utf8) + [0xFF, 0x00]
        let report = try f.store.applyHydrations([Hydration(gmailID: "a", snapshot: nil, body: MessageBody(text: "x"), source: source),
                                                   Hydration(gmailID: "b", snapshot: nil, body: MessageBody(text: "y"))],
                                                  accountID: f.account.id)
        #expect(report.saved == ["a", "b"])
        #expect(try f.store.source(gmailID: "a", accountID: f.account.id) == source)
        #expect(try f.store.source(gmailID: "b", accountID: f.account.id) == nil)
        #expect(try f.store.sourceTotals(accountID: f.account.id) == (1, Int64(source.count)))
        try f.checkDerivedTables()
        #expect(try f.store.deleteVanishedMessage(gmailID: "a", accountID: f.account.id))
        #expect(try f.db.scalarInt("SELECT count(*) FROM message_sources") == 0)
    }

    @Test("the export feed: changes after a point, effective labels (queued changes included), deletions, stored sources")
    func feed() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("a", labels: ["INBOX", "UNREAD"]), f.snapshot("b", minute: 1, labels: ["Label_1"]))
        try f.store.saveSources([(gmailID: "b", source: Array("b".utf8)), (gmailID: "gone", source: [1])], accountID: f.account.id)
        let all = try f.store.exportItems(accountID: f.account.id, since: 0, limit: 100)
        #expect(all.map(\.gmailID) == ["a", "b"])
        #expect(all.map(\.labels) == [["INBOX", "UNREAD"], ["Label_1"]])
        #expect(all.map(\.sourceStored) == [false, true])
        #expect(all[0].messageIDHeader == "<a@example.org>" && all[0].sender == "Bob <bob@example.org>")
        let point = try #require(all.last?.seq)
        #expect(try f.store.exportItems(accountID: f.account.id, since: point, limit: 100).isEmpty)

        try f.store.perform([.archive, .read], on: [.message("a")])
        _ = try f.store.deleteVanishedMessage(gmailID: "b", accountID: f.account.id)
        let changed = try f.store.exportItems(accountID: f.account.id, since: point, limit: 100)
        #expect(changed.map(\.gmailID) == ["a", "b"])
        #expect(changed[0].labels.isEmpty && !changed[0].deleted)
        #expect(changed[1].deleted && !changed[1].sourceStored)
        #expect(try f.store.exportItems(accountID: f.account.id, gmailIDs: ["b", "nope"]).map(\.gmailID) == ["b"])
        #expect(try f.store.exportItems(accountID: f.account.id, since: point, limit: 1).count == 1)
    }
}
