/*!
 What each method puts on the wire, as the local server received it: paths under
 `/gmail/v1/users/me`, `prettyPrint=false` everywhere, the twelve `metadataHeaders` repeated
 by key (gmail-api.md §1, §2.3), a properly percent-encoded `q` (§6), `startHistoryId` on the
 query string (§9.4), the JSON bodies of modify/batchModify/send/labels.create, batchModify's
 204 and 1000-id limit (§2.6), and base64url `raw` (§8).
 */

import Foundation
import GmailIDShape
import Testing
@testable import HudsonGmail

@Suite("Request encoding")
struct RequestEncodingTests {
    private func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("metadata gets ask for exactly the kept headers, by repeating the key")
    func metadataHeadersRepeat() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.minimalMessage)])
        defer { server.stop() }
        let client = try makeClient(server)
        _ = try await client.getMessage(id: "18c9a4f0e2b1d3c7", format: "metadata")
        let request = try #require(server.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == "/gmail/v1/users/me/messages/18c9a4f0e2b1d3c7")
        #expect(request.values("format") == ["metadata"])
        #expect(request.values("metadataHeaders") == [
            "Subject", "From", "To", "Cc", "Bcc", "Reply-To", "Date", "Message-ID",
            "In-Reply-To", "References", "List-Id", "Content-Type",
            "List-Unsubscribe", "List-Unsubscribe-Post", "Authentication-Results", "DKIM-Signature",
        ])
        #expect(request.values("prettyPrint") == ["false"])
        #expect(request.headers["authorization"] == "Bearer ya29.first-token")
        #expect(request.headers["user-agent"] == "hudson-tests")
    }

    @Test("other formats send no metadataHeaders; an unknown format sends nothing")
    func otherFormats() async throws {
        let server = try TestHTTPServer { _ in .json(200, Fixture.minimalMessage) }
        defer { server.stop() }
        let client = try makeClient(server)
        for format in ["minimal", "full", "raw"] {
            _ = try await client.getMessage(id: "18c9a4f0e2b1d3c7", format: format)
        }
        #expect(server.requests.map { $0.values("format") } == [["minimal"], ["full"], ["raw"]])
        #expect(server.requests.allSatisfy { $0.values("metadataHeaders").isEmpty })
        let error = await gmailError { _ = try await client.getMessage(id: "a", format: "FULL") }
        #expect(error == .badRequest(message: #"unknown message format "FULL"; expected minimal, metadata, full or raw"#))
        #expect(server.requests.count == 3)
    }

    @Test("q is percent-encoded so every character survives, including + & = and spaces")
    func queryIsPercentEncoded() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.messageList)])
        defer { server.stop() }
        let client = try makeClient(server)
        let query = "from:bob@example.org after:1733011200 subject:(a+b) & c=d é"
        let page = try await client.listMessages(pageToken: "0987/65+43", maxResults: 1000, query: query)
        #expect(page.messages.count == 2)
        let request = try #require(server.requests.first)
        #expect(request.path == "/gmail/v1/users/me/messages")
        #expect(request.rawQuery.contains("q=from%3Abob%40example.org%20after%3A1733011200%20subject%3A%28a%2Bb%29%20%26%20c%3Dd%20%C3%A9"))
        #expect(request.values("q") == [query])
        #expect(request.values("pageToken") == ["0987/65+43"])
        #expect(request.values("maxResults") == ["500"])
    }

    @Test("an empty query and no page token are left out")
    func emptyQueryOmitted() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.emptyMessageList)])
        defer { server.stop() }
        let client = try makeClient(server)
        let page = try await client.listMessages(pageToken: nil, maxResults: 100, query: "")
        #expect(page.messages.isEmpty)
        #expect(server.requests.first?.queryItems.map(\.name) == ["maxResults", "prettyPrint"])
    }

    @Test("§9.4: startHistoryId travels on the query string")
    func historyParameters() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.historyPageWithoutRecords), .json(200, Fixture.emptyHistory)])
        defer { server.stop() }
        let client = try makeClient(server)
        let first = try await client.listHistory(startHistoryID: "9876500", pageToken: nil)
        let second = try await client.listHistory(startHistoryID: "9876500", pageToken: first.nextPageToken)
        #expect(first.history.isEmpty && second.nextPageToken == nil)
        let requests = server.requests
        #expect(requests[0].path == "/gmail/v1/users/me/history")
        #expect(requests[0].values("startHistoryId") == ["9876500"])
        #expect(requests[0].values("pageToken").isEmpty)
        #expect(requests[1].values("pageToken") == ["00123456790"])
        #expect(requests[1].values("startHistoryId") == ["9876500"])
    }

    @Test("modify succeeds on any 2xx whatever its body: Gmail promises only id, threadId and labelIds there")
    func modifyAnswerNotRead() async throws {
        let server = try TestHTTPServer(script: [
            .json(200, #"{"id":"m1","threadId":"t1","labelIds":["STARRED"]}"#), .json(200, #"{"id":"m1"}"#),
            .json(200, "[]"), .status(204),
        ])
        defer { server.stop() }
        let client = try makeClient(server)
        for _ in 0..<4 {
            try await client.modify(id: "m1", addLabelIDs: ["STARRED"], removeLabelIDs: [])
        }
        #expect(server.requests.count == 4)
    }

    @Test("every method sends prettyPrint=false to the documented path")
    func everyMethodPath() async throws {
        let server = try TestHTTPServer(script: [
            .json(200, Fixture.profile), .json(200, Fixture.labels), .json(200, Fixture.modifiedMessage),
            .status(204), .json(200, Fixture.attachment), .json(200, Fixture.sentMessage), .json(200, Fixture.createdLabel),
        ])
        defer { server.stop() }
        let client = try makeClient(server)
        #expect(try await client.getProfile().historyId == "9876543")
        #expect(try await client.listLabels().map(\.id) == ["INBOX", "Label_12"])
        try await client.modify(id: "m1", addLabelIDs: ["STARRED"], removeLabelIDs: ["UNREAD", "INBOX"])
        try await client.batchModify(ids: ["m1", "m2"], addLabelIDs: ["Label_12"], removeLabelIDs: ["UNREAD"])
        #expect(try await client.getAttachment(messageID: "m1", attachmentID: "ANGjdJ8w-x_y").size == 40211)
        #expect(try await client.send(raw: Array("Subject: hi\r\n\r\nbody".utf8), threadID: "t1").id == "18c9b0aa00000001")
        #expect(try await client.createLabel(name: "Receipts/2025").id == "Label_13")

        let requests = server.requests
        #expect(requests.map { "\($0.method) \($0.path)" } == [
            "GET /gmail/v1/users/me/profile",
            "GET /gmail/v1/users/me/labels",
            "POST /gmail/v1/users/me/messages/m1/modify",
            "POST /gmail/v1/users/me/messages/batchModify",
            "GET /gmail/v1/users/me/messages/m1/attachments/ANGjdJ8w-x_y",
            "POST /gmail/v1/users/me/messages/send",
            "POST /gmail/v1/users/me/labels",
        ])
        #expect(requests.allSatisfy { $0.values("prettyPrint") == ["false"] })
        #expect(requests.filter { $0.method == "POST" }.allSatisfy { $0.headers["content-type"]?.hasPrefix("application/json") == true })

        let modify = try json(requests[2].body)
        #expect(modify["addLabelIds"] as? [String] == ["STARRED"])
        #expect(modify["removeLabelIds"] as? [String] == ["UNREAD", "INBOX"])
        let batch = try json(requests[3].body)
        #expect(batch["ids"] as? [String] == ["m1", "m2"])
        #expect(batch["addLabelIds"] as? [String] == ["Label_12"])
        let send = try json(requests[5].body)
        #expect(send["threadId"] as? String == "t1")
        #expect(send["raw"] as? String == "U3ViamVjdDogaGkNCg0KYm9keQ==")
        let label = try json(requests[6].body)
        #expect(label["name"] as? String == "Receipts/2025")
        #expect(label["labelListVisibility"] as? String == "labelShow")
        #expect(label["messageListVisibility"] as? String == "show")
    }

    @Test("send encodes raw as base64url, never with + or /")
    func sendUsesBase64URL() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.sentMessage)])
        defer { server.stop() }
        let client = try makeClient(server)
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0xFE, 0x3E, 0x3F]
        _ = try await client.send(raw: bytes, threadID: nil)
        let body = try json(try #require(server.requests.first).body)
        #expect(body["raw"] as? String == "-_-__j4_")
        #expect(body["threadId"] == nil)
        #expect(Data(base64Encoded: "+/+//j4/") == Data(bytes))
    }

    @Test("batchModify accepts 204 or an empty 200, sends nothing for no ids, and splits at 1000 ids")
    func batchModifyLimits() async throws {
        let server = try TestHTTPServer(script: [.status(204), .status(200), .status(204), .status(204)])
        defer { server.stop() }
        let client = try makeClient(server)
        try await client.batchModify(ids: [], addLabelIDs: ["A"], removeLabelIDs: [])
        #expect(server.requests.isEmpty)
        try await client.batchModify(ids: ["a"], addLabelIDs: [], removeLabelIDs: ["UNREAD"])
        try await client.batchModify(ids: ["b"], addLabelIDs: [], removeLabelIDs: ["UNREAD"])
        let ids = (0..<1500).map { "id\($0)" }
        try await client.batchModify(ids: ids, addLabelIDs: [], removeLabelIDs: ["INBOX"])
        let sizes = try server.requests.dropFirst(2).map { (try json($0.body)["ids"] as? [String])?.count }
        #expect(sizes == [1000, 500])
    }

    @Test("a base URL with a path prefix keeps it")
    func basePathPrefix() async throws {
        let server = try TestHTTPServer(script: [.json(200, Fixture.profile)])
        defer { server.stop() }
        let client = try makeClient(server) { $0.baseURL = server.baseURL.appendingPathComponent("proxy/") }
        _ = try await client.getProfile()
        #expect(server.requests.first?.path == "/proxy/gmail/v1/users/me/profile")
    }

    @Test("an id of another shape than Gmail's goes into no path: refused before anything is sent, for every method that takes one",
          arguments: ["..", ".", "a/b", "%2e", "%2E%2E", "a?b", "a#b", "", String(repeating: "a", count: 300), "ü", "a b", "a\u{1B}[0m"])
    func malformedIDsAreNotSent(_ id: String) async throws {
        let server = try TestHTTPServer { _ in .json(200, Fixture.minimalMessage) }
        defer { server.stop() }
        let client = try makeClient(server)
        let calls: [(GmailID.Kind, () async throws -> Void)] = [
            (.message, { _ = try await client.getMessage(id: id, format: "full") }),
            (.message, { try await client.modify(id: id, addLabelIDs: ["STARRED"], removeLabelIDs: []) }),
            (.message, { _ = try await client.getAttachment(messageID: id, attachmentID: "ANGjdJ8w") }),
            (.attachment, { _ = try await client.getAttachment(messageID: "18c9a4f0e2b1d3c7", attachmentID: id) }),
            (.label, { _ = try await client.patchLabel(id: id, name: "New", color: nil) }),
            (.label, { try await client.deleteLabel(id: id) }),
            (.draft, { _ = try await client.getDraft(id: id, format: "minimal") }),
            (.draft, { _ = try await client.updateDraft(id: id, raw: Array("Subject: x\r\n\r\nx".utf8), threadID: nil) }),
            (.draft, { try await client.deleteDraft(id: id) }),
            (.draft, { _ = try await client.sendDraft(id: id) }),
        ]
        for (kind, call) in calls where !GmailID.isWellFormed(id, as: kind) {
            let error = await gmailError(call)
            #expect(error == .malformedID(id, kind: kind), "\(kind)")
            #expect(error?.isMalformedID == true && error?.isRefusal == true && error?.isRetryable == false)
            #expect(error?.description.hasPrefix("not sent: \(kind) id ") == true, "\(error?.description ?? "")")
            // Shown safely: no control character, cut short.
            #expect(error?.description.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } == true)
            #expect((error?.description.count ?? 0) < 160)
        }
        // A batch sends the well-formed ids and answers the others without sending them.
        let results = await client.getMessages(ids: [id], format: "metadata")
        #expect(results[id].map { if case .failure(let e) = $0 { return e.isMalformedID } else { return false } } == true)
        #expect(server.requests.isEmpty, "\(server.requests.map(\.target))")
    }
}
