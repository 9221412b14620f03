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
}
