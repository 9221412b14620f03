import Foundation
import HudsonTestSupport
import Testing

/// Issue 41: `hd-send --at WHEN` (and `X-Hudson-Send-At:`), `--if-late`, `--remind`,
/// end to end against the fake Gmail over HTTP, with the clock seam `HUDSON_TEST_NOW`.
@Suite("hd-send --at: saved as a Gmail draft at once, sent once at the time through the outbox", .serialized)
struct SendLaterCommandTests {
    let start = Int64(Date().timeIntervalSince1970)

    func at(_ offsetSeconds: Int64) -> [String: String] { ["HUDSON_TEST_NOW": String(start + offsetSeconds)] }

    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// The fake's drafts: (draft id, Gmail message id, raw text).
    func drafts(_ fake: FakeGmail) throws -> [(id: String, message: String, raw: String)] {
        let answer = try fake.admin("GET", "drafts") as? [String: Any]
        return (answer?["drafts"] as? [[String: Any]] ?? []).map {
            let raw = ($0["raw"] as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            return ($0["id"] as? String ?? "", $0["messageId"] as? String ?? "",
                    String(decoding: Data(base64Encoded: raw) ?? Data(), as: UTF8.self))
        }
    }

    /// The Sent messages at the fake whose raw text contains `marker`.
    func sent(_ fake: FakeGmail, containing marker: String) throws -> Int {
        var count = 0
        for (id, message) in try fake.messages() where message.labels.contains("SENT") {
            let full = try fake.admin("GET", "message/\(id)") as? [String: Any]
            if let raw = full?["raw"] as? String {
                let text = String(decoding: Data(base64Encoded: raw.replacingOccurrences(of: "-", with: "+")
                    .replacingOccurrences(of: "_", with: "/").padding(toLength: (raw.count + 3) / 4 * 4, withPad: "=", startingAt: 0)) ?? Data(),
                                  as: UTF8.self)
                if text.contains(marker) { count += 1 }
            }
        }
        return count
    }

    func schedule(_ f: CLIFixture, _ marker: String, _ extra: [String] = ["--at", "+1h"], offset: Int64 = 0,
                  environment: [String: String] = [:]) throws -> CommandResult {
        var arguments = ["hd-send", "--to", "friend@example.org", "--subject", marker] + extra
        let command = arguments.removeFirst()
        return try CommandRunner.run(BuiltProducts.executable(command), arguments,
                                     environment: f.environment.merging(at(offset)) { $1 }.merging(environment) { $1 },
                                     stdin: "body of \(marker)\n")
    }

    @Test("saved as a draft at once, listed by hd-pending, sent once at the time, the draft gone after")
    func sentAtTheTime() throws {
        let (f, fake) = try synced()
        let result = try schedule(f, "later-1")
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.first == "outbox:1" && result.lines.contains { $0.hasPrefix("draft:") }, "\(result)")
        #expect(try drafts(fake).filter { $0.raw.contains("later-1") }.count == 1)
        #expect(try f.run("hd-pending").lines.contains { $0.hasPrefix("outbox:1\tsend\tscheduled\t") })
        #expect(try f.run("hd-sync", environment: at(1800)).status == 0)
        #expect(try sent(fake, containing: "later-1") == 0, "not before its time")
        #expect(try f.run("hd-sync", environment: at(3660)).status == 0)
        #expect(try sent(fake, containing: "later-1") == 1)
        #expect(try drafts(fake).filter { $0.raw.contains("later-1") }.isEmpty)
        for _ in 0..<2 { #expect(try f.run("hd-sync", environment: at(7200)).status == 0) }
        #expect(try sent(fake, containing: "later-1") == 1)
        #expect(!(try f.run("hd-pending").stdout.contains("scheduled")))
    }

    @Test("a draft edited elsewhere before the time is sent as edited; one deleted elsewhere is not sent")
    func editedOrDeletedElsewhere() throws {
        let (f, fake) = try synced()
        #expect(try schedule(f, "later-edit").status == 0)
        #expect(try schedule(f, "later-gone").status == 0)
        let edit = try #require(try drafts(fake).first { $0.raw.contains("later-edit") })
        let raw = "From: demo@hudson.test\r\nTo: friend@example.org\r\nSubject: later-edited-on-phone\r\n"
            + "Message-ID: <phone-\(UUID().uuidString)@example.org>\r\n\r\nnew words\r\n"
        try fake.admin("POST", "draft", ["id": edit.id, "raw": raw])
        let gone = try #require(try drafts(fake).first { $0.raw.contains("later-gone") })
        try fake.admin("POST", "delete", ["id": gone.message])
        let sync = try f.run("hd-sync", environment: at(3660))
        #expect(sync.status == 0, "\(sync)")
        #expect(try sent(fake, containing: "later-edited-on-phone") == 1)
        #expect(try sent(fake, containing: "body of later-edit") == 0, "never the stale copy")
        #expect(try sent(fake, containing: "later-gone") == 0)
        #expect(sync.stderr.contains("not sent"), "\(sync)")
        for _ in 0..<2 { _ = try f.run("hd-sync", environment: at(7200)) }
        #expect(try sent(fake, containing: "later-edited-on-phone") == 1)
    }

    @Test("over an hour late: held (the default) until hd-snooze release, or sent with --if-late send")
    func late() throws {
        let (f, fake) = try synced()
        #expect(try schedule(f, "late-held").status == 0)
        #expect(try schedule(f, "late-sent", ["--at", "+1h", "--if-late", "send"]).status == 0)
        let sync = try f.run("hd-sync", environment: at(3 * 3600))
        #expect(sync.status == 0 && sync.stderr.contains("outbox:1: over an hour late, held"), "\(sync)")
        #expect(try sent(fake, containing: "late-held") == 0)
        #expect(try sent(fake, containing: "late-sent") == 1)
        #expect(try f.run("hd-pending").lines.contains { $0.hasPrefix("outbox:1\tsend\theld-late\t") })
        let release = try f.run("hd-snooze", "release", "outbox:1", environment: at(3 * 3600))
        #expect(release.status == 0, "\(release)")
        #expect(try sent(fake, containing: "late-held") == 1)
        #expect(try f.run("hd-snooze", "release", "outbox:1").status == 65)
        #expect(try f.run("hd-snooze", "release", "outbox:99").status == 65)
        #expect(try f.run("hd-snooze", "release", "nonsense").status == 64)
    }

    @Test("hd-undo outbox:N cancels a scheduled send and deletes its draft; nothing goes at the time")
    func undo() throws {
        let (f, fake) = try synced()
        #expect(try schedule(f, "later-undo").status == 0)
        let undo = try f.run("hd-undo", "outbox:1")
        #expect(undo.status == 0, "\(undo)")
        #expect(try drafts(fake).filter { $0.raw.contains("later-undo") }.isEmpty)
        #expect(try f.run("hd-sync", environment: at(3660)).status == 0)
        #expect(try sent(fake, containing: "later-undo") == 0)
        #expect(try f.run("hd-undo", "outbox:1").status == 0)
        // After its time, a send cannot be called back.
        #expect(try schedule(f, "later-undo-2", offset: 0).status == 0)
        #expect(try f.run("hd-sync", environment: at(3660)).status == 0)
        #expect(try f.run("hd-undo", "outbox:2").status == 65)
    }

    @Test("sendmail mode: X-Hudson-Send-At is read and removed before anything is saved or sent")
    func sendmailHeader() throws {
        let (f, fake) = try synced()
        let message = "From: demo@hudson.test\r\nTo: friend@example.org\r\nSubject: header-later\r\n"
            + "X-Hudson-Send-At: +1h\r\n\r\nhello\r\n"
        let result = try f.run("hd-send", "-t", "-i", stdin: message, environment: at(0))
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        let saved = try #require(try drafts(fake).first { $0.raw.contains("header-later") })
        #expect(!saved.raw.lowercased().contains("x-hudson"), "\(saved.raw)")
        #expect(try f.run("hd-sync", environment: at(3660)).status == 0)
        #expect(try sent(fake, containing: "header-later") == 1)
        // Two of them, or the header and --at: refused, nothing queued.
        let twice = try f.run("hd-send", "-t", stdin: message.replacingOccurrences(of: "\r\n\r\n", with: "\r\nX-Hudson-Send-At: +2h\r\n\r\n"))
        #expect(twice.status == 64, "\(twice)")
        let bad = try f.run("hd-send", "-t", stdin: message.replacingOccurrences(of: "+1h", with: "yesterday-ish"))
        #expect(bad.status == 64, "\(bad)")
        // Any case, folded: the same header.
        let folded = message.replacingOccurrences(of: "header-later", with: "header-folded")
            .replacingOccurrences(of: "X-Hudson-Send-At: +1h", with: "x-hudson-send-at:\r\n +2h")
        #expect(try f.run("hd-send", "-t", stdin: folded, environment: at(0)).status == 0)
        let saved2 = try #require(try drafts(fake).first { $0.raw.contains("header-folded") })
        #expect(!saved2.raw.lowercased().contains("x-hudson") && !saved2.raw.contains("+2h"), "\(saved2.raw)")
        #expect(try f.run("hd-pending").lines.contains { $0.contains("\tscheduled\t") && $0.contains("header-folded") })
        // Blanks before the colon (RFC 5322's obsolete syntax): refused whole, so the header
        // can never go out unread with a message sent at once.
        let spaced = message.replacingOccurrences(of: "header-later", with: "header-spaced")
            .replacingOccurrences(of: "X-Hudson-Send-At: +1h", with: "X-Hudson-Send-At \t: +2h")
        let spacedRun = try f.run("hd-send", "-t", stdin: spaced, environment: at(0))
        #expect(spacedRun.status == 65 && spacedRun.stderr.contains("nothing queued"), "\(spacedRun)")
        #expect(try drafts(fake).first { $0.raw.contains("header-spaced") } == nil && sent(fake, containing: "header-spaced") == 0)
    }

    @Test("kill -9 after each commit of hd-send --at and of the passes that save and send it: sent exactly once")
    func killedAtEachStep() throws {
        let (f, fake) = try synced()
        let crashed = try schedule(f, "later-kill", environment: ["HUDSON_TEST_CRASH_AFTER_COMMIT": "1"])
        #expect(crashed.status != 0)
        // Killed the moment Gmail answered drafts.create, before the answer is recorded.
        let answered = try schedule(f, "later-kill-answered", environment: ["HUDSON_TEST_CRASH_AFTER_SEND": "1"])
        #expect(answered.status != 0)
        for commit in 1...6 {
            _ = try f.run("hd-sync", environment: at(60).merging(["HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)]) { $1 })
        }
        #expect(try f.run("hd-sync", environment: at(60)).status == 0)
        #expect(try drafts(fake).filter { $0.raw.contains("later-kill\r") || $0.raw.contains("later-kill\n") }.count == 1)
        #expect(try drafts(fake).filter { $0.raw.contains("later-kill-answered") }.count == 1, "found by the probe, not saved twice")
        for commit in 1...8 {
            _ = try f.run("hd-sync", environment: at(3660).merging(["HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)]) { $1 })
        }
        for _ in 0..<2 { _ = try f.run("hd-sync", environment: at(3660)) }
        #expect(try sent(fake, containing: "Subject: later-kill\r") == 1)
        #expect(try sent(fake, containing: "later-kill-answered") == 1)
        #expect(try drafts(fake).filter { $0.raw.contains("later-kill") }.isEmpty)
    }

    @Test("lost answers of drafts.create and drafts.send after Gmail applied them: one draft, one message")
    func lostAnswers() throws {
        let (f, fake) = try synced()
        try fake.faults([["mode": "apply_then_drop", "times": 1, "method": "POST", "path": "/drafts$"]])
        _ = try schedule(f, "later-lost")
        for _ in 0..<2 { _ = try f.run("hd-sync", environment: at(60)) }
        #expect(try drafts(fake).filter { $0.raw.contains("later-lost") }.count == 1)
        try fake.faults([["mode": "apply_then_drop", "times": 1, "path": "/drafts/send$"]])
        _ = try f.run("hd-sync", environment: at(3660))
        // The probe waits out Gmail's search settle time (5 s) before it may decide.
        Thread.sleep(forTimeInterval: 5.5)
        for _ in 0..<3 { _ = try f.run("hd-sync", environment: at(3700)) }
        #expect(try sent(fake, containing: "later-lost") == 1)
        #expect(!(try f.run("hd-pending").stdout.contains("outbox:2\tdraft-send\tunknown")))
    }

    @Test("hd-send --remind: once sent and stored, the thread is a reminder; it comes back at the time if nobody answered (a reply cancelling one: SnoozeCommandTests)")
    func remind() throws {
        let (f, fake) = try synced()
        let result = try schedule(f, "remind-me", ["--remind", "+3d"])
        #expect(result.status == 0, "\(result)")
        #expect(try f.run("hd-sync", environment: at(60)).status == 0)
        let listed = try f.run("hd-snooze", "list").lines
        #expect(listed.count == 1 && listed[0].contains("\tremind\t"), "\(listed)")
        #expect(try f.run("hd-sync", environment: at(4 * 86_400)).status == 0)
        #expect(try f.run("hd-snooze", "list").lines.isEmpty)
        #expect(try f.run("hd-ls", "-n", "0").stdout.contains("remind-me"))
        #expect(try sent(fake, containing: "remind-me") == 1)
    }

    @Test("generated --at, --if-late and --remind values: exit 0 or 64, at most one line of error, nothing sent unasked")
    func generatedValues() throws {
        let (f, fake) = try synced()
        var generator = SplitMix(seed: 4141)
        let pieces = ["+", "1", "0", "d", "h", "x", "2026-", "13-", "12-08", "T", "25:", "09:00", "tomorrow", "\u{1b}[2J",
                      "\u{202e}", "send", "hold", " ", "-", "=", "monday"]
        let before = try fake.messages().filter { $0.value.labels.contains("SENT") }.count
        for round in 0..<30 {
            var value = ""
            for _ in 0..<Int(generator.next() % 5 + 1) { value += pieces[Int(generator.next() % UInt64(pieces.count))] }
            let option = ["--at", "--if-late", "--remind"][round % 3]
            let extra = option == "--if-late" ? ["--at", "+1h", option, value] : [option, value]
            let result = try schedule(f, "gen-\(round)", extra + ["--no-send"], environment: [:])
            #expect([0, 64].contains(result.status), "seed 4141 round \(round): \(value.debugDescription): \(result)")
            let errors = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("usage: ") && !$0.hasPrefix("       ") }
            #expect(errors.count <= 1 && !result.stderr.contains("\u{1b}"), "seed 4141 round \(round): \(result)")
        }
        #expect(try fake.messages().filter { $0.value.labels.contains("SENT") }.count == before)
    }
}
