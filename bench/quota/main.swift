// hudson-bench-quota: what one admission of the shared quota costs on this machine
// (docs/performance.md). The steady state of a fast catch-up against a fake Gmail with no
// quota: one request every 30 ms (of a clock this program advances), so 2,000 admissions in
// the ledger's window; then what a short command pays to open the ledger for its first
// step and to close it, beside another process's connection (a watch) and alone.
//
//   swift run -c release hudson-bench-quota [DIRECTORY]
import Foundation
import HudsonGmail
import HudsonQuotaLedger
import Synchronization

/// A clock this program moves: sleeping advances it at once, so a wait costs no time.
final class SteppedClock: Sendable {
    private let now = Mutex<Duration>(.zero)
    let origin: Int64 = 1_000_000_000_000

    func advance(by step: Duration) { now.withLock { $0 += step } }

    var nanoseconds: @Sendable () -> Int64 {
        { let (seconds, attoseconds) = self.now.withLock { $0 }.components
          return self.origin + seconds * 1_000_000_000 + attoseconds / 1_000_000_000 }
    }

    var scheduling: SchedulingClock {
        SchedulingClock(
            now: { self.now.withLock { $0 } },
            sleep: { duration in self.advance(by: duration) },
            sleepUntil: { deadline in self.now.withLock { $0 = max($0, deadline) } },
            wallClock: { Date() })
    }
}

let directory = CommandLine.arguments.dropFirst().first
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("hudson-bench-quota-\(getpid())").path
try FileManager.default.createDirectory(atPath: directory + "/quota", withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }
let path = directory + "/quota/ann.sqlite3"
let clock = SteppedClock()
let steps = 6_000

func measure(_ quota: QuotaBucket) async throws -> Duration {
    var spent = Duration.zero
    for _ in 0..<steps {
        let started = ContinuousClock.now
        try await quota.acquire(units: 125, lane: .background)
        spent += ContinuousClock.now - started
        clock.advance(by: .milliseconds(30))
    }
    return spent / steps
}

let configuration = QuotaBucket.Configuration(budget: 1_000_000)
let ledger = SQLiteQuotaLedger(path: path, clock: clock.nanoseconds)
let shared = try await measure(QuotaBucket(configuration: configuration, clock: clock.scheduling, ledger: ledger))
let rows = try ledger.rowCounts().admissions
let local = try await measure(QuotaBucket(configuration: configuration, clock: clock.scheduling))

/// What a short command pays once: opening the file (its first step) and closing it.
func command() throws -> (open: Duration, close: Duration) {
    var started = ContinuousClock.now
    var command: SQLiteQuotaLedger? = SQLiteQuotaLedger(path: path, clock: clock.nanoseconds)
    _ = try command?.admit(units: 1, lane: .interactive, window: .seconds(60)) { _ in true }
    let open = ContinuousClock.now - started
    started = ContinuousClock.now
    command = nil
    return (open, ContinuousClock.now - started)
}
var beside = (open: Duration.zero, close: Duration.zero)
try withExtendedLifetime(ledger) {
    for _ in 0..<50 {
        let cost = try command()
        beside = (beside.open + cost.open / 50, beside.close + cost.close / 50)
    }
}
var alone = (open: Duration.zero, close: Duration.zero)
for _ in 0..<50 {
    let cost = try command()
    alone = (alone.open + cost.open / 50, alone.close + cost.close / 50)
}
print("quota admission: \(shared) through the shared ledger (\(rows) admissions in the window), \(local) without a ledger")
print("a command opening the ledger for its first step: \(beside.open), closing \(beside.close), beside another connection")
print("the same alone: \(alone.open), closing \(alone.close)")
