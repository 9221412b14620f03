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
}
