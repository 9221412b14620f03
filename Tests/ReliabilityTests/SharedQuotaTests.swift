// Shared quota (issue 17, point 5): the per-user Gmail budget is one budget for every
// process of an account. A `hd-sync --catch-up` that backfills and hydrates a whole
// mailbox (background), `hd-show` fetching bodies the store does not hold and sources
// (`--raw`), `hd-mark` with the push it hands to `hd-sync --push`, and `hd-send` all run
// at once against the fake Gmail over HTTP, the fake enforcing the same per-user quota
// Hudson is given. Together they want several times the budget. What must hold, read from
// the fake's request log: no request is turned away with a 429, and no rolling 60 s
// window holds more units than the quota. With one QuotaBucket per process (before the
// shared ledger) each process believes it has the whole budget: the same run gets 429s.
//
// The run lasts about 20 s: commands still waiting for quota then are killed (which the
// ledger must also survive), and with them the `hd-sync --fetch` helpers of the killed
// hd-shows. No timing is asserted, only units. (When the helpers outlived their hd-show they
// went on waiting, were admitted the moment the setup's units left the ledger's window, and
// reached the fake while its window still held them: the same units leave the ledger's
// window one window after their answer now, QuotaBucket.)
import Foundation
import HudsonTestSupport
import Testing

@Suite("Shared quota: the processes of one account spend one per-user budget", .serialized)
struct SharedQuotaTests {
    /// Units per minute, for the fake and for Hudson.
    static let quota = 1_200

    @Test("catch-up, hd-show, hd-mark's push and hd-send at once: no 429, and no rolling 60 s window over the quota")
    func processesShareOneBudget() throws {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", "400", "--quota-per-minute", String(Self.quota)])
        try rig.connect(lookbackDays: 30)
        // hd-auth add learns the address with one getProfile through a bucket of its own
        // (AccountSetup: the account, and so its ledger, is not known yet); that unit counts
        // at the fake but not in the ledger, so Hudson's budget leaves it out.
        let outside = try QuotaLog(fake).totalUnits
        rig.environment["HUDSON_QUOTA_PER_MINUTE"] = String(Self.quota - outside)

        // A month of mail, with (almost) no bodies yet.
        let first = try rig.run("hd-sync", "--prefetch-days", "1")
        try #require(first.status == 0, "\(first)")
        let (stored, bodiless) = try QuotaLog.messages(store: rig.storePath)
        try #require(bodiless.count >= 12, "only \(bodiless.count) messages without bodies")
        let body = rig.dir.path("body.txt")
        try "Hello from the shared quota test.\n".write(toFile: body, atomically: true, encoding: .utf8)

        // Background: the whole mailbox, every body (several thousand units).
        var commands: [(name: String, process: Started)] = []
        commands.append(("hd-sync --catch-up", try rig.start("hd-sync", ["--catch-up", "--lookback-days", "0", "--prefetch-days", "0"])))
        // Interactive (600 to 800 units): bodies on demand and sources (5 units each), a
        // triage's push, and sends (100 units each; a send that finds another process sending
        // leaves its message to that one or to the next sync, so how many go out varies).
        // With the setup's units and the background share (95 %: 1,140) that is always over the quota.
        for id in bodiless[0..<8] { commands.append(("hd-show", try rig.start("hd-show", ["message:\(id)"]))) }
        for start in [0, 8, 16] {
            let references = (0..<30).map { "message:\(stored[(start + $0) % stored.count])" }
            commands.append(("hd-show --raw", try rig.start("hd-show", ["--raw"] + references)))
        }
        commands.append(("hd-mark", try rig.start("hd-mark", ["archive", "read"] + bodiless[8..<12].map { "message:\($0)" })))
        for number in 1...3 {
            commands.append(("hd-send", try rig.start("hd-send", ["--to", "bob@example.org", "--subject", "Quota \(number)",
                                                                  "--body-file", body])))
        }

        // About 20 s; then whatever still waits for quota is killed.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && commands.dropFirst().contains(where: { $0.process.isRunning }) {
            Thread.sleep(forTimeInterval: 0.1)
        }
        Thread.sleep(forTimeInterval: max(0, min(2, deadline.timeIntervalSinceNow)))
        var finished = 0
        var killed: [String] = []
        // All at once, so that none goes on spending while another is reaped.
        for (_, process) in commands where process.isRunning { process.signal(SIGKILL) }
        for (name, process) in commands {
            let exit = rig.finish(process)
            if exit.killed {
                killed.append(name)
            } else {
                finished += 1
                #expect(exit.status == 0, "\(name): \(exit)")
            }
        }

        let log = try QuotaLog(fake)
        let worst = log.worstWindow()
        let refused = log.rateLimited
        #expect(refused.count == 0, "429 for \(refused.map { "\($0.method) \($0.path)" }.prefix(3).joined(separator: ", "))…")
        #expect(worst.units <= Self.quota, "\(worst.units) units in the 60 s window ending at \(worst.end)")
        // The quota was the limit: at least 70 % of it was used, and the catch-up,
        // which needs several windows, was still going when stopped.
        #expect(log.totalUnits >= Self.quota * 7 / 10, "only \(log.totalUnits) units used")
        #expect(killed.contains("hd-sync --catch-up"))
        Report.note("quota \(Self.quota)/min: \(log.totalUnits) units in \(log.requests.count) requests over "
                    + "\(String(format: "%.1f", log.span)) s, worst 60 s window \(worst.units), \(refused.count) x 429; "
                    + "\(finished) commands finished, killed while waiting: \(killed.joined(separator: ", "))")
        try rig.expectNoSecretsLeaked()
    }

    @Test("hd-show killed while its hd-sync --fetch helper waits for quota: the helper stops, and Gmail is not asked")
    func helperStopsWithHDShow() throws {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", "400"])
        try rig.connect(lookbackDays: 30)
        let first = try rig.run("hd-sync", "--prefetch-days", "1")
        try #require(first.status == 0, "\(first)")
        let id = try #require(try QuotaLog.messages(store: rig.storePath).bodiless.first)
        // The first sync's units fill a one-unit budget for the next minute: the helper waits.
        rig.environment["HUDSON_QUOTA_PER_MINUTE"] = "1"
        try fake.clearRequests()
        let show = try rig.start("hd-show", ["message:\(id)"])
        let helper = try #require(Processes.first(timeout: 60) { words in
            words.contains("--fetch") && words.contains { $0.contains("body:\(id):") }
        }, "no hd-sync --fetch for \(id)")
        Thread.sleep(forTimeInterval: 0.5)  // into its wait for quota
        let exit = rig.kill9(show)
        #expect(exit.killed, "\(exit)")
        // Gone with it: a helper that went on would be admitted when the first sync's units
        // leave the window, within the minute, and fetch the body.
        #expect(Processes.waitUntilEnded(helper, timeout: 90), "the helper \(helper) still runs")
        let asked = try fake.requests().filter { $0.path.contains(id) }
        #expect(asked.isEmpty, "\(asked.map { "\($0.method) \($0.path)" })")
        try rig.expectNoSecretsLeaked()
    }
}
