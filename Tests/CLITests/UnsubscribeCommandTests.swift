// hd-unsubscribe (issue 42) against a sender's endpoint on 127.0.0.1 (tools/unsubscribe-endpoint),
// through the documented loopback seam: exactly RFC 8058's request where its conditions hold,
// none where they do not, never two; mailto through the outbox, once; https printed.
import Foundation
import HudsonStore
import HudsonTestSupport
import SQLite
import Testing

/// The endpoint server: every request it received, in order.
final class UnsubscribeEndpoint {
    let directory = TemporaryDirectory()
    let process = Process()
    let port: Int

    init() throws {
        let portFile = directory.path("port")
        _ = FileManager.default.createFile(atPath: portFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", FakeGmail.repositoryRoot.appendingPathComponent("tools/unsubscribe-endpoint/server.py").path,
                             directory.path("log")]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: portFile))
        process.standardError = FileHandle.nullDevice
        try process.run()
        var found: Int?
        for _ in 0..<600 where found == nil {
            found = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw FakeGmailError("the unsubscribe endpoint did not start")
        }
        port = found
    }

    deinit { kill(process.processIdentifier, SIGKILL) }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    var requests: [[String: Any]] {
        let text = (try? String(contentsOfFile: directory.path("log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

extension CLIFixture {
    /// One list per case, each a message of its own with the given headers. A list whose
    /// id is a domain name mails from it and is signed by it: signedOneClick's (and
    /// `passed`'s) news.example.org in Authentication-Results and DKIM-Signature becomes the
    /// list's id, so its offer is aligned with both From and List-Id (SenderReport).
    func unsubscribeMailbox(_ lists: [(id: String, headers: ListHeaders)], mailbox: String = "ann@example.com") throws {
        let store = try openStore()
        let account = try store.addAccount(email: mailbox, consentedAt: 1_767_225_600, lookbackDays: 90)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let snapshots = lists.enumerated().map { index, list -> MessageSnapshot in
            let isDomain = list.id.contains(".") && list.id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
            let domain = isDomain ? list.id : "news.example.org"
            var headers = MessageHeaders(subject: "news", from: "News <news@\(domain)>", to: "Ann <ann@example.com>",
                                         messageID: "<m\(index)@example.org>", listID: "<\(list.id)>")
            headers.list = list.headers
            headers.list.authenticationResults = list.headers.authenticationResults?
                .replacingOccurrences(of: "@news.example.org", with: "@" + domain)
            headers.list.dkimSignatures = list.headers.dkimSignatures?.replacingOccurrences(of: "d=news.example.org", with: "d=" + domain)
            return MessageSnapshot(id: "m\(index)", threadID: "t\(index)", historyID: 100, internalDate: now - Int64(index + 1) * 60_000,
                                   labelIDs: ["INBOX", "UNREAD"], headers: headers)
        }
        _ = try store.applySnapshots(snapshots, accountID: account.id)
    }

    var loopback: [String: String] { ["HUDSON_TEST_UNSUBSCRIBE_LOOPBACK": "1", "HUDSON_TEST_UNSUBSCRIBE_TIMEOUT": "3"] }
}

/// signedOneClick (SendersCommandTests) with its https URI replaced.
func oneClick(_ uri: String, mailto: String? = nil) -> ListHeaders {
    var headers = signedOneClick
    headers.unsubscribe = (mailto.map { "<\($0)>, " } ?? "") + "<\(uri)>"
    return headers
}

@Suite("hd-unsubscribe: RFC 8058 exactly, once, recorded", .serialized)
struct UnsubscribeCommandTests {
    @Test("one-click: one POST of exactly List-Unsubscribe=One-Click, form-encoded, no cookie or credentials; never a second")
    func oneClickOnce() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok")))])
        let first = try f.run("hd-unsubscribe", "list:news.example.org", environment: f.loopback)
        #expect(first.status == 0, "\(first)")
        #expect(first.lines == ["list:news.example.org\tone-click\tdone\t\(endpoint.url("/ok"))\tHTTP 200"])
        let requests = endpoint.requests
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(request["method"] as? String == "POST" && request["path"] as? String == "/ok")
        #expect(Data(base64Encoded: request["body"] as? String ?? "") == Data("List-Unsubscribe=One-Click".utf8))
        #expect(headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(headers["cookie"] == nil && headers["authorization"] == nil && headers["referer"] == nil)
        // Again, by query or by reference: the record says it was done; no second POST.
        let again = try f.run("hd-unsubscribe", "from:news@news.example.org", environment: f.loopback)
        #expect(again.lines.first?.contains("already-done") == true, "\(again)")
        _ = try f.run("hd-unsubscribe", "message:m0", environment: f.loopback)
        #expect(endpoint.requests.count == 1)
        let list = try f.run("hd-unsubscribe", "--list", "--json")
        #expect(list.lines.count == 1 && list.stdout.contains("\"state\":\"done\""), "\(list)")
    }

    @Test("no POST unless every condition holds; the next safe method is used instead")
    func conditions() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        func without(_ change: (inout ListHeaders) -> Void) -> ListHeaders {
            var headers = oneClick(endpoint.url("/ok"))
            change(&headers)
            return headers
        }
        try f.unsubscribeMailbox([
            ("nopost.example.org", without { $0.unsubscribePost = nil }),
            ("wrongpost.example.org", without { $0.unsubscribePost = "List-Unsubscribe=Yes" }),
            ("dkimfail.example.org", without { $0.authenticationResults = "mx.google.com; dkim=fail header.i=@news.example.org header.s=s1" }),
            ("forged.example.org", without { $0.authenticationResults = "attacker.example; dkim=pass header.i=@news.example.org header.s=s1" }),
            ("uncovered.example.org", without { $0.dkimSignatures = "d=news.example.org; s=s1; h=from:to:subject" }),
            ("otherdomain.example.org", without { $0.dkimSignatures = "d=elsewhere.example; s=s1; h=list-unsubscribe:list-unsubscribe-post" }),
        ])
        let result = try f.run("hd-unsubscribe", "is:unread", "--json", environment: f.loopback)
        #expect(endpoint.requests.isEmpty, "\(endpoint.requests)")
        #expect(result.lines.count == 6)
        // Without a pass for the list's own domain (dkim=fail, a verdict not Gmail's) its
        // mail offers nothing, not even the page; signed by it, the page is printed.
        for line in result.lines {
            let unsigned = line.contains("dkimfail.example.org") || line.contains("forged.example.org")
            #expect(unsigned ? line.contains("\"method\":\"none\"")
                             : line.contains("\"method\":\"https\"") && line.contains("\"state\":\"printed\""), "\(line)")
        }
    }

    @Test("without the test seam an http URI is no method at all, even on loopback")
    func httpRefusedForUsers() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok")))])
        let result = try f.run("hd-unsubscribe", "list:news.example.org")
        #expect(result.lines.first?.contains("\tnone\t") == true, "\(result)")
        #expect(endpoint.requests.isEmpty)
    }

    @Test("hostile URIs: nothing is requested, nothing printed as a page")
    func hostileURIs() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        let uris = ["javascript:alert(1)", "file:///etc/passwd", "https://127.0.0.1/u", "https://[::1]/u",
                    "https://user:secret@news.example.org/u", "https://" + String(repeating: "a", count: 3000) + ".example.org/u",
                    "http://127.0.0.1:\(endpoint.port)@evil.example/u", "data:text/html,<script>"]
        try f.unsubscribeMailbox(uris.enumerated().map { ("l\($0.offset).example.org", oneClick($0.element)) })
        let result = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect(endpoint.requests.isEmpty)
        #expect(result.lines.count == uris.count)
        #expect(result.lines.allSatisfy { $0.contains("\tnone\t") }, "\(result)")
    }

    @Test("a redirect is not followed (to another host or this one); the outcome is unknown and not retried")
    func redirects() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("a.example.org", oneClick(endpoint.url("/redirect"))),
                                  ("b.example.org", oneClick(endpoint.url("/same-redirect")))])
        let result = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect(result.status == 2, "\(result)")
        #expect(endpoint.requests.map { $0["path"] as? String } == ["/redirect", "/same-redirect"]
                || endpoint.requests.map { $0["path"] as? String } == ["/same-redirect", "/redirect"])
        #expect(result.lines.allSatisfy { $0.contains("\tunknown\t") && $0.contains("not followed") }, "\(result)")
        _ = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect(endpoint.requests.count == 2)
    }

    @Test("a slow server, a dripping one, a dropped answer: bounded, unknown, never retried; a huge answer is not read whole",
          .timeLimit(.minutes(2)))
    func slowAndLost() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("slow.example.org", oneClick(endpoint.url("/slow"))),
                                  ("drip.example.org", oneClick(endpoint.url("/drip"))),
                                  ("drop.example.org", oneClick(endpoint.url("/drop"))),
                                  ("big.example.org", oneClick(endpoint.url("/big"))),
                                  ("fail.example.org", oneClick(endpoint.url("/fail")))])
        let result = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect(result.status == 2, "\(result)")
        func line(_ list: String) -> String { result.lines.first { $0.hasPrefix("list:\(list)") } ?? "" }
        #expect(line("slow.example.org").contains("\tunknown\t"), "\(result)")
        #expect(line("drop.example.org").contains("\tunknown\t"), "\(result)")
        #expect(line("drip.example.org").contains("\tdone\t"), "\(result)")  // its 200 came at once
        #expect(line("big.example.org").contains("\tdone\t"), "\(result)")
        #expect(line("fail.example.org").contains("\trefused\t") && line("fail.example.org").contains("HTTP 500"), "\(result)")
        #expect(endpoint.requests.count == 5)
        // The unknown ones are not tried again.
        let again = try f.run("hd-unsubscribe", "is:unread", environment: f.loopback)
        #expect(endpoint.requests.count == 6, "only the refused one is tried again: \(again)")
    }

    @Test("killed right after recording its intent: no POST went out, and the next run does not send one")
    func killedAfterIntent() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok")))])
        var environment = f.loopback
        environment["HUDSON_TEST_CRASH_AFTER_COMMIT"] = "1"
        let killed = try f.run("hd-unsubscribe", "list:news.example.org", environment: environment)
        #expect(killed.status != 0)
        #expect(endpoint.requests.isEmpty)
        let again = try f.run("hd-unsubscribe", "list:news.example.org", environment: f.loopback)
        #expect(again.lines.first?.contains("already-intended") == true, "\(again)")
        #expect(endpoint.requests.isEmpty)
    }

    /// Gmail's verdict for mail signed by the domain the fixture's From names.
    static let passed = "mx.google.com; dkim=pass header.i=@news.example.org header.s=s1"

    @Test("--dry-run requests nothing and records nothing")
    func dryRun() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok"))),
                                  ("mail.example.org", ListHeaders(unsubscribe: "<mailto:stop@mail.example.org?subject=stop>",
                                                                   authenticationResults: Self.passed))])
        let result = try f.run("hd-unsubscribe", "--dry-run", "is:unread", environment: f.loopback)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("would-post") && result.stdout.contains("would-send"))
        #expect(endpoint.requests.isEmpty)
        #expect(try f.run("hd-unsubscribe", "--list").status == 1)
        #expect(try f.run("hd-send", "--list").stdout.isEmpty || true)
    }

    @Test("mailto: one outbox message with the URI's address and subject; a second run queues none")
    func mailtoOnce() throws {
        let f = CLIFixture()
        try f.unsubscribeMailbox([("mail.example.org",
                                   ListHeaders(unsubscribe: "<mailto:stop@mail.example.org?subject=Remove%20me&body=please>",
                                               authenticationResults: Self.passed)),
                                  // Unsigned, or to a domain that is not the sender's: no mail is sent.
                                  ("unsigned.example.org", ListHeaders(unsubscribe: "<mailto:stop@news.example.org>")),
                                  ("elsewhere.example.org", ListHeaders(unsubscribe: "<mailto:ceo@victim.example.net>",
                                                                        authenticationResults: Self.passed))])
        for list in ["unsigned.example.org", "elsewhere.example.org"] {
            let none = try f.run("hd-unsubscribe", "--no-flush", "list:\(list)")
            #expect(none.lines.first?.contains("\tnone\tnone\t") == true, "\(none)")
        }
        let first = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(first.status == 0, "\(first)")
        #expect(first.lines.first?.contains("\tmailto\tqueued\tstop@mail.example.org\toutbox:1") == true, "\(first)")
        let second = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(second.lines.first?.contains("already-queued") == true, "\(second)")
        let store = try Store.open(path: f.storePath, access: .readOnly)
        let entries = try store.pendingOutbox()
        #expect(entries.count == 1)
        #expect(entries.first?.recipients == ["stop@mail.example.org"] && entries.first?.subject == "Remove me")
    }

    @Test("a group's offer comes only from mail its own domain signed: not a newer message another domain signed with its List-Id, nor unsigned mail with its From forged")
    func offerOnlyFromTheGroupsSigner() throws {
        let f = CLIFixture()
        let store = try f.openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func message(_ id: String, minutesAgo: Int64, from: String, listID: String?, unsubscribe: String, oneClick: Bool,
                     signer: String?) -> MessageSnapshot {
            var headers = MessageHeaders(subject: "news", from: from, to: "Ann <ann@example.com>", messageID: "<\(id)@example.org>",
                                         listID: listID)
            headers.list = ListHeaders(
                unsubscribe: unsubscribe, unsubscribePost: oneClick ? "List-Unsubscribe=One-Click" : nil,
                authenticationResults: signer.map { "mx.google.com; dkim=pass header.i=@\($0) header.s=s1" },
                dkimSignatures: signer.map { "d=\($0); s=s1; h=from:to:subject:list-unsubscribe:list-unsubscribe-post" })
            return MessageSnapshot(id: id, threadID: id, historyID: 100, internalDate: now - minutesAgo * 60_000,
                                   labelIDs: ["INBOX", "UNREAD"], headers: headers)
        }
        _ = try store.applySnapshots([
            // The bank's list, signed by the bank; then a newer message with its List-Id, from and signed by another domain.
            message("b1", minutesAgo: 60, from: "Bank <news@bank.example.com>", listID: "<bank.example.com>",
                    unsubscribe: "<https://bank.example.com/u>", oneClick: true, signer: "bank.example.com"),
            message("b2", minutesAgo: 10, from: "News <news@attacker.example>", listID: "<bank.example.com>",
                    unsubscribe: "<https://tracker.attacker.example/confirm?u=demo>", oneClick: true, signer: "attacker.example"),
            // A shop's list, signed by it; then a newer unsigned message with the shop's From and List-Id.
            message("s1", minutesAgo: 60, from: "Shop <deals@shop.example.net>", listID: "<deals.shop.example.net>",
                    unsubscribe: "<https://shop.example.net/prefs>", oneClick: false, signer: "shop.example.net"),
            message("s2", minutesAgo: 10, from: "Shop <deals@shop.example.net>", listID: "<deals.shop.example.net>",
                    unsubscribe: "<https://tracker.attacker.example/page>", oneClick: false, signer: nil),
            // A sender without a list: the same, grouped by its address.
            message("a1", minutesAgo: 60, from: "Alerts <alerts@alerts.example.net>", listID: nil,
                    unsubscribe: "<https://alerts.example.net/prefs>", oneClick: false, signer: "alerts.example.net"),
            message("a2", minutesAgo: 10, from: "Alerts <alerts@alerts.example.net>", listID: nil,
                    unsubscribe: "<https://tracker.attacker.example/alerts>", oneClick: true, signer: nil),
            // A list whose only offer is another domain's: no offer at all.
            message("o1", minutesAgo: 10, from: "News <news@attacker.example>", listID: "<other.example.com>",
                    unsubscribe: "<https://tracker.attacker.example/other>", oneClick: true, signer: "attacker.example"),
        ], accountID: account.id)
        let bank = try f.run("hd-unsubscribe", "--dry-run", "list:bank.example.com")
        #expect(bank.lines.count == 1 && bank.stdout.contains("\tone-click\twould-post\thttps://bank.example.com/u"), "\(bank)")
        let shop = try f.run("hd-unsubscribe", "--dry-run", "list:deals.shop.example.net")
        #expect(shop.lines.count == 1 && shop.stdout.contains("\thttps\twould-print\thttps://shop.example.net/prefs"), "\(shop)")
        let alerts = try f.run("hd-unsubscribe", "--dry-run", "from:alerts@alerts.example.net")
        #expect(alerts.lines.count == 1 && alerts.stdout.contains("\thttps\twould-print\thttps://alerts.example.net/prefs"), "\(alerts)")
        let other = try f.run("hd-unsubscribe", "--dry-run", "list:other.example.com")
        #expect(other.lines.first?.contains("\tnone\tnone\t") == true && other.stdout.contains("not signed by its own domain"), "\(other)")
        // hd-senders shows the same offers, by the same rule; nothing anywhere names the tracker.
        let senders = try f.run("hd-senders", "--json")
        #expect(senders.lines.count == 4 && !senders.stdout.contains("tracker"), "\(senders)")
        #expect(senders.lines.first { $0.contains("\"list:bank.example.com\"") }?.contains("[\"one-click\",\"https\"]") == true, "\(senders)")
        for result in [bank, shop, alerts, other] { #expect(!result.stdout.contains("tracker"), "\(result)") }
    }

    @Test("mailto: a body with line breaks (RFC 6068 %0D%0A) is sent with them, as CRLF")
    func mailtoBodyLineBreaks() throws {
        let f = CLIFixture()
        try f.unsubscribeMailbox([("body.example.org", ListHeaders(
            unsubscribe: "<mailto:stop@body.example.org?subject=remove&body=unsubscribe%20list%0D%0Aaddress%20demo>",
            authenticationResults: Self.passed))])
        let result = try f.run("hd-unsubscribe", "--no-flush", "list:body.example.org")
        #expect(result.lines.first?.contains("\tmailto\tqueued\tstop@body.example.org") == true, "\(result)")
        let store = try Store.open(path: f.storePath, access: .readOnly)
        let raw = try #require(try store.db.first("SELECT raw FROM outbox") { String(decoding: $0.blob(0), as: UTF8.self) })
        #expect(raw.contains("Subject: remove\r\n") && raw.contains("\r\n\r\nunsubscribe list\r\naddress demo"), "\(raw)")
    }

    @Test("mailto: a message cancelled (hd-undo outbox:N) or failed is no unsubscribe: --list says so, a new run queues one (never two live)")
    func mailtoCancelledOrFailed() throws {
        let f = CLIFixture()
        try f.unsubscribeMailbox([("mail.example.org", ListHeaders(unsubscribe: "<mailto:stop@mail.example.org?subject=stop>",
                                                                   authenticationResults: Self.passed))])
        let first = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(first.lines.first?.contains("\tmailto\tqueued\tstop@mail.example.org\toutbox:1") == true, "\(first)")
        #expect(try f.run("hd-undo", "--no-flush", "outbox:1").status == 0)
        let cancelled = try f.run("hd-unsubscribe", "--list")
        #expect(cancelled.lines.count == 1 && cancelled.lines[0].contains("\tmailto\tcancelled\t"), "\(cancelled)")
        // The list mails again: it is not one the user unsubscribed from.
        let store = try f.openStore()
        var later = MessageHeaders(subject: "more", from: "News <news@mail.example.org>", to: "Ann <ann@example.com>",
                                   messageID: "<later@example.org>", listID: "<mail.example.org>")
        later.list = ListHeaders(unsubscribe: "<mailto:stop@mail.example.org?subject=stop>",
                                 authenticationResults: "mx.google.com; dkim=pass header.i=@mail.example.org header.s=s1")
        _ = try store.applySnapshots([MessageSnapshot(id: "later", threadID: "later", historyID: 200,
                                                      internalDate: Int64(Date().timeIntervalSince1970 * 1000) + 60_000,
                                                      labelIDs: ["INBOX", "UNREAD"], headers: later)], accountID: 1)
        #expect(try f.run("hd-senders", "--after-unsubscribe", "--ids").lines.isEmpty)
        let second = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(second.lines.first?.contains("\tmailto\tqueued\tstop@mail.example.org\toutbox:2") == true, "\(second)")
        let third = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(third.lines.first?.contains("already-queued") == true, "\(third)")
        #expect(try store.pendingOutbox().filter { $0.state == .queued || $0.state == .sending }.map(\.id) == [2])
        #expect(try f.run("hd-senders", "--after-unsubscribe", "--ids").lines == ["list:mail.example.org"])
        // Gmail refuses it for good (as the flusher leaves it): failed, and again not an unsubscribe.
        try store.db.execute("UPDATE outbox SET state = 'failed', last_error = 'rejected' WHERE id = 2")
        let failed = try f.run("hd-unsubscribe", "--list")
        #expect(failed.lines.first?.contains("\tmailto\tfailed\t") == true, "\(failed)")
        let fourth = try f.run("hd-unsubscribe", "--no-flush", "list:mail.example.org")
        #expect(fourth.lines.first?.contains("\tmailto\tqueued\tstop@mail.example.org\toutbox:3") == true, "\(fourth)")
        #expect(try store.pendingOutbox().filter { $0.state == .queued || $0.state == .sending }.map(\.id) == [3])
    }

    @Test("--then archive queues one undoable action over the senders' mail; --and-filter adds a rule that parses")
    func thenAndFilter() throws {
        let f = CLIFixture()
        try f.unsubscribeMailbox([("page.example.org", ListHeaders(unsubscribe: "<https://page.example.org/prefs>",
                                                                   authenticationResults: Self.passed))])
        let result = try f.run("hd-unsubscribe", "--no-flush", "--then", "archive", "--and-filter", "list:page.example.org")
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.first?.contains("\thttps\tprinted\thttps://page.example.org/prefs") == true, "\(result)")
        #expect(try f.run("hd-ls", "--ids").lines.isEmpty)
        let rules = try String(contentsOfFile: f.dir.path("config/rules"), encoding: .utf8)
        #expect(rules == "[unsubscribed list:page.example.org] list:page.example.org => archive\n")
        #expect(try f.run("hd-filters", "rules", "check").status == 0)
        #expect(try f.run("hd-undo", "--no-flush").status == 0)
        #expect(try f.run("hd-ls", "--ids").lines.count == 1)
        #expect(try f.run("hd-unsubscribe", "--then", "bogus", "x").status == 64)
        #expect(try f.run("hd-unsubscribe", "--and-filter", "x").status == 64)
    }

    @Test("generated operands and options: no crash, no request unless asked, a one-line error, a documented status",
          .timeLimit(.minutes(3)))
    func generatedInput() throws {
        let endpoint = try UnsubscribeEndpoint()
        let f = CLIFixture()
        try f.unsubscribeMailbox([("news.example.org", oneClick(endpoint.url("/ok")))])
        var generator = AddressSeededGenerator(seed: 11)
        let pieces = ["--dry-run", "--then", "archive", "label=", "label=X", "--and-filter", "--list", "message:", "thread:zz",
                      "message:m0", "(", "from:", "\u{1B}[2J", "--json", "-l", "-3", "is:unread", "--no-flush", "\"", "%"]
        for round in 0..<40 {
            var arguments = (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            arguments.insert("--dry-run", at: 0)
            let result = try CommandRunner.run(BuiltProducts.executable("hd-unsubscribe"), arguments,
                                               environment: f.environment.merging(f.loopback) { $1 }, timeout: 30)
            #expect([0, 1, 2, 64, 65, 78].contains(result.status), "seed 11 round \(round): \(arguments) \(result)")
            let errors = result.stderr.split(separator: "\n").filter { !$0.contains("would ") }
            #expect(errors.count <= 1 || (errors.count == 2 && errors[1].hasPrefix("usage: ")), "seed 11 round \(round): \(arguments) \(result)")
        }
        #expect(endpoint.requests.isEmpty, "a dry run requested something")
    }

    @Test("--and-filter with a hostile List-Id: the rule written parses and names only that list")
    func hostileRule() throws {
        let f = CLIFixture()
        try f.unsubscribeMailbox([("b]c: trash (x", ListHeaders(unsubscribe: "<https://page.example.org/prefs>")),
                                  ("q\"uote.example", ListHeaders(unsubscribe: "<https://page.example.org/prefs>"))])
        let ids = try f.run("hd-senders", "--ids").lines
        let hostile = try #require(ids.first { $0.contains("trash") })
        let result = try f.run("hd-unsubscribe", "--no-flush", "--then", "archive", "--and-filter", hostile)
        #expect(result.status == 0, "\(result)")
        let check = try f.run("hd-filters", "rules", "check")
        #expect(check.status == 0 && check.lines.count == 1, "\(check)")
        #expect(check.stdout.contains("=> archive") && !check.stdout.contains("=> trash"), "\(check)")
        #expect(try f.run("hd-ls", "--ids").lines.count == 1)
        // A double quote cannot be written in a query term (Gmail's quotes have no escapes):
        // that id selects nothing, and nothing is done.
        let quoted = try #require(ids.first { $0.contains("uote") })
        let none = try f.run("hd-unsubscribe", "--no-flush", "--then", "archive", "--and-filter", quoted)
        #expect(none.status == 1 && none.stdout.isEmpty, "\(none)")
        #expect(try f.run("hd-filters", "rules", "check").lines.count == 1)
    }
}
