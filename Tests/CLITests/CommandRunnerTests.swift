import Foundation
import HudsonTestSupport
import Testing

@Suite("The command runner the CLI suites use")
struct CommandRunnerTests {
    /// The descriptors this test process has open.
    static func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    // Each run used to leak two descriptors (four with standard input): the whole suite
    // reached 2,600, and past about 1,300 Foundation's Process.run() crashed the test
    // process. The margin allows for other tests running in parallel (`swift test`
    // without --no-parallel); the leak was 40 here.
    @Test("running commands, with and without standard input, leaves no descriptor open")
    func noDescriptorLeak() throws {
        let f = CLIFixture()
        // The first run starts Foundation's process monitor and Dispatch's threads, which
        // keep their own descriptors for the life of the test process.
        _ = try f.run("hd-ls", "--version")
        let before = try Self.openDescriptors()
        for round in 0..<20 {
            let result = try f.run("hd-ls", "--version", stdin: round.isMultiple(of: 2) ? nil : "thread:x\n")
            #expect(result.status == 0, "\(result)")
        }
        let after = try Self.openDescriptors()
        #expect(after - before < 10, "\(before) descriptors open before 20 runs, \(after) after")
    }

    @Test("a started command that never ends is killed at its limit, and finish() returns")
    func childProcessLimit() throws {
        let started = Date()
        let child = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), ["60"], limit: 0.5)
        let result = child.finish()
        #expect(child.process.terminationReason == .uncaughtSignal && result.status == SIGKILL)
        #expect(Date().timeIntervalSince(started) < 30)
    }
}
