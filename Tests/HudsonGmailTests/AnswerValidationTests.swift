/*!
 Issue 37 §2: every field of every answer the read path uses is validated as it is decoded
 (WireValidation.swift). Wrong types, missing required fields and numbers out of range make
 the answer unreadable (`invalidResponse`, naming the field and never its value); an id of a
 wrong shape makes a single message's answer unreadable, and is set aside, counted, from a
 list (messages.list, history, labels, drafts). The rule for ids is GmailIDShape's, tested
 here too.
 */

import Foundation
import GmailIDShape
import Testing
@testable import HudsonGmail

@Suite("Answers validated as they are decoded")
struct AnswerValidationTests {
    private func decoded<T: Decodable>(_ type: T.Type, _ json: String) throws(GmailError) -> T {
        try GmailClient.decodeBody(Data(json.utf8))
    }

    private func refusal<T: Decodable>(_ type: T.Type, _ json: String) -> String? {
        do {
            _ = try decoded(type, json)
            return nil
        } catch {
            guard case .invalidResponse(let detail) = error else { return "not invalidResponse: \(error)" }
            return detail
        }
    }

    // MARK: - The id rule

    @Test("the shape of a Gmail id: the base64url alphabet, not empty, bounded; attachment ids may be long")
    func idShape() {
        for id in ["18c9a4f0e2b1d3c7", "INBOX", "CATEGORY_PERSONAL", "Label_12", "r-7031000000000007919", "ANGjdJ8w-x_y", "-", "_"] {
            #expect(GmailID.isWellFormed(id, as: .message) && GmailID.isWellFormed(id, as: .label), "\(id)")
        }
        for id in ["", ".", "..", "a/b", "%2e", "a?b", "a#b", "a b", "a+b", "a:b", "ü", "a\u{0}", "a\n", "a\u{202E}b", "Hudson+1"] {
            #expect(!GmailID.isWellFormed(id, as: .message) && GmailID.problem(with: id, as: .draft) != nil, "\(id.debugDescription)")
        }
        let long = String(repeating: "a", count: 300)
        #expect(!GmailID.isWellFormed(long, as: .message) && GmailID.isWellFormed(long, as: .attachment))
        #expect(!GmailID.isWellFormed(String(repeating: "a", count: 4097), as: .attachment))
        #expect(GmailID.problem(with: "", as: .draft) == "a Gmail draft id cannot be empty")
    }

    // MARK: - Wrong types, missing fields, numbers out of range

    @Test("a message answer with a field of the wrong type, or a number out of its range, is unreadable, by field",
          arguments: [
              (#"{"id": 42}"#, "field id has the wrong type"),
              (#"{"threadId": "t"}"#, "missing field id"),
              (#"{"id": "m1", "labelIds": "INBOX"}"#, "field labelIds has the wrong type"),
              (#"{"id": "m1", "historyId": 7}"#, "field historyId has the wrong type"),
              (#"{"id": "m1", "historyId": "-1"}"#, "field historyId is out of range"),
              (#"{"id": "m1", "historyId": "0"}"#, "field historyId is out of range"),
              (#"{"id": "m1", "historyId": "9223372036854775808"}"#, "field historyId is out of range"),
              (#"{"id": "m1", "historyId": "+7"}"#, "field historyId is out of range"),
              (#"{"id": "m1", "internalDate": "-62135596800001"}"#, "field internalDate is out of range"),
              (#"{"id": "m1", "internalDate": "884541340800000"}"#, "field internalDate is out of range"),
              (#"{"id": "m1", "internalDate": 1733140800000}"#, "field internalDate has the wrong type"),
              (#"{"id": "m1", "sizeEstimate": -1}"#, "field sizeEstimate is out of range"),
              (#"{"id": "m1", "sizeEstimate": "12"}"#, "field sizeEstimate has the wrong type"),
              (#"{"id": "m1", "payload": {"body": {"size": -5}}}"#, "field payload.body.size is out of range"),
              (#"{"id": "m1", "payload": {"parts": [{"body": {"size": true}}]}}"#, "field payload.parts[0].body.size has the wrong type"),
          ])
    func messageFields(_ json: String, _ expected: String) {
        #expect(refusal(GmailMessage.self, json) == expected)
    }

    @Test("a message answer naming an id of a wrong shape is unreadable: its own, its thread's, a label's, an attachment's",
          arguments: [
              (#"{"id": "a/b"}"#, "field id is not a Gmail message id"),
              (#"{"id": ""}"#, "field id is not a Gmail message id"),
              (#"{"id": "m1", "threadId": ".."}"#, "field threadId is not a Gmail thread id"),
              (#"{"id": "m1", "labelIds": ["INBOX", ""]}"#, "field labelIds[1] is not a Gmail label id"),
              (#"{"id": "m1", "payload": {"parts": [{"body": {"attachmentId": "../x"}}]}}"#,
               "field payload.parts[0].body.attachmentId is not a Gmail attachment id"),
          ])
    func messageIDs(_ json: String, _ expected: String) {
        #expect(refusal(GmailMessage.self, json) == expected)
    }

    @Test("a label named twice counts once; a message at the edges of the ranges is read")
    func messageEdges() throws {
        let message = try decoded(GmailMessage.self, #"""
            {"id": "m1", "labelIds": ["INBOX", "UNREAD", "INBOX"], "historyId": "9223372036854775807",
             "internalDate": "0", "sizeEstimate": 0}
            """#)
        #expect(message.labelIds == ["INBOX", "UNREAD"])
        #expect(message.historyIDValue == UInt64(Int64.max) && message.internalDateMilliseconds == 0)
        #expect(try decoded(GmailMessage.self, #"{"id": "m1", "internalDate": "253402300799999"}"#).internalDate != nil)
        // Before 1970: a message imported with an old Date header is read, not parked for ever.
        #expect(try decoded(GmailMessage.self, #"{"id": "m1", "internalDate": "-86400000"}"#).internalDateMilliseconds == -86_400_000)
    }

    @Test("a profile whose historyId or totals are out of range is unreadable",
          arguments: [
              (#"{"historyId": "-1"}"#, "field historyId is out of range"),
              (#"{"historyId": "abc"}"#, "field historyId is out of range"),
              (#"{"historyId": 5}"#, "field historyId has the wrong type"),
              (#"{"messagesTotal": -3, "historyId": "5"}"#, "field messagesTotal is out of range"),
          ])
    func profileFields(_ json: String, _ expected: String) {
        #expect(refusal(Profile.self, json) == expected)
    }

    @Test("a history page whose fields have the wrong types, or whose ids are out of range, cannot be read",
          arguments: [
              (#"{"historyId": 1710}"#, "field historyId has the wrong type"),
              (#"{"historyId": "-1"}"#, "field historyId is out of range"),
              (#"{"historyId": "0"}"#, "field historyId is out of range"),
              (#"{"historyId": "1710", "history": {}}"#, "field history has the wrong type"),
              (#"{"historyId": "1710", "history": [{"messagesAdded": []}]}"#, "missing field history[0].id"),
              (#"{"historyId": "1710", "history": [{"id": 11}]}"#, "field history[0].id has the wrong type"),
              (#"{"historyId": "1710", "history": [{"id": "x"}]}"#, "field history[0].id is out of range"),
              // The issue's page: a record far after the page's own historyId, which is -1.
              (#"{"historyId": "-1", "history": [{"id": "999999999999", "messagesAdded": [{"message": {"id": "m1"}}]}]}"#,
               "field history[0].id is out of range"),
              (#"{"historyId": "1710", "history": [{"id": "1700"}, {"id": "999999999999"}]}"#, "field history[1].id is out of range"),
              (#"{"historyId": "1710", "history": [{"id": "1700", "messagesDeleted": "not a list"}]}"#,
               "field history[0].messagesDeleted has the wrong type"),
              (#"{"historyId": "1710", "history": [{"id": "1700", "labelsAdded": [{"message": {"id": "m1", "historyId": 7}}]}]}"#,
               "field history[0].labelsAdded[0].message.historyId has the wrong type"),
              (#"{"historyId": "1710", "history": [{"id": "1700", "labelsAdded": [{"message": {"id": 7}}]}]}"#,
               "field history[0].labelsAdded[0].message.id has the wrong type"),
              (#"{"historyId": "1710", "nextPageToken": 5}"#, "field nextPageToken has the wrong type"),
          ])
    func historyFields(_ json: String, _ expected: String) {
        let detail = refusal(HistoryPage.self, json)
        // JSONDecoder may report the record's id or the page's first; the page is refused either way.
        if expected.contains("999999999999") || json.contains(#""historyId": "-1""#) {
            #expect(detail != nil)
        } else {
            #expect(detail == expected)
        }
    }

    @Test("a list page sets aside the ids no Gmail message has and keeps one of each id")
    func listPage() throws {
        let long = String(repeating: "a", count: 300)
        let page = try decoded(MessageListPage.self, #"""
            {"messages": [{"id": ".."}, {"id": "a/b"}, {"id": "%2e"}, {"id": "\#(long)"}, {"id": ""},
                          {"id": "m1", "threadId": "t1"}, {"id": "m2", "threadId": "../t"}, {"id": "m1"}],
             "resultSizeEstimate": 8}
            """#)
        #expect(page.messages.map(\.id) == ["m1", "m2"])
        #expect(page.messages[1].threadId == nil)  // not used; a wrong shape reads as absent
        #expect(page.unusableIDs == ["..", "a/b", "%2e", long, ""])
        #expect(refusal(MessageListPage.self, #"{"messages": [{"id": 5}]}"#) == "field messages[0].id has the wrong type")
        #expect(refusal(MessageListPage.self, #"{"messages": [{}]}"#) == "missing field messages[0].id")
        #expect(refusal(MessageListPage.self, #"{"resultSizeEstimate": -1}"#) == "field resultSizeEstimate is out of range")
    }

    @Test("an empty page token is no page token (proto3 JSON leaves empty strings out): sent back, it would list the first page again")
    func emptyPageToken() throws {
        #expect(try decoded(MessageListPage.self, #"{"nextPageToken": ""}"#).nextPageToken == nil)
        #expect(try decoded(HistoryPage.self, #"{"historyId": "5", "nextPageToken": ""}"#).nextPageToken == nil)
        #expect(try decoded(DraftListPage.self, #"{"nextPageToken": ""}"#).nextPageToken == nil)
        #expect(try decoded(MessageListPage.self, #"{"nextPageToken": "x"}"#).nextPageToken == "x")
    }

    @Test("labels.list and drafts.list leave out the entries whose id no Gmail label or draft has")
    func labelsAndDrafts() throws {
        let labels = try decoded(LabelList.self, #"""
            {"labels": [{"id": "INBOX", "name": "INBOX"}, {"id": "../x", "name": "Evil"}, {"id": "Label_1", "name": "Work"}]}
            """#)
        #expect(labels.labels.map(\.id) == ["INBOX", "Label_1"] && labels.unusableIDs == ["../x"])
        #expect(refusal(LabelList.self, #"{"labels": [{"id": "Label_1", "messagesTotal": -1}]}"#)
                == "field labels[0].messagesTotal is out of range")
        let drafts = try decoded(DraftListPage.self, #"""
            {"drafts": [{"id": "..", "message": {"id": "m1"}}, {"id": "r-1", "message": {"id": "m2"}}, {"id": "r-2", "message": {"id": "."}}]}
            """#)
        #expect(drafts.drafts.map(\.id) == ["r-1"] && drafts.unusableIDs == ["..", "."])
    }

    // MARK: - The answer is the one asked for

    @Test("a messages.get answer about another message than the one asked for is unreadable, alone or in a batch")
    func answerAboutAnotherMessage() async throws {
        let single = try TestHTTPServer(script: [.json(200, Fixture.minimalMessage)])
        defer { single.stop() }
        let error = await gmailError { _ = try await makeClient(single).getMessage(id: "0000000000000001", format: "minimal") }
        #expect(error == .invalidResponse("the answer is about another message"))

        let batch = try TestHTTPServer { request in
            BatchScript.response(BatchScript.parts(of: request).map { part in
                // Every part answers as if it were "aaaa": right for one, a mix-up for the other.
                (part.contentID, 200, BatchScript.message("aaaa"))
            })
        }
        defer { batch.stop() }
        let results = await (try makeClient(batch)).getMessages(ids: ["aaaa", "bbbb"], format: "metadata")
        #expect((try? results["aaaa"]?.get())?.id == "aaaa")
        #expect(results["bbbb"].map { if case .failure(.invalidResponse("the answer is about another message")) = $0 { true } else { false } } == true)
    }
}
