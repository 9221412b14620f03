import Foundation
import HudsonTestSupport
import Testing

/// Issue 41's audit: the defects it reproduced, each end to end against the fake Gmail
/// with the clock seam, in SnoozeCommandTests' and SendLaterCommandTests' fixtures.
@Suite(.serialized)
struct SnoozeAuditTests {
    let snooze = SnoozeCommandTests()
    let later = SendLaterCommandTests()

    /// An epoch second as `hd-snooze list --json` gives a wake time.
    func iso(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// An epoch second as text shows it in the fixture's zone (UTC): `2026-12-08 09:00 +0000`.
    func described(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + " +0000"
    }

    /// The wake time `hd-snooze list --json` gives the thread, as it prints it.
    func wake(_ f: CLIFixture, _ ref: String) throws -> String? {
        let line = try f.run("hd-snooze", "list", "--json").lines.first { $0.contains("\"\(ref)\"") } ?? ""
        let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return record?["wake"] as? String
    }

    /// `hd-undo --list --json`, newest first: (id, description, changes).
    func actions(_ f: CLIFixture) throws -> [(id: String, description: String, changes: Int)] {
        try f.run("hd-undo", "--list", "--json").lines.map { line in
            let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (record?["id"] as? String ?? "", record?["description"] as? String ?? "", record?["changes"] as? Int ?? -1)
        }
    }

    // MARK: - 1. a re-snooze is an action undo takes back

    @Test("snoozing a snoozed thread again moves its wake time as a recorded action; hd-undo puts the earlier time back; the same time again is nothing")
    func resnoozeIsUndoable() throws {
        let (f, fake) = try snooze.synced()
        defer { withExtendedLifetime(fake) {} }
        let a = try snooze.inboxThread(f, index: 0), b = try snooze.inboxThread(f, index: 1)
        let env = snooze.at(0)
        #expect(try f.run("hd-mark", "--no-flush", "snooze=+1d", a.ref, environment: env).status == 0)
        #expect(try f.run("hd-mark", "--no-flush", "archive", b.ref, environment: env).status == 0)
        // A +Nd or +Nw time is to the minute.
        let minute = snooze.start / 60 * 60
        #expect(try wake(f, a.ref) == iso(minute + 86_400))
        let moved = try f.run("hd-mark", "--no-flush", "--verbose", "snooze=+1w", a.ref, environment: env)
        #expect(moved.status == 0 && !moved.stderr.contains("nothing to change") && moved.stderr.contains("1 wake time(s) moved"),
                "\(moved)")
        #expect(try wake(f, a.ref) == iso(minute + 7 * 86_400))
        let newest = try #require(try actions(f).first)
        #expect(newest.description.hasPrefix("snooze until \(described(minute + 7 * 86_400))") && newest.changes == 1,
                "\(newest)")
        // Plain hd-undo takes back the re-snooze, not the archive of B.
        #expect(try f.run("hd-undo", "--no-flush").status == 0)
        #expect(try wake(f, a.ref) == iso(minute + 86_400), "the earlier wake time is back")
        #expect(try !f.run("hd-ls", "-n", "0").stdout.contains(b.ref), "B stays archived")
        #expect(try !f.run("hd-ls", "-n", "0").stdout.contains(a.ref), "A stays snoozed")
        // Undoing the undo moves it again.
        let undo = try #require(try actions(f).first)
        #expect(try f.run("hd-undo", "--no-flush", undo.id).status == 0)
        #expect(try wake(f, a.ref) == iso(minute + 7 * 86_400))
        // The same time again: nothing to change, nothing recorded.
        let count = try actions(f).count
        let same = try f.run("hd-mark", "--no-flush", "--verbose", "snooze=+1w", a.ref, environment: env)
        #expect(same.status == 0 && same.stderr.contains("nothing to change"), "\(same)")
        #expect(try actions(f).count == count)
    }

    // MARK: - 2. +Nd across a spring-forward gap

    @Test("+1d and +1w onto a wall time the zone skips land on the normalised time; a skipped time written out is still refused")
    func relativeAcrossTheGap() throws {
        let (f, fake) = try snooze.synced()
        defer { withExtendedLifetime(fake) {} }
        let threads = try f.run("hd-ls", "-n", "3").lines.map { String($0.split(separator: "\t")[0]) }
        // New York skips 02:00-03:00 on 2027-03-14.
        let day = ["TZ": "America/New_York", "HUDSON_TEST_NOW": "1804923000"]   // 2027-03-13 02:30 EST
        let week = ["TZ": "America/New_York", "HUDSON_TEST_NOW": "1804404600"]  // 2027-03-07 02:30 EST
        let plusDay = try f.run("hd-mark", "--no-flush", "snooze=+1d", threads[0], environment: day)
        #expect(plusDay.status == 0, "\(plusDay)")
        #expect(try wake(f, threads[0]) == "2027-03-14T07:30:00Z", "03:30 EDT")
        let plusWeek = try f.run("hd-mark", "--no-flush", "snooze=+1w", threads[1], environment: week)
        #expect(plusWeek.status == 0, "\(plusWeek)")
        #expect(try wake(f, threads[1]) == "2027-03-14T07:30:00Z", "03:30 EDT")
        let written = try f.run("hd-mark", "--no-flush", "snooze=2027-03-14T02:30", threads[2], environment: day)
        #expect(written.status == 64 && written.stderr.contains("daylight saving"), "\(written)")
    }

    // MARK: - 3. --remind counts from the send time

    @Test("hd-send --at WHEN --remind +N: the reminder counts from the send time; an absolute one must be after it")
    func remindFromTheSendTime() throws {
        let (f, fake) = try later.synced()
        let day: Int64 = 86_400, minute = later.start / 60 * 60
        let scheduled = try later.schedule(f, "remind-after-send", ["--at", "+5d", "--remind", "+3d"])
        #expect(scheduled.status == 0, "\(scheduled)")
        for _ in 0..<2 {
            let sync = try f.run("hd-sync", environment: later.at(5 * day + 60))
            #expect(sync.status == 0, "\(sync)")
        }
        let listed = try f.run("hd-snooze", "list", "--json").lines
        #expect(listed.count == 1 && listed[0].contains("\"wake\":\"\(iso(minute + 8 * day))\""), "\(listed)")
        // An absolute reminder before the send time is refused, as before.
        let early = try later.schedule(f, "remind-too-early", ["--at", "+5d", "--remind", String(iso(later.start + 2 * day).prefix(16))])
        #expect(early.status == 64 && early.stderr.contains("before the message is sent"), "\(early)")
        #expect(try later.sent(fake, containing: "remind-after-send") == 1)
    }

    // MARK: - 4. a draft left in Gmail by an offline hd-undo outbox:N

    @Test("hd-undo outbox:N while Gmail cannot be reached: the next hd-sync, or hd-snooze wake, deletes its draft, once; one gone already is fine")
    func offlineUndoDraftDeletedLater() throws {
        let (f, fake) = try later.synced()
        let edge = SnoozeEdgeTests()
        for marker in ["offline-undo-sync", "offline-undo-wake", "offline-undo-gone"] {
            #expect(try later.schedule(f, marker).status == 0)
            #expect(try edge.drafts(fake, containing: marker) == 1)
        }
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        for outbox in ["outbox:1", "outbox:2", "outbox:3"] {
            let undo = try f.run("hd-undo", outbox, environment: later.at(0))
            #expect(undo.status == 0 && undo.stderr.contains("could not be deleted now"), "\(undo)")
        }
        try fake.admin("DELETE", "faults")
        // The phone deleted one meanwhile.
        let gone = try #require(try later.drafts(fake).first { $0.raw.contains("offline-undo-gone") })
        try fake.admin("POST", "delete", ["id": gone.message])
        try fake.clearRequests()
        let wake = try f.run("hd-snooze", "wake", environment: later.at(60))
        #expect(wake.status == 0 && wake.stderr.isEmpty, "\(wake)")
        #expect(try edge.drafts(fake, containing: "offline-undo-sync") == 0 && edge.drafts(fake, containing: "offline-undo-wake") == 0)
        for _ in 0..<2 {
            let sync = try f.run("hd-sync", environment: later.at(3660))
            #expect(sync.status == 0 && !sync.stderr.contains("cancelled"), "\(sync)")
        }
        let deletes = try fake.requests().filter { $0.method == "DELETE" && $0.path.contains("/drafts/") }
        #expect(deletes.count >= 2 && Set(deletes.map(\.path)).count == deletes.count, "each draft asked for once: \(deletes)")
        for marker in ["offline-undo-sync", "offline-undo-wake", "offline-undo-gone"] {
            #expect(try later.sent(fake, containing: marker) == 0)
        }
    }

    @Test("hd-undo outbox:N offline, then hd-sync (no hd-snooze wake): the draft is deleted by the pass")
    func offlineUndoDeletedBySync() throws {
        let (f, fake) = try later.synced()
        let edge = SnoozeEdgeTests()
        #expect(try later.schedule(f, "offline-undo-pass").status == 0)
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        #expect(try f.run("hd-undo", "outbox:1", environment: later.at(0)).status == 0)
        try fake.admin("DELETE", "faults")
        #expect(try edge.drafts(fake, containing: "offline-undo-pass") == 1)
        #expect(try f.run("hd-sync", environment: later.at(60)).status == 0)
        #expect(try edge.drafts(fake, containing: "offline-undo-pass") == 0)
        #expect(try !f.run("hd-drafts", "list").stdout.contains("offline-undo-pass"))
    }

    // MARK: - 5. --dry-run of a send-later

    @Test("hd-send --dry-run --at (or X-Hudson-Send-At) shows the send time and that it would wait as a Gmail draft")
    func dryRunShowsTheTime() throws {
        let (f, fake) = try later.synced()
        let dry = try later.schedule(f, "dry-later", ["--dry-run", "--at", "+1h"])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.lines.contains("Send-At: \(described(later.start + 3600))"), "\(dry)")
        #expect(dry.lines.contains { $0.hasPrefix("Draft: new") && $0.contains("Gmail draft") }, "\(dry)")
        #expect(dry.lines.last?.hasPrefix("Size: ") == true, "\(dry)")
        let message = "From: demo@hudson.test\r\nTo: friend@example.org\r\nSubject: dry-header\r\nX-Hudson-Send-At: +2h\r\n\r\nhello\r\n"
        let header = try f.run("hd-send", "--dry-run", "-t", stdin: message, environment: later.at(0))
        #expect(header.status == 0 && header.lines.contains("Send-At: \(described(later.start + 7200))")
                && header.lines.contains { $0.hasPrefix("Draft: new") }, "\(header)")
        // With --remind, its time, counted from the send time.
        let remind = try later.schedule(f, "remind-dry", ["--dry-run", "--at", "+5d", "--remind", "+3d"])
        let minute = later.start / 60 * 60
        #expect(remind.status == 0 && remind.lines.contains("Remind: \(described(minute + 8 * 86_400))"), "\(remind)")
        #expect(try later.drafts(fake).isEmpty, "a dry run saves nothing")
    }

    // MARK: - 6. hd-snooze release says what happened

    @Test("hd-snooze release --no-flush says the message is queued, not sent; without it, sent")
    func releaseWording() throws {
        let (f, fake) = try later.synced()
        #expect(try later.schedule(f, "release-queued").status == 0)
        #expect(try later.schedule(f, "release-sent").status == 0)
        #expect(try f.run("hd-sync", environment: later.at(3 * 3600)).status == 0)
        let queued = try f.run("hd-snooze", "release", "outbox:1", "--no-flush", environment: later.at(3 * 3600))
        #expect(queued.status == 0 && !queued.stderr.contains("is sent") && queued.stderr.contains("queued"), "\(queued)")
        #expect(try later.sent(fake, containing: "release-queued") == 0)
        let sent = try f.run("hd-snooze", "release", "outbox:2", environment: later.at(3 * 3600))
        #expect(sent.status == 0 && sent.stderr.contains("outbox:2 is sent as outbox:"), "\(sent)")
        #expect(try later.sent(fake, containing: "release-sent") == 1)
    }
}
