// MessageProbe (issue 37 §2): "is this message in Gmail?" after a request whose answer was
// lost, by the search and by history since before the request, against the scripted Gmail.
import Foundation
import HudsonGmail
import HudsonSync
import Testing

@Suite("MessageProbe: search, then history; what it cannot look for it says")
struct MessageProbeTests {
    /// A Gmail holding one message stored after `before` (as a lost answer would leave it).
    func stored(_ messageID: String) async throws -> (ScriptedGmail, before: Int64) {
        let gmail = ScriptedGmail()
        let before = Int64(gmail.currentHistoryID)
        _ = try await gmail.send(raw: Array("From: a@example.org\r\nMessage-ID: \(messageID)\r\nSubject: s\r\n\r\nx".utf8), threadID: nil)
        return (gmail, before)
    }

    @Test("found by the search; when the search lags, by history since before the request")
    func searchThenHistory() async throws {
        let (gmail, before) = try await stored("<p1@example.org>")
        #expect(try await MessageProbe.find(messageID: "<p1@example.org>", since: before, api: gmail)
                == .found(id: "sent1", threadID: "sent1"))
        gmail.searchLags.withLock { $0 = true }
        #expect(try await MessageProbe.find(messageID: "<p1@example.org>", since: before, api: gmail)
                == .found(id: "sent1", threadID: "sent1"))
        // Without history to read, a lagging search is all there is: not found.
        #expect(try await MessageProbe.find(messageID: "<p1@example.org>", since: nil, api: gmail) == .notFound)
        #expect(try await MessageProbe.find(messageID: "<other@example.org>", since: before, api: gmail) == .notFound)
    }

    @Test("a Message-ID the search cannot take is looked for in history only; without history it cannot be looked for")
    func unsearchable() async throws {
        let (gmail, before) = try await stored("<no-at-sign>")
        gmail.resetCalls()
        #expect(try await MessageProbe.find(messageID: "<no-at-sign>", since: before, api: gmail) == .found(id: "sent1", threadID: "sent1"))
        #expect(!gmail.calls.contains { if case .listMessages = $0 { return true }; return false }, "\(gmail.calls)")
        #expect(try await MessageProbe.find(messageID: "<no-at-sign>", since: nil, api: gmail) == .cannotLook)
        gmail.expireHistory()
        #expect(try await MessageProbe.find(messageID: "<no-at-sign>", since: before, api: gmail) == .cannotLook)
        #expect(try await MessageProbe.find(messageID: "<p@example.org>", since: before, api: gmail) == .notFound)
    }

    @Test("ids excluded are never the answer; more added than it reads leaves the search to decide")
    func excludedAndTooMany() async throws {
        let (gmail, before) = try await stored("<e1@example.org>")
        #expect(try await MessageProbe.find(messageID: "<e1@example.org>", since: before, excluding: ["sent1"], api: gmail) == .notFound)
        for index in 0...MessageProbe.historyCandidateLimit { gmail.deliver("m\(index)") }
        gmail.searchLags.withLock { $0 = true }
        #expect(try await MessageProbe.find(messageID: "<e1@example.org>", since: before, api: gmail) == .notFound)
        let (odd, start) = try await stored("<odd>")
        for index in 0...MessageProbe.historyCandidateLimit { odd.deliver("n\(index)") }
        #expect(try await MessageProbe.find(messageID: "<odd>", since: start, api: odd) == .cannotLook)
    }

    @Test("an error while looking is thrown, never read as not found")
    func errors() async throws {
        let (gmail, before) = try await stored("<x1@example.org>")
        gmail.searchLags.withLock { $0 = true }
        gmail.batchFailure.withLock { $0 = .server(status: 503) }
        await #expect(throws: GmailError.self) { _ = try await MessageProbe.find(messageID: "<x1@example.org>", since: before, api: gmail) }
        gmail.batchFailure.withLock { $0 = nil }
        gmail.setHook { call in if case .listHistory = call { throw GmailError.network("reset") } }
        await #expect(throws: GmailError.self) { _ = try await MessageProbe.find(messageID: "<x1@example.org>", since: before, api: gmail) }
    }
}
