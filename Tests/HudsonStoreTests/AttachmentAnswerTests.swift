// has:attachment and filename: without stored bodies (issue 37 §4): Gmail's answer where
// it is known (the stored parts, or Gmail's own has:attachment), and an honest count of
// the matches that rest on a guess where it is not.
import Foundation
import HudsonQuery
import HudsonStore
import HudsonTestSupport
import SQLite
import Testing

@Suite("has:attachment and filename: give Gmail's answer, or say how many matches are a guess")
struct AttachmentAnswerTests {
    let options = SearchOptions(now: 1_767_225_600_000)

    /// Body-less messages whose Content-Type guess is right and wrong, and two with bodies.
    /// Gmail's answer: `pdf-alone`, `mixed-attached`, `stored-attached` have an attachment.
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture()
        func message(_ id: String, _ minute: Int64, _ contentType: String?, labels: [String] = ["INBOX"]) -> MessageSnapshot {
            var snapshot = f.snapshot(id, minute: minute, labels: labels)
            snapshot.headers.contentType = contentType
            return snapshot
        }
        try f.apply(
            message("mixed-text", 1, "multipart/mixed; boundary=b"),        // guessed yes, Gmail no (two text parts)
            message("digest", 2, "multipart/mixed; boundary=d"),            // guessed yes, Gmail no (a digest)
            message("pdf-alone", 3, "application/pdf"),                     // guessed no, Gmail yes
            message("mixed-attached", 4, "multipart/mixed; boundary=c"),    // guessed yes, Gmail yes
            message("plain", 5, "text/plain"),                              // guessed no, Gmail no
            message("stored-attached", 6, "multipart/mixed; boundary=e"),
            message("stored-plain", 7, "multipart/mixed; boundary=f"))
        try f.store.saveBody(MessageBody(text: "x", attachments: [
            AttachmentInfo(partID: "1", filename: "minutes.pdf", mimeType: "application/pdf", size: 10),
        ]), gmailID: "stored-attached", accountID: f.account.id)
        try f.store.saveBody(MessageBody(text: "y"), gmailID: "stored-plain", accountID: f.account.id)
        return f
    }

    func search(_ f: StoreFixture, _ text: String) throws -> [String] {
        try f.store.searchMessages(Query.parse(text), options: options, limit: 100).map(\.messageID).sorted()
    }

    func guesses(_ f: StoreFixture, _ text: String) throws -> AttachmentGuesses? {
        try f.store.attachmentGuesses(Query.parse(text), options: options)
    }

    @Test("before Gmail answers: the matches that rest on a guess and the messages that may match are counted, by polarity")
    func guessesCounted() throws {
        let f = try fixture()
        #expect(try search(f, "has:attachment") == ["digest", "mixed-attached", "mixed-text", "stored-attached"])
        // Three of the four matches are guesses; pdf-alone and plain may match too.
        #expect(try guesses(f, "has:attachment") == AttachmentGuesses(guessedMatches: 3, mayAlsoMatch: 2, terms: ["has:attachment"]))
        // Negated, the same five messages rest on a guess, the other way round.
        #expect(try search(f, "-has:attachment") == ["pdf-alone", "plain", "stored-plain"])
        #expect(try guesses(f, "-has:attachment") == AttachmentGuesses(guessedMatches: 2, mayAlsoMatch: 3, terms: ["has:attachment"]))
        #expect(try guesses(f, "-(-has:attachment)") == guesses(f, "has:attachment"))
        // Under OR with a term that decides the message, the guess does not matter.
        #expect(try guesses(f, "has:attachment OR subject:Subject") == nil)
        // filename: needs the parts: every body-less message may match, none matches.
        #expect(try search(f, "filename:pdf") == ["stored-attached"])
        #expect(try guesses(f, "filename:pdf") == AttachmentGuesses(guessedMatches: 0, mayAlsoMatch: 5, terms: ["filename:"]))
        #expect(try guesses(f, "-filename:pdf has:attachment")?.terms == ["has:attachment", "filename:"])
        // A query that reads no attachment owes no note.
        #expect(try guesses(f, "in:inbox") == nil)
        #expect(try guesses(f, "larger:1K smaller:1M") == nil)
        // Scoped to another account: nothing there.
        var other = options
        other.accountID = f.account.id + 1
        #expect(try f.store.attachmentGuesses(Query.parse("has:attachment"), options: other) == nil)
    }

    @Test("once Gmail has answered has:attachment, search gives its answer exactly and owes no note")
    func gmailAnswers() throws {
        let f = try fixture()
        #expect(try f.store.guessedAttachmentCount(accountID: f.account.id) == 5)
        #expect(try f.store.messagesWithGuessedAttachment(accountID: f.account.id, limit: 2).map(\.gmailID) == ["plain", "mixed-attached"])
        let threadBefore = try #require(try f.rollup("pdf-alone")).hasAttachment
        let seqBefore = try f.store.db.scalarInt("SELECT max(seq) FROM message_seq") ?? 0
        let decided = try f.store.recordAttachmentAnswers(
            with: ["pdf-alone", "mixed-attached", "stored-attached", "not-in-the-store", "../../etc/passwd"],
            without: ["mixed-text", "digest", "plain", "stored-plain"], accountID: f.account.id)
        #expect(decided == 5)  // the stored bodies keep their own answer
        #expect(try search(f, "has:attachment") == ["mixed-attached", "pdf-alone", "stored-attached"])
        #expect(try search(f, "-has:attachment") == ["digest", "mixed-text", "plain", "stored-plain"])
        #expect(try guesses(f, "has:attachment") == nil)
        #expect(try f.store.guessedAttachmentCount(accountID: f.account.id) == 0)
        // filename: is still unknown for what Gmail says has an attachment, and known for the rest.
        #expect(try guesses(f, "filename:pdf") == AttachmentGuesses(guessedMatches: 0, mayAlsoMatch: 2, terms: ["filename:"]))
        // The thread list follows, and only the three flags that changed moved in the change sequence.
        let threadAfter = try #require(try f.rollup("pdf-alone")).hasAttachment
        #expect(!threadBefore && threadAfter)
        let moved = try f.store.db.map("SELECT gmail_id FROM message_seq WHERE seq > ? ORDER BY gmail_id", seqBefore) { $0.string(0) }
        #expect(moved == ["digest", "mixed-text", "pdf-alone"])
        try f.checkDerivedTables()
        // A newer snapshot (labels changed) keeps Gmail's answer, not the Content-Type guess.
        var newer = f.snapshot("digest", history: 200, minute: 2, labels: ["INBOX", "STARRED"])
        newer.headers.contentType = "multipart/mixed; boundary=d"
        try f.apply(newer)
        #expect(try search(f, "has:attachment").contains("digest") == false)
        // Asked again with another answer, a known flag stays.
        #expect(try f.store.recordAttachmentAnswers(with: ["digest"], without: [], accountID: f.account.id) == 0)
        #expect(try search(f, "has:attachment").contains("digest") == false)
        try f.checkDerivedTables()
    }

    @Test("a stored body decides the flag, whatever was guessed or answered before")
    func bodyDecides() throws {
        let f = try fixture()
        #expect(try search(f, "has:attachment").contains("mixed-text"))
        try f.store.saveBody(MessageBody(text: "one, two"), gmailID: "mixed-text", accountID: f.account.id)
        #expect(try !search(f, "has:attachment").contains("mixed-text"))
        #expect(try guesses(f, "has:attachment") == AttachmentGuesses(guessedMatches: 2, mayAlsoMatch: 2, terms: ["has:attachment"]))
        try f.checkDerivedTables()
    }

    @Test("larger: and smaller: compare Gmail's sizeEstimate, which a body neither needs nor changes")
    func sizesNeedNoBody() throws {
        let f = try StoreFixture()
        for (index, size) in [500, 5_000, 50_000, 2_000_000].enumerated() {
            var snapshot = f.snapshot("s\(size)", minute: Int64(index))
            snapshot.sizeEstimate = Int64(size)
            try f.apply(snapshot)
        }
        let queries = ["larger:1K", "smaller:10K", "larger:4999", "smaller:5000", "larger:1M", "size:49999", "larger:1K smaller:1M"]
        let before = try queries.map { try search(f, $0) }
        #expect(before == [["s2000000", "s5000", "s50000"], ["s500", "s5000"], ["s2000000", "s5000", "s50000"], ["s500"],
                           ["s2000000"], ["s2000000", "s50000"], ["s5000", "s50000"]])
        for query in queries { #expect(try guesses(f, query) == nil) }
        for size in [500, 5_000, 50_000, 2_000_000] {
            try f.store.saveBody(MessageBody(text: "body"), gmailID: "s\(size)", accountID: f.account.id)
        }
        #expect(try queries.map { try search(f, $0) } == before)
    }

    @Test("migration 028 on a store of version 022: a stored body's flag is known, a body-less one's a guess")
    func migration() throws {
        let dir = TemporaryDirectory()
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let path = dir.path("at-022.sqlite3")
        try Connection(path: path, options: ConnectionOptions(access: .readWriteCreate))
            .execute(try String(contentsOf: fixtures.appendingPathComponent("022_inbox_listed_from_thread_labels.sql"), encoding: .utf8))
        let store = try Store.open(path: path, access: .readWrite)
        let rows = try store.db.map("SELECT body_state, attachment_known FROM messages") { ($0.int(0), $0.int(1)) }
        #expect(rows.count == 3 && rows.contains { $0.0 == 1 } && rows.contains { $0.0 == 0 })
        #expect(rows.allSatisfy { $0.0 == $0.1 }, "\(rows)")
        #expect(try store.guessedAttachmentCount(accountID: nil) == rows.filter { $0.0 == 0 }.count)
    }
}
