// hd-sync's progress line (issue 43 §4): what is done, what remains, and the time left at
// the rate this process reached, counted from its own work only.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-sync's progress: done, remaining, and the time left at this process's rate")
struct ProgressLineTests {
    @Test("a catch-up with --verbose says how many of about how many are listed, the bodies to go, the rate and the time left; never a negative or absurd figure")
    func timeLeft() throws {
        let rig = Rig()
        // Latency so that the catch-up reports more than once while work remains.
        try rig.startFake(pinnedMailbox(count: 1500, latencyMilliseconds: 5))
        try rig.connect()
        let result = try rig.run("hd-sync", ["--verbose"] + catchUp)
        #expect(result.status == 0, "\(result)")
        let lines = result.stderr.split(separator: "\n").map(String.init).filter { $0.contains(" msg/s") }
        #expect(lines.count >= 2, "\(result.stderr)")
        let withTimeLeft = lines.filter { $0.contains(" left") }
        #expect(!withTimeLeft.isEmpty, "\(lines)")
        for line in withTimeLeft {
            // "· about N s left", "· about N min left" or "· about N h M min left", last on the line.
            let left = try #require(line.components(separatedBy: " · ").last)
            #expect(left.range(of: #"^about ([1-9][0-9]* s|[1-9][0-9]* min|[0-9]+ h [0-9]+ min) left$"#, options: .regularExpression) != nil,
                    "\(line)")
            #expect(!line.contains(" -") && !line.contains("~-"), "\(line)")
        }
        // The first report has nothing done yet by this process: no rate to tell time by.
        #expect(!lines[0].contains(" left"), "\(lines[0])")
    }

    @Test("the first minute's burst does not make the line promise more than the quota allows: the rate it tells time by stays at or under the ceiling")
    func rateBoundedByQuota() throws {
        let rig = Rig()
        // 1,500 messages at the default 6,000 units a minute: background (95 %) admits 1,140
        // gets at once, so the first two pages of 500 come in a second or two; the third waits
        // for the window. The ceiling is 6,000 × 0.95 / 60 / 5 = 19 messages a second.
        try rig.startFake(pinnedMailbox(count: 1500) + ["--quota-per-minute", "6000"])
        try rig.connect()
        let sync = try rig.start("hd-sync", ["--verbose", "--catch-up", "--prefetch-days", "0"],
                                 environment: ["HUDSON_QUOTA_PER_MINUTE": "6000"])
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline && sync.isRunning {
            let text = (try? String(contentsOfFile: sync.errPath, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").map(String.init).filter { $0.contains(" msg/s") }
            if lines.contains(where: { $0.contains(" left") }) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        rig.kill9(sync)
        let timed = lines.filter { $0.contains(" left") }
        try #require(!timed.isEmpty, "no line with a time left: \(lines)")
        for line in timed {
            let rate = try #require(line.firstMatch(of: /· ([0-9]+) msg\/s/)?.1).description
            #expect(Int(rate)! <= 19, "\(line)")
            // At most 19 a second, what is still to list takes at least that long to list.
            let counts = try #require(line.firstMatch(of: /listed ([0-9]+) of ~([0-9]+)/))
            let remaining = Int(counts.2)! - Int(counts.1)!
            if let seconds = line.firstMatch(of: /about ([0-9]+) s left$/)?.1 {
                #expect(Int(seconds)! >= remaining / 20, "\(line)")
            } else {
                #expect(line.hasSuffix(" min left"), "\(line)")
            }
        }
    }
}
