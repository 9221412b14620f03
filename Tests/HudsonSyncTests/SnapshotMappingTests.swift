import HudsonGmail
import HudsonMail
import HudsonStore
import HudsonSync
import Testing

@Suite("SnapshotMapping and HistoryMapping")
struct SnapshotMappingTests {
    func message(_ headers: [(String, String)], historyId: String? = "123", threadId: String? = "t1",
                 internalDate: String? = "1733140800000") -> GmailMessage {
        GmailMessage(id: "m1", threadId: threadId, labelIds: ["INBOX", "CATEGORY_UPDATES"], snippet: "Tom &amp; Jerry&#39;s",
                     historyId: historyId, internalDate: internalDate, sizeEstimate: 4096,
                     payload: MessagePart(partId: "", mimeType: "multipart/mixed",
                                          headers: headers.map { MessagePartHeader(name: $0.0, value: $0.1) }))
    }

    @Test("ids, history id, date, labels, size and the kept headers are mapped; the snippet is unescaped")
    func fields() throws {
        let snapshot = try #require(SnapshotMapping.snapshot(from: message([
            ("Subject", "=?UTF-8?B?W3Jldmlld10gWsO8cmljaA==?="), ("From", "=?ISO-8859-1?Q?Andr=E9?= <andre@example.fr>"),
            ("to", "Ann <ann@example.com>"), ("Message-ID", "<abc@example.org>"), ("References", "<r1@x> <r2@x>"),
            ("In-Reply-To", "<r2@x>"), ("List-Id", "Team <team.example.org>"), ("Date", "Mon, 2 Dec 2024 13:00:00 +0100"),
        ])))
        #expect(snapshot.id == "m1" && snapshot.threadID == "t1" && snapshot.historyID == 123)
        #expect(snapshot.internalDate == 1_733_140_800_000 && snapshot.sizeEstimate == 4096)
        #expect(snapshot.labelIDs == ["INBOX", "CATEGORY_UPDATES"])
        #expect(snapshot.snippet == "Tom & Jerry's")
        #expect(snapshot.headers.subject == "[review] Zürich")
        #expect(snapshot.headers.from == "André <andre@example.fr>")
        #expect(snapshot.headers.to == "Ann <ann@example.com>")
        #expect(snapshot.headers.messageID == "<abc@example.org>" && snapshot.headers.inReplyTo == "<r2@x>")
        #expect(snapshot.headers.listID == "Team <team.example.org>" && snapshot.headers.contentType == "multipart/mixed")
    }

    @Test("an encoded display name cannot add a recipient: the stored field names the addresses the raw one does")
    func encodedNamesKeepTheirPlace() throws {
        let snapshot = try SnapshotMapping.mapped(message([
            ("From", "=?UTF-8?Q?eve=40evil.example=2C?= <boss@corp.example>"),
            ("Cc", "=?UTF-8?B?QW5uLCBCb2I=?= <ab@example.org>, carol@example.net"),
            ("Subject", "=?UTF-8?Q?caf=C3=A9?="),
        ]))
        #expect(snapshot.headers.from == #""eve@evil.example," <boss@corp.example>"#)
        #expect(try ReplyForward.recipients("From", snapshot.headers.from ?? "").map(\.address) == ["boss@corp.example"])
        #expect(snapshot.headers.cc == #""Ann, Bob" <ab@example.org>, carol@example.net"#)
        #expect(snapshot.headers.subject == "café")
    }

    @Test("a message without a thread id or with a non-integer history id cannot be mapped")
    func unmappable() {
        #expect(SnapshotMapping.snapshot(from: message([], threadId: nil)) == nil)
        #expect(SnapshotMapping.snapshot(from: message([], historyId: "x1")) == nil)
        #expect(SnapshotMapping.snapshot(from: message([], historyId: nil)) == nil)
    }

    @Test("without internalDate the Date header is the ordering key")
    func dateFallback() throws {
        let snapshot = try #require(SnapshotMapping.snapshot(from: message([("Date", "Mon, 2 Dec 2024 13:00:00 +0100")], internalDate: nil)))
        #expect(snapshot.internalDate == 1_733_140_800_000)
    }

    @Test("history records map to changes in order, with their record id as version")
    func historyMapping() throws {
        let ref = GmailMessage(id: "m1", threadId: "t1")
        let mapped = HistoryMapping.map([
            HistoryRecord(id: "10", messagesAdded: [HistoryMessageChange(message: ref)]),
            HistoryRecord(id: "11", labelsRemoved: [HistoryLabelChange(message: ref, labelIds: ["UNREAD"])]),
            HistoryRecord(id: "12", messages: [ref]),  // only the untyped list: ignored
            HistoryRecord(id: "13", messagesDeleted: [HistoryMessageChange(message: ref)]),
        ])
        #expect(mapped.changes == [
            .messageAdded(messageID: "m1", threadID: "t1", historyID: 10),
            .labelsRemoved(messageID: "m1", threadID: "t1", labelIDs: ["UNREAD"], historyID: 11),
            .messageDeleted(messageID: "m1", historyID: 13),
        ])
        #expect(mapped.refetch.isEmpty)
    }

    @Test("a history record without a usable id is not applied and does not fail the page: its messages are fetched again")
    func historyRecordWithoutUsableID() throws {
        let ref = GmailMessage(id: "m1", threadId: "t1")
        let other = GmailMessage(id: "m2", threadId: "t2")
        let mapped = HistoryMapping.map([
            HistoryRecord(id: "x", labelsAdded: [HistoryLabelChange(message: ref, labelIds: ["STARRED"])]),
            HistoryRecord(id: nil, messagesDeleted: [HistoryMessageChange(message: other)]),
            HistoryRecord(id: "20", labelsAdded: [HistoryLabelChange(message: other, labelIds: ["INBOX"])]),
        ])
        #expect(mapped.changes == [.labelsAdded(messageID: "m2", threadID: "t2", labelIDs: ["INBOX"], historyID: 20)])
        #expect(mapped.refetch == ["m1", "m2"])
    }

    @Test("a history record part of which names an id of a wrong shape is not applied: its messages are fetched again")
    func damagedRecord() throws {
        var record = HistoryRecord(id: "30", labelsAdded: [HistoryLabelChange(message: GmailMessage(id: "m2", threadId: "t2"),
                                                                             labelIds: ["INBOX"])])
        record.isDamaged = true
        record.damagedMessageIDs = ["m1"]
        let mapped = HistoryMapping.map([record])
        #expect(mapped.changes.isEmpty)
        #expect(Set(mapped.refetch) == ["m1", "m2"])
    }

    @Test("records getProfile could not vouch for are not applied: every message they name is fetched again")
    func untrustedRecords() throws {
        let ref = GmailMessage(id: "m1", threadId: "t1")
        let mapped = HistoryMapping.map([
            HistoryRecord(id: "10", labelsAdded: [HistoryLabelChange(message: ref, labelIds: ["STARRED"])]),
            HistoryRecord(id: "11", messagesDeleted: [HistoryMessageChange(message: GmailMessage(id: "m2"))]),
        ], trusted: false)
        #expect(mapped.changes.isEmpty)
        #expect(mapped.refetch == ["m1", "m2"])
    }

    @Test("a full payload becomes readable text, the original HTML and attachment metadata")
    func body() {
        func part(_ id: String, _ type: String, _ text: String? = nil, filename: String = "", attachment: String? = nil) -> MessagePart {
            MessagePart(partId: id, mimeType: type, filename: filename,
                        headers: [MessagePartHeader(name: "Content-Type", value: "\(type); charset=UTF-8")],
                        body: MessagePartBody(attachmentId: attachment, size: text?.utf8.count ?? 40211,
                                              data: text.map { base64URL(Array($0.utf8)) }))
        }
        let root = MessagePart(partId: "", mimeType: "multipart/mixed", parts: [
            MessagePart(partId: "0", mimeType: "multipart/alternative", parts: [
                part("0.0", "text/plain", "Hi Ann, the draft is attached."),
                part("0.1", "text/html", "<div>Hi Ann, the <b>draft</b> is attached.</div>"),
            ]),
            part("1", "application/pdf", filename: "report.pdf", attachment: "ANGjdJ8w"),
        ])
        let body = BodyMapping.body(from: GmailMessage(id: "m1", threadId: "t1", payload: root))
        #expect(body.text?.contains("Hi Ann, the draft is attached.") == true)
        #expect(body.html?.contains("<b>draft</b>") == true)
        #expect(body.attachments == [AttachmentInfo(partID: "1", filename: "report.pdf", mimeType: "application/pdf",
                                                    size: 40211, attachmentID: "ANGjdJ8w")])
    }
}
