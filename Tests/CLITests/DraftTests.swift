// Gmail drafts (issue 22, part 3), end to end against the fake Gmail's drafts API: saved
// by hd-send --draft (offline too, through the outbox), edited "on another device" through
// the fake's admin API, synced back, sent once by hd-drafts send, deleted. Every request
// that changes Gmail is also run with its answer lost after Gmail applied it, with 5xx, 429
// and a kill -9 after Gmail answered: the fake's own state must then hold exactly one draft,
// or one sent copy.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Drafts: hd-send --draft, hd-drafts, sync and the drafts API against the fake Gmail", .serialized)
struct DraftTests {
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "20", "--demo-span-days", "60"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// The fake's drafts: (draft id, rfc822 Message-ID, subject line).
    func drafts(_ fake: FakeGmail) throws -> [(id: String, messageID: String, raw: String)] {
        let state = try fake.admin("GET", "drafts") as? [String: Any]
        return try (state?["drafts"] as? [[String: Any]] ?? []).map { draft in
            var text = (draft["raw"] as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            let raw = String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self)
            return (draft["id"] as? String ?? "", draft["rfc822MessageId"] as? String ?? "", raw)
        }
    }

    /// Messages on the server with this Message-ID and the SENT label.
    func sentCopies(_ fake: FakeGmail, _ messageID: String) throws -> Int {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return (state?["messages"] as? [[String: Any]] ?? []).filter {
            $0["messageId"] as? String == messageID && ($0["labelIds"] as? [String] ?? []).contains("SENT")
        }.count
    }

    func requests(_ fake: FakeGmail, _ method: String, _ suffix: String) throws -> Int {
        try fake.requests().filter { $0.method == method && $0.path.hasSuffix(suffix) }.count
    }

    func draft(_ f: CLIFixture, _ arguments: [String], body: String = "Draft text.\n",
               environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--draft"] + arguments,
                              environment: f.environment.merging(environment) { $1 }, stdin: body)
    }

    func backoffOver(_ f: CLIFixture) throws {
        let result = try f.shell("sqlite3 \"$HUDSON_DB\" 'UPDATE outbox SET next_attempt_at = NULL'")
        #expect(result.status == 0, "\(result)")
    }

    func outboxCount(_ f: CLIFixture) throws -> Int {
        try f.run("hd-pending", "--json").lines.filter { $0.contains("\"type\":\"outbox\"") }.count
    }

    @Test("round trip: saved by Hudson, shown offline, edited on the phone, synced back, sent once, gone")
    func roundTrip() throws {
        let (f, fake) = try synced()
        let saved = try draft(f, ["--to", "bob@example.org", "--subject", "Plan"], body: "First version.\n")
        #expect(saved.status == 0 && saved.lines.count == 2 && saved.lines[1].hasPrefix("draft:"), "\(saved)")
        let reference = saved.lines[1]
        let id = String(reference.dropFirst("draft:".count))
        #expect(try drafts(fake).map(\.id) == [id])
        #expect(try f.run("hd-drafts", "list").stdout.hasPrefix("\(reference)\t"))
        #expect(try f.run("hd-drafts", "list", "--ids").stdout == "\(reference)\n")
        let json = try f.run("hd-drafts", "list", "--json")
        #expect(json.status == 0 && json.stdout.hasPrefix("{\"type\":\"draft\",\"id\":\"\(reference)\"")
                && json.stdout.contains("\"subject\":\"Plan\""), "\(json)")

        #expect(try f.run("hd-sync").status == 0)
        let listed = try f.run("hd-ls", "-l", "DRAFT")
        #expect(listed.status == 0 && listed.stdout.contains("Plan"), "\(listed)")
        #expect(try f.run("hd-search", "in:drafts", "Plan").stdout.contains("Plan"))

        // Edited on the phone: a new message with new text, the same draft id.
        let phone = "From: demo@hudson.test\nTo: bob@example.org, carol@example.net\nSubject: Plan (final)\n"
            + "Message-ID: <phone.1@hudson.test>\n\nFinished on the phone.\n"
        try fake.admin("POST", "draft", ["id": id, "raw": phone])
        #expect(try f.run("hd-sync").status == 0)
        let shown = try f.run("hd-drafts", "show", reference)
        #expect(shown.status == 0 && shown.stdout.contains("Subject: Plan (final)") && shown.stdout.contains("Finished on the phone."),
                "\(shown)")
        #expect(!(try f.run("hd-ls", "-l", "DRAFT").stdout.contains("Plan\t")))

        let sent = try f.run("hd-drafts", "send", reference)
        #expect(sent.status == 0 && sent.lines.count == 2 && sent.lines[1].hasPrefix("message:"), "\(sent)")
        #expect(try sentCopies(fake, "<phone.1@hudson.test>") == 1)
        #expect(try drafts(fake).isEmpty)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-drafts", "list").status == 1)
        #expect(try f.run("hd-ls", "-l", "DRAFT").stdout.isEmpty)

        let again = try f.run("hd-drafts", "send", reference)
        #expect(again.status == 65 && again.stderr.contains("no such draft"), "\(again)")
        #expect(try sentCopies(fake, "<phone.1@hudson.test>") == 1)
    }

    @Test("a draft made on another device arrives by sync; Hudson updates it (same id) and deletes it")
    func madeElsewhereUpdatedDeleted() throws {
        let (f, fake) = try synced()
        let made = try #require(try fake.admin("POST", "draft", ["raw": "From: demo@hudson.test\nTo: bob@example.org\nSubject: From the phone\nMessage-ID: <ph.2@hudson.test>\n\nHi\n"]) as? [String: Any])
        let id = try #require(made["id"] as? String)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-drafts", "list").stdout.contains("draft:\(id)\t"))
        let updated = try CommandRunner.run(BuiltProducts.executable("hd-send"),
                                            ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "Rewritten"],
                                            environment: f.environment, stdin: "New text.\n")
        #expect(updated.status == 0 && updated.lines.last == "draft:\(id)", "\(updated)")
        let server = try drafts(fake)
        #expect(server.count == 1 && server.first?.id == id && server.first?.raw.contains("Subject: Rewritten") == true)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-drafts", "show", "draft:\(id)").stdout.contains("New text."))

        let deleted = try f.run("hd-drafts", "delete", "draft:\(id)")
        #expect(deleted.status == 0, "\(deleted)")
        #expect(try drafts(fake).isEmpty)
        #expect(try f.run("hd-ls", "-l", "DRAFT").stdout.isEmpty)
        let twice = try f.run("hd-drafts", "delete", "draft:\(id)")
        #expect(twice.status == 0 && twice.stderr.contains("no longer has it"), "\(twice)")
    }

    @Test("offline, a draft is queued in the outbox and listed; the next hd-sync saves it once")
    func offlineCreate() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        let result = try draft(f, ["--to", "bob@example.org", "--subject", "Offline draft"])
        #expect(result.status == 0 && result.stdout == "outbox:1\n" && result.stderr.contains("save it as a draft"), "\(result)")
        let listed = try f.run("hd-drafts", "list")
        #expect(listed.stdout.hasPrefix("outbox:1\t") && listed.stdout.contains("\tbob@example.org\tOffline draft"), "\(listed)")
        let json = try f.run("hd-drafts", "list", "--json")
        #expect(json.stdout.hasPrefix("{\"type\":\"outbox\",\"id\":\"outbox:1\"") && json.stdout.contains("\"kind\":\"draft\""), "\(json)")
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try drafts(fake).count == 1)
        #expect(try f.run("hd-drafts", "list").stdout.hasPrefix("draft:"))
    }

    @Test("offline, a draft saved and then updated (outbox:N) replaces the queued version: Gmail gets only the last")
    func offlineUpdateOfUnsavedDraft() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        #expect(try draft(f, ["--no-send", "--to", "bob@example.org", "--subject", "First"]).stdout == "outbox:1\n")
        let updated = try CommandRunner.run(BuiltProducts.executable("hd-send"),
                                            ["--update-draft", "outbox:1", "--no-send", "--to", "bob@example.org", "--subject", "Second"],
                                            environment: f.environment, stdin: "Better.\n")
        #expect(updated.status == 0 && updated.stdout == "outbox:2\n", "\(updated)")
        let listed = try f.run("hd-drafts", "list")
        #expect(listed.lines.count == 1 && listed.stdout.hasPrefix("outbox:2\t") && listed.stdout.contains("Second"), "\(listed)")
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        let server = try drafts(fake)
        #expect(server.count == 1 && server.first?.raw.contains("Subject: Second\r\n") == true, "\(server.map(\.raw))")
        // Saved now: outbox:2 names the draft, and an update through it goes to Gmail's draft.
        let again = try CommandRunner.run(BuiltProducts.executable("hd-send"),
                                          ["--update-draft", "outbox:2", "--to", "bob@example.org", "--subject", "Third"],
                                          environment: f.environment, stdin: "Best.\n")
        #expect(again.status == 0 && again.lines.last == "draft:\(server.first?.id ?? "")", "\(again)")
        #expect(try drafts(fake).map(\.id) == server.map(\.id))
    }

    @Test("drafts.create: a lost answer, 5xx after applying, 5xx, 429 and kill -9: exactly one draft each time")
    func createFaults() throws {
        let (f, fake) = try synced()
        let rules: [[String: Any]] = [["mode": "apply_then_drop"], ["mode": "apply_then_status", "status": 500],
                                      ["status": 503], ["status": 429, "retry_after": 3600, "times": -1], [:]]
        for (index, rule) in rules.enumerated() {
            let crash = rule.isEmpty
            if !crash {
                var rule = rule
                rule["path"] = "/drafts$"
                rule["method"] = "POST"
                try fake.faults([rule])
            }
            let subject = "Draft \(index)"
            let result = try draft(f, ["--to", "bob@example.org", "--subject", subject],
                                   environment: crash ? ["HUDSON_TEST_CRASH_AFTER_SEND": "1"] : [:])
            #expect(crash ? result.status != 0 : result.status == 0 && result.stderr.contains("queued"), "\(rule): \(result)")
            try fake.admin("DELETE", "faults")
            try backoffOver(f)
            #expect(try f.run("hd-sync").status == 0)
            #expect(try drafts(fake).filter { $0.raw.contains("Subject: \(subject)\r\n") }.count == 1, "\(rule)")
        }
        #expect(try drafts(fake).count == rules.count)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try outboxCount(f) == 0)
    }

    @Test("drafts.update with its answer lost or a 5xx: the draft holds the new text, once, and keeps its id")
    func updateFaults() throws {
        let (f, fake) = try synced()
        let saved = try draft(f, ["--to", "bob@example.org", "--subject", "v1"])
        let id = try #require(saved.lines.last?.dropFirst("draft:".count)).description
        #expect(try f.run("hd-sync").status == 0)
        for (index, rule) in [["mode": "apply_then_drop"], ["status": 503], ["mode": "apply_then_status", "status": 502]]
            .enumerated() {
            var rule: [String: Any] = rule
            rule["path"] = "/drafts/[^/]+$"
            rule["method"] = "PUT"
            try fake.faults([rule])
            let result = try CommandRunner.run(BuiltProducts.executable("hd-send"),
                                               ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "v\(index + 2)"],
                                               environment: f.environment, stdin: "Version \(index + 2).\n")
            #expect(result.status == 0, "\(rule): \(result)")
            try fake.admin("DELETE", "faults")
            try backoffOver(f)
            #expect(try f.run("hd-sync").status == 0)
            let server = try drafts(fake)
            #expect(server.count == 1 && server.first?.id == id && server.first?.raw.contains("Subject: v\(index + 2)\r\n") == true,
                    "\(rule): \(server.map(\.raw))")
        }
        let pending = try f.run("hd-pending")
        #expect(try outboxCount(f) == 0, "\(pending)")
    }

    @Test("drafts.send with its answer lost, 5xx after sending, 5xx before, and kill -9: one sent copy, no second send")
    func sendFaults() throws {
        let (f, fake) = try synced()
        let rules: [[String: Any]] = [["mode": "apply_then_drop"], ["mode": "apply_then_status", "status": 500],
                                      ["status": 503], [:]]
        for (index, rule) in rules.enumerated() {
            let crash = rule.isEmpty
            let saved = try draft(f, ["--to", "bob@example.org", "--subject", "Send \(index)"])
            let reference = try #require(saved.lines.last)
            let messageID = try #require(try drafts(fake).first { $0.id == reference.dropFirst("draft:".count).description }?.messageID)
            if !crash {
                var rule = rule
                rule["path"] = "/drafts/send$"
                try fake.faults([rule])
            }
            let result = try CommandRunner.run(BuiltProducts.executable("hd-drafts"), ["send", reference],
                                               environment: f.environment.merging(crash ? ["HUDSON_TEST_CRASH_AFTER_SEND": "1"] : [:]) { $1 })
            #expect(crash ? result.status != 0 : result.status == 0 && result.stderr.contains("queued"), "\(rule): \(result)")
            let appliedFirst = (rule["mode"] as? String)?.hasPrefix("apply") == true || crash
            #expect(try sentCopies(fake, messageID) == (appliedFirst ? 1 : 0))
            try fake.admin("DELETE", "faults")
            try fake.clearRequests()
            try backoffOver(f)
            #expect(try f.run("hd-sync").status == 0)
            #expect(try sentCopies(fake, messageID) == 1, "\(rule)")
            #expect(try requests(fake, "POST", "/drafts/send") == (appliedFirst ? 0 : 1), "\(rule)")
        }
        #expect(try f.run("hd-sync").status == 0)
        let pending = try f.run("hd-pending")
        #expect(try outboxCount(f) == 0, "\(pending)")
    }

    @Test("a lost answer to drafts.delete: the client asks again (delete is idempotent), finds it gone, and it is done")
    func deleteLostAnswer() throws {
        let (f, fake) = try synced()
        let saved = try draft(f, ["--to", "bob@example.org", "--subject", "Doomed"])
        let reference = try #require(saved.lines.last)
        #expect(try f.run("hd-sync").status == 0)
        try fake.faults([["mode": "apply_then_drop", "path": "/drafts/[^/]+$", "method": "DELETE"]])
        let lost = try f.run("hd-drafts", "delete", reference)
        #expect(lost.status == 0 && lost.stderr.contains("no longer has it"), "\(lost)")
        try fake.admin("DELETE", "faults")
        let again = try f.run("hd-drafts", "delete", reference)
        #expect(again.status == 0, "\(again)")
        #expect(try drafts(fake).isEmpty)
        #expect(try f.run("hd-drafts", "list").status == 1)
    }

    @Test("usage: a bad draft reference, an unsaved outbox:N to update, an unknown draft")
    func usage() throws {
        let (f, _) = try synced()
        #expect(try f.run("hd-drafts", "show", "message:1").status == 64)
        let unsaved = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--update-draft", "outbox:3", "--to", "b@example.org"],
                                            environment: f.environment, stdin: "x\n")
        #expect(unsaved.status == 65 && unsaved.stderr.contains("no such draft in the outbox"), "\(unsaved)")
        let unknown = try CommandRunner.run(BuiltProducts.executable("hd-send"), ["--update-draft", "draft:r-1", "--to", "b@example.org"],
                                            environment: f.environment, stdin: "x\n")
        #expect(unknown.status == 65 && unknown.stderr.contains("no such draft"), "\(unknown)")
        #expect(try f.run("hd-drafts", "list").status == 1)
    }
}
