// Two devices, one draft (issue 37 §5), end to end against the fake Gmail: an update queued
// offline must not overwrite the draft as it was finished on the phone meanwhile, and
// hd-drafts send must not send a version nobody read. Gmail's drafts.update and drafts.send
// are blind, so Hudson reads the draft first; when both changed it keeps both (the local
// version as a new draft) and says so on standard error, in hd-pending and in hd-drafts
// list. Every request is also run with its answer lost, 5xx, 429, and kill -9 between the
// check and the write: the fake's own drafts must then hold each version exactly once.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Drafts on two devices: nothing overwritten without a word (issue 37 §5)", .serialized)
struct DraftConflictTests {
    /// A synced account with one draft Hudson saved and synced: (fixture, fake, draft id).
    func withDraft() throws -> (CLIFixture, FakeGmail, String) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "10", "--demo-span-days", "30"])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let saved = try hdSend(f, ["--draft", "--to", "bob@example.org", "--subject", "Plan v1"], body: "First version.\n")
        let reference = try #require(saved.lines.last, "\(saved)")
        #expect(saved.status == 0 && reference.hasPrefix("draft:"), "\(saved)")
        #expect(try f.run("hd-sync").status == 0)
        return (f, fake, String(reference.dropFirst("draft:".count)))
    }

    func hdSend(_ f: CLIFixture, _ arguments: [String], body: String = "Local text.\n",
                environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-send"), arguments, environment: f.environment.merging(environment) { $1 },
                              stdin: body)
    }

    /// The fake's drafts: (id, raw text).
    func drafts(_ fake: FakeGmail) throws -> [(id: String, raw: String)] {
        let state = try fake.admin("GET", "drafts") as? [String: Any]
        return try (state?["drafts"] as? [[String: Any]] ?? []).map { draft in
            var text = (draft["raw"] as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return (draft["id"] as? String ?? "", String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
        }
    }

    /// How many of the fake's drafts hold `text`.
    func holding(_ fake: FakeGmail, _ text: String) throws -> Int { try drafts(fake).filter { $0.raw.contains(text) }.count }

    func editOnPhone(_ fake: FakeGmail, _ id: String, _ text: String = "Finished on the phone.") throws {
        let phone = "From: demo@hudson.test\nTo: bob@example.org, carol@example.net\nSubject: Plan (phone)\n"
            + "Message-ID: <phone.\(UUID().uuidString)@hudson.test>\n\n\(text)\n"
        try fake.admin("POST", "draft", ["id": id, "raw": phone])
    }

    func offline(_ fake: FakeGmail) throws { try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]]) }

    func backoffOver(_ f: CLIFixture) throws {
        #expect(try f.shell("sqlite3 \"$HUDSON_DB\" 'UPDATE outbox SET next_attempt_at = NULL'").status == 0)
    }

    func writes(_ fake: FakeGmail) throws -> [String] {
        try fake.requests().filter { ["POST", "PUT"].contains($0.method) && $0.path.contains("/drafts") }.map { "\($0.method) \($0.path)" }
    }

    @Test("the reported case: an update queued offline, the draft finished on the phone, then sync: both kept, and said")
    func offlineUpdateAfterPhoneEdit() throws {
        let (f, fake, id) = try withDraft()
        try offline(fake)
        let queued = try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "Plan (laptop)"],
                                body: "Written on the laptop.\n")
        #expect(queued.status == 0 && queued.stdout == "outbox:2\n", "\(queued)")
        try editOnPhone(fake, id)
        try fake.admin("DELETE", "faults")
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        // Both versions, each once; the phone's is still the draft it was.
        let server = try drafts(fake)
        #expect(server.count == 2, "\(server.map(\.raw))")
        #expect(server.first { $0.id == id }?.raw.contains("Finished on the phone.") == true)
        let kept = try #require(server.first { $0.id != id })
        #expect(kept.raw.contains("Written on the laptop."))
        // Said on standard error, in one line, naming both drafts.
        let note = sync.stderr.split(separator: "\n").filter { $0.contains("changed on another device") }
        #expect(note.count == 1 && note[0].contains("draft:\(id)") && note[0].contains("draft:\(kept.id)")
                && note[0].contains("both are kept"), "\(sync)")
        // And durably: hd-drafts list shows the kept version with its note.
        #expect(try f.run("hd-sync").status == 0)
        let listed = try f.run("hd-drafts", "list")
        #expect(listed.lines.count == 2 && listed.lines.contains { $0.hasPrefix("draft:\(kept.id)\t") && $0.contains("draft:\(id)") },
                "\(listed)")
        let json = try f.run("hd-drafts", "list", "--json")
        #expect(json.stdout.contains("\"kept_beside\":\"draft:\(id)\""), "\(json)")
    }

    @Test("online, hd-send --update-draft of a draft changed on the phone since the last sync: kept as a new draft, said at once")
    func onlineUpdateAfterPhoneEdit() throws {
        let (f, fake, id) = try withDraft()
        try editOnPhone(fake, id)
        let updated = try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "Plan (laptop)"],
                                 body: "Written on the laptop.\n")
        #expect(updated.status == 0, "\(updated)")
        let server = try drafts(fake)
        let kept = try #require(server.first { $0.id != id }, "\(server.map(\.raw))")
        #expect(server.count == 2 && updated.lines.last == "draft:\(kept.id)", "\(updated)")
        #expect(updated.stderr.contains("changed on another device") && updated.stderr.contains("draft:\(kept.id)"), "\(updated)")
        // Unchanged since: an update goes in place, once.
        #expect(try f.run("hd-sync").status == 0)
        let again = try hdSend(f, ["--update-draft", "draft:\(kept.id)", "--to", "bob@example.org", "--subject", "Plan (laptop 2)"],
                               body: "Second laptop version.\n")
        #expect(again.status == 0 && again.stderr.isEmpty && again.lines.last == "draft:\(kept.id)", "\(again)")
        #expect(try drafts(fake).count == 2)
        #expect(try holding(fake, "Second laptop version.") == 1 && holding(fake, "Finished on the phone.") == 1)
    }

    @Test("a draft deleted (or sent) on the phone meanwhile: the update is saved as a new draft, with the note")
    func deletedOnPhone() throws {
        let (f, fake, id) = try withDraft()
        try offline(fake)
        #expect(try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "Plan v2"]).status == 0)
        let messageID = try #require((try fake.admin("GET", "drafts") as? [String: Any])?["drafts"] as? [[String: Any]])
            .first?["messageId"] as? String
        try fake.admin("POST", "delete", ["id": try #require(messageID)])
        try fake.admin("DELETE", "faults")
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0 && sync.stderr.contains("deleted or sent on another device"), "\(sync)")
        let server = try drafts(fake)
        #expect(server.count == 1 && server[0].id != id && server[0].raw.contains("Local text."), "\(server.map(\.raw))")
    }

    @Test("faults around the check and the write: the check's answer lost, 5xx, 429, the write's answer lost; each version once")
    func faults() throws {
        let rules: [[String: Any]] = [
            ["mode": "drop", "method": "GET", "path": "/drafts/[^/]+$"],
            ["status": 503, "method": "GET", "path": "/drafts/[^/]+$"],
            ["status": 429, "retry_after": 3600, "method": "GET", "path": "/drafts/[^/]+$", "times": -1],
            ["mode": "apply_then_drop", "method": "POST", "path": "/drafts$"],
            ["mode": "apply_then_status", "status": 500, "method": "POST", "path": "/drafts$"],
        ]
        for rule in rules {
            let (f, fake, id) = try withDraft()
            try editOnPhone(fake, id)
            try fake.faults([rule])
            let result = try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "Plan (laptop)"],
                                    body: "Written on the laptop.\n")
            // Queued for the next sync, or (the client asked again after a lost read) kept at once.
            #expect(result.status == 0 && (result.stderr.contains("queued") || result.stderr.contains("both are kept")),
                    "\(rule): \(result)")
            try fake.admin("DELETE", "faults")
            try backoffOver(f)
            let sync = try f.run("hd-sync")
            #expect(sync.status == 0, "\(rule): \(sync)")
            #expect(try holding(fake, "Written on the laptop.") == 1 && holding(fake, "Finished on the phone.") == 1, "\(rule)")
            #expect(try drafts(fake).count == 2, "\(rule)")
            #expect(try f.run("hd-sync").status == 0)
            #expect(try holding(fake, "Written on the laptop.") == 1, "\(rule): never saved twice")
            let pending = try f.run("hd-pending", "--json")
            #expect(!pending.stdout.contains("\"state\":\"queued\"") && !pending.stdout.contains("\"state\":\"sending\""), "\(rule): \(pending)")
        }
    }

    @Test("drafts.update applied with its answer lost: the next sync finds it and writes nothing again, nothing kept beside")
    func updateAnswerLost() throws {
        let (f, fake, id) = try withDraft()
        try fake.faults([["mode": "apply_then_drop", "method": "PUT", "path": "/drafts/[^/]+$"]])
        #expect(try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "v2"]).status == 0)
        try fake.admin("DELETE", "faults")
        try fake.clearRequests()
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0 && !sync.stderr.contains("kept"), "\(sync)")
        #expect(try writes(fake).isEmpty)
        #expect(try drafts(fake).map(\.id) == [id] && holding(fake, "Local text.") == 1)
    }

    @Test("kill -9 between the check and the write: nothing was written; the next sync checks again and keeps both")
    func killBetweenCheckAndWrite() throws {
        for phoneEditsMeanwhile in [true, false] {
            let (f, fake, id) = try withDraft()
            let killed = try hdSend(f, ["--update-draft", "draft:\(id)", "--to", "bob@example.org", "--subject", "v2"],
                                    environment: ["HUDSON_TEST_CRASH_AFTER_DRAFT_CHECK": "1"])
            #expect(killed.status == 70, "\(killed)")
            #expect(try holding(fake, "Local text.") == 0)
            if phoneEditsMeanwhile { try editOnPhone(fake, id) }
            let sync = try f.run("hd-sync")
            #expect(sync.status == 0, "\(sync)")
            #expect(try holding(fake, "Local text.") == 1, "phone edit: \(phoneEditsMeanwhile)")
            #expect(try drafts(fake).count == (phoneEditsMeanwhile ? 2 : 1), "phone edit: \(phoneEditsMeanwhile)")
            #expect(try holding(fake, "Finished on the phone.") == (phoneEditsMeanwhile ? 1 : 0))
            #expect(sync.stderr.contains("changed on another device") == phoneEditsMeanwhile, "\(sync)")
        }
    }

    @Test("hd-drafts send of a draft changed on the phone after it was read: refused with the reason, the phone's text not sent")
    func sendOfChangedDraft() throws {
        let (f, fake, id) = try withDraft()
        // Read, queued, and held (429 to drafts.send: Gmail did nothing) until the phone has edited it.
        try fake.faults([["status": 429, "retry_after": 3600, "method": "POST", "path": "/drafts/send$", "times": -1]])
        let queued = try f.run("hd-drafts", "send", "draft:\(id)")
        #expect(queued.status == 0 && queued.stderr.contains("queued"), "\(queued)")
        try editOnPhone(fake, id)
        try fake.admin("DELETE", "faults")
        try backoffOver(f)
        try fake.clearRequests()
        let sync = try f.run("hd-sync")
        #expect(sync.stderr.contains("not sent") && sync.stderr.contains("changed on another device"), "\(sync)")
        #expect(try fake.requests().filter { $0.path.hasSuffix("/drafts/send") }.isEmpty)
        #expect(try holding(fake, "Finished on the phone.") == 1)
        let pending = try f.run("hd-pending")
        #expect(pending.stdout.contains("failed") && pending.stdout.contains("changed on another device"), "\(pending)")
        // Killed between the check and the send, then edited: the same refusal.
        let (g, other, otherID) = try withDraft()
        let killed = try CommandRunner.run(BuiltProducts.executable("hd-drafts"), ["send", "draft:\(otherID)"],
                                           environment: g.environment.merging(["HUDSON_TEST_CRASH_AFTER_DRAFT_CHECK": "1"]) { $1 })
        #expect(killed.status == 70, "\(killed)")
        try editOnPhone(other, otherID)
        let after = try g.run("hd-sync")
        #expect(after.stderr.contains("changed on another device"), "\(after)")
        #expect(try holding(other, "Finished on the phone.") == 1)
        let state = try other.admin("GET", "state") as? [String: Any]
        #expect((state?["messages"] as? [[String: Any]] ?? []).filter { ($0["labelIds"] as? [String] ?? []).contains("SENT") }
            .allSatisfy { ($0["messageId"] as? String ?? "").hasPrefix("<phone.") == false })
    }
}
