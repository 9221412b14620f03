// hd-unsubscribe under faults (issue 42): a mailto unsubscribe whose send Gmail applied and
// whose answer was lost is sent once; generated answers from a sender's endpoint each give
// one request, a documented state and status, and no second request.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

@Suite("hd-unsubscribe under faults and generated answers", .serialized)
struct UnsubscribeFaultTests {
    @Test("mailto: Gmail applies the send and the answer is lost; later syncs find it, and nothing is sent twice")
    func mailtoAnswerLost() throws {
        let fake = try FakeGmail(["--demo", "--demo-count", "3", "--demo-span-days", "5"])
        let f = CLIFixture()
        try f.connect(fake)
        let raw = """
            From: Digest <digest@lists.example.org>\r
            To: demo@hudson.test\r
            Subject: digest\r
            Authentication-Results: mx.google.com; dkim=pass header.i=@lists.example.org header.s=s1\r
            List-Id: <digest.lists.example.org>\r
            List-Unsubscribe: <mailto:leave@lists.example.org?subject=leave>\r
            Message-ID: <digest-1@lists.example.org>\r
            \r
            text\r

            """
        _ = try fake.admin("POST", "insert", ["raw": raw])
        #expect(try f.run("hd-sync").status == 0)
        try fake.faults([["path": "/messages/send$", "mode": "apply_then_drop"]])
        let result = try f.run("hd-unsubscribe", "list:digest.lists.example.org")
        #expect(result.status == 0, "\(result)")
        for _ in 0..<3 { _ = try f.run("hd-sync") }
        _ = try f.run("hd-unsubscribe", "list:digest.lists.example.org")
        _ = try f.run("hd-sync")
        let sends = try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/send") }
        #expect(sends.count == 1, "\(sends)")
        let sent = try f.run("hd-search", "--messages", "--ids", "in:sent to:leave@lists.example.org")
        #expect(sent.lines.count == 1, "\(sent)")
    }

    @Test("generated answers: one request each, a state that follows the status, never a second request",
          .timeLimit(.minutes(3)))
    func generatedAnswers() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        var generator = AddressSeededGenerator(seed: 2026)
        var expected: [String: String] = [:]
        var lists: [(id: String, headers: ListHeaders)] = []
        for index in 0..<25 {
            let code = [200, 201, 202, 204, 299, 301, 302, 303, 307, 308, 400, 401, 403, 404, 410, 418, 429, 500, 502, 503, 599]
                .randomElement(using: &generator)!
            let size = [0, 1, 1000, 70_000, 300_000].randomElement(using: &generator)!
            let id = "l\(index).example.org"
            lists.append((id, oneClick(endpoint.url("/status/\(code)?size=\(size)"))))
            expected[id] = (200..<300).contains(code) ? "done" : (300..<400).contains(code) ? "unknown" : "refused"
        }
        try f.unsubscribeMailbox(lists)
        let result = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect([0, 2].contains(result.status), "seed 2026: \(result)")
        for (id, state) in expected {
            let line = result.lines.first { $0.hasPrefix("list:\(id)\t") } ?? ""
            #expect(line.contains("\tone-click\t\(state)\t"), "seed 2026: \(id): \(line)")
        }
        #expect(endpoint.requests.count == 25)
        let refused = expected.values.filter { $0 == "refused" }.count
        _ = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        // Only a refusal may be asked again; nothing that may have unsubscribed is.
        #expect(endpoint.requests.count == 25 + refused)
    }

    @Test("eight processes unsubscribing from one list at once make one POST between them")
    func concurrentRuns() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok")))])
        let command = BuiltProducts.executable("hd-unsubscribe").path
        let result = try f.shell("""
            export HUDSON_TEST_UNSUBSCRIBE_LOOPBACK=1
            for i in 1 2 3 4 5 6 7 8; do '\(command)' list:news.example.org > '\(f.dir.path("out"))'.$i 2>&1 & done
            wait
            """)
        #expect(result.status == 0, "\(result)")
        #expect(endpoint.requests.count == 1, "\(endpoint.requests)")
        let store = try Store.open(path: f.storePath, access: .readOnly)
        #expect(try store.unsubscribes(accountID: nil, limit: 10).count == 1)
    }
}
