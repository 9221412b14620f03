/*!
 Decoding of every response shape the client reads, from the fixtures in Support/Fixtures.swift:
 the full examples of gmail-api.md §2, the shapes with omitted fields Google really sends
 (§1 "Empty or default fields are left out", §9.1, §9.3), the strict int64-string accessors,
 the case-insensitive header lookup, and the JSON bodies the client sends.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Wire types")
struct WireDecodingTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test("profile decodes, historyId parses as UInt64")
    func profileDecodes() throws {
        let profile = try decode(Profile.self, Fixture.profile)
        #expect(profile == Profile(emailAddress: "ann@example.com", messagesTotal: 48213, threadsTotal: 30117, historyId: "9876543"))
        #expect(profile.historyIDValue == 9_876_543)
    }

    @Test("messages.list: refs, token, estimate; an empty list has no messages key")
    func messageListDecodes() throws {
        let page = try decode(MessageListPage.self, Fixture.messageList)
        #expect(page.messages.map(\.id) == ["18c9a4f0e2b1d3c7", "18c9a3aa01f2e4b5"])
        #expect(page.messages[1].threadId == "18c99f0c7d6e5a41")
        #expect(page.nextPageToken == "09876543210987654321")
        #expect(page.resultSizeEstimate == 201)
        let empty = try decode(MessageListPage.self, Fixture.emptyMessageList)
        #expect(empty == MessageListPage(messages: [], nextPageToken: nil, resultSizeEstimate: 0))
    }

    @Test("format=full decodes the MIME tree with attachment ids and bodies")
    func fullMessageDecodes() throws {
        let message = try decode(GmailMessage.self, Fixture.fullMessage)
        #expect(message.labelIds == ["UNREAD", "IMPORTANT", "CATEGORY_PERSONAL", "INBOX"])
        #expect(message.internalDateMilliseconds == 1_733_140_800_000)
        #expect(message.historyIDValue == 9_876_512)
        #expect(message.sizeEstimate == 48712)
        let payload = try #require(message.payload)
        #expect(payload.mimeType == "multipart/mixed")
        #expect(payload.parts.count == 2)
        #expect(payload.parts[0].parts[0].body?.data == "SGkgQW5uLCB0aGUgZHJhZnQgaXMgYXR0YWNoZWQuDQo=")
        #expect(payload.parts[0].parts[1].partId == "0.1")
        #expect(payload.parts[1].body == MessagePartBody(attachmentId: "ANGjdJ8w-long-opaque-id", size: 40211, data: nil))
        #expect(payload.parts[1].filename == "report.pdf")
        #expect(payload.parts[0].parts[0].parts.isEmpty)
    }

    @Test("header lookup is case-insensitive and returns the first match")
    func headerLookup() throws {
        let message = try decode(GmailMessage.self, Fixture.fullMessage)
        #expect(message.header(named: "SUBJECT") == "Quarterly report")
        #expect(message.header(named: "message-id") == "<CAF=abc123@mail.gmail.com>")
        #expect(message.header(named: "X-Empty") == "")
        #expect(message.header(named: "List-Id") == nil)
        #expect(GmailMessage(id: "x").header(named: "Subject") == nil)
    }

    @Test("format=minimal and format=raw decode without payload")
    func minimalAndRawDecode() throws {
        let minimal = try decode(GmailMessage.self, Fixture.minimalMessage)
        #expect(minimal.payload == nil && minimal.raw == nil)
        #expect(minimal.snippet == "Hi Ann, ...")
        let raw = try decode(GmailMessage.self, Fixture.rawMessage)
        #expect(raw.raw == "RGVsaXZlcmVkLVRvOiBhbm5AZXhhbXBsZS5jb20NCg==")
        #expect(raw.snippet == nil)
    }

    @Test("a modify response with only id, threadId and labelIds decodes")
    func modifyResponseDecodes() throws {
        let message = try decode(GmailMessage.self, Fixture.modifiedMessage)
        #expect(message == GmailMessage(id: "18c9a4f0e2b1d3c7", threadId: "18c9a4f0e2b1d3c7", labelIds: ["STARRED", "IMPORTANT"]))
        #expect(message.historyIDValue == nil && message.internalDateMilliseconds == nil)
    }

    @Test("a message without labelIds decodes with an empty list")
    func omittedLabelIDsDefaultEmpty() throws {
        let message = try decode(GmailMessage.self, #"{"id": "a"}"#)
        #expect(message.labelIds.isEmpty && message.threadId == nil)
    }

    @Test("a message without an id is a wrong shape")
    func messageWithoutIDFails() {
        #expect(throws: DecodingError.self) { try decode(GmailMessage.self, #"{"threadId": "t"}"#) }
    }

    @Test("history.list decodes every record kind")
    func historyDecodes() throws {
        let page = try decode(HistoryPage.self, Fixture.historyPage)
        #expect(page.history.map(\.idValue) == [9_876_520, 9_876_533, 9_876_540, 9_876_551])
        #expect(page.history[0].messagesAdded.first?.message?.labelIds == ["UNREAD", "INBOX"])
        #expect(page.history[1].labelsRemoved.first?.labelIds == ["UNREAD"])
        #expect(page.history[1].labelsRemoved.first?.message?.labelIds == ["IMPORTANT"])
        #expect(page.history[2].labelsAdded.first?.labelIds == ["TRASH"])
        #expect(page.history[3].messagesDeleted.first?.message?.id == "18c9990011223344")
        #expect(page.history[3].messagesAdded.isEmpty && page.history[0].labelsAdded.isEmpty)
        #expect(page.nextPageToken == "00123456789")
        #expect(page.historyIDValue == 9_876_560)
    }

    @Test("§9.1: a page with nextPageToken but no history is an empty page")
    func historyPageWithoutRecords() throws {
        let page = try decode(HistoryPage.self, Fixture.historyPageWithoutRecords)
        #expect(page.history.isEmpty)
        #expect(page.nextPageToken == "00123456790")
    }

    @Test("a history page whose records name ids of a wrong shape decodes: a bad message id sets its change aside, another bad id marks the message for a refetch")
    func historyPageWithUnusableIDs() throws {
        let page = try decode(HistoryPage.self, #"""
            {"historyId": "1710", "history": [
              {"id": "10", "labelsAdded": [{"message": {"id": "m1", "threadId": "t1"}, "labelIds": ["a/b"]},
                                           {"message": {"id": "m2", "threadId": "t2"}, "labelIds": ["INBOX"]}]},
              {"id": "11", "messagesAdded": [{"message": {"id": "..", "threadId": "t3"}}, {"message": {"id": "m3", "threadId": "%2e"}}]},
              {"id": "12", "messagesDeleted": [{"message": {"id": ""}}]},
              {"id": "13", "labelsRemoved": [{"message": {"id": "m4", "threadId": "t4"}, "labelIds": ["UNREAD", "UNREAD"]}]}
            ]}
            """#)
        #expect(page.history.count == 4)
        #expect(page.history[0].isDamaged && page.history[0].damagedMessageIDs == ["m1"])
        #expect(page.history[0].labelsAdded.map { $0.message?.id } == ["m2"])
        #expect(page.history[1].isDamaged && page.history[1].damagedMessageIDs == ["m3"] && page.history[1].messagesAdded.isEmpty)
        #expect(!page.history[2].isDamaged && page.history[2].messagesDeleted.isEmpty)
        #expect(!page.history[3].isDamaged && page.history[3].labelsRemoved.first?.labelIds == ["UNREAD"])
        #expect(page.unusableIDs == ["..", ""])
    }

    @Test("§9.3: an empty poll is just a historyId")
    func emptyHistory() throws {
        let page = try decode(HistoryPage.self, Fixture.emptyHistory)
        #expect(page == HistoryPage(history: [], nextPageToken: nil, historyId: "1710"))
        #expect(page.historyIDValue == 1710)
    }

    @Test("labels decode with and without counts and color")
    func labelsDecode() throws {
        let list = try decode(LabelList.self, Fixture.labels)
        #expect(list.labels.count == 2)
        #expect(list.labels[0].messagesTotal == nil && list.labels[0].color == nil && list.labels[0].type == "system")
        #expect(list.labels[1] == GmailLabel(
            id: "Label_12", name: "Receipts/2024", type: "user", messageListVisibility: "show",
            labelListVisibility: "labelShow", messagesTotal: 120, messagesUnread: 3, threadsTotal: 97, threadsUnread: 2,
            color: LabelColor(textColor: "#000000", backgroundColor: "#16a766")))
        #expect(try decode(LabelList.self, "{}").labels.isEmpty)
    }

    @Test("an attachment body decodes")
    func attachmentDecodes() throws {
        let body = try decode(AttachmentBody.self, Fixture.attachment)
        #expect(body == AttachmentBody(attachmentId: nil, size: 40211, data: "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK"))
    }

    @Test("int64 strings parse strictly: digits only, in range")
    func strictIntegerParsing() {
        #expect(WireInteger.unsigned("18446744073709551615") == UInt64.max)
        for bad in ["", "+7", "-7", " 7", "7 ", "0x10", "1e3", "18446744073709551616", "١٢"] {
            #expect(WireInteger.unsigned(bad) == nil, "accepted \(bad)")
        }
        #expect(WireInteger.signed("-1733140800000") == -1_733_140_800_000)
        for bad in ["", "-", "+5", "--5", "5-", "9223372036854775808"] {
            #expect(WireInteger.signed(bad) == nil, "accepted \(bad)")
        }
        #expect(Profile(historyId: "12a").historyIDValue == nil)
    }

    @Test("request bodies use the discovery field names")
    func requestBodiesEncode() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func text(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        #expect(try text(ModifyMessageRequest(addLabelIds: ["STARRED"], removeLabelIds: ["UNREAD", "INBOX"]))
            == #"{"addLabelIds":["STARRED"],"removeLabelIds":["UNREAD","INBOX"]}"#)
        #expect(try text(BatchModifyMessagesRequest(ids: ["a", "b"], addLabelIds: [], removeLabelIds: ["UNREAD"]))
            == #"{"addLabelIds":[],"ids":["a","b"],"removeLabelIds":["UNREAD"]}"#)
        #expect(try text(SendMessageRequest(raw: "UmU=", threadId: "t1")) == #"{"raw":"UmU=","threadId":"t1"}"#)
        #expect(try text(CreateLabelRequest(name: "Receipts"))
            == #"{"labelListVisibility":"labelShow","messageListVisibility":"show","name":"Receipts"}"#)
    }

    @Test("wire values round-trip through JSON")
    func roundTrip() throws {
        let message = try decode(GmailMessage.self, Fixture.fullMessage)
        let again = try JSONDecoder().decode(GmailMessage.self, from: JSONEncoder().encode(message))
        #expect(again == message)
    }
}
