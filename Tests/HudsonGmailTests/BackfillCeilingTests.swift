/*!
 Issue 43 §4: a first sync may run at Gmail's ceiling. With the bucket's default policy, a
 backfill alone (background lane, `messages.get` batches and a list call per page) is admitted
 at ≥ 90 % of the per-user budget over many windows, never over it in any rolling window, and
 an interactive request made meanwhile (an `hd-mark` push: one `batchModify`) is admitted at
 once. Time is simulated (ManualClock), so the test measures admissions, not speed.
 */

import Foundation
import Testing
@testable import HudsonGmail

@Suite("Backfill at the quota ceiling")
struct BackfillCeilingTests {
    @Test("a backfill alone uses at least 90 % of the budget with the default share; a push is admitted at once")
    func backfillReachesTheCeiling() async throws {
        let clock = ManualClock()
        var configuration = QuotaBucket.Configuration()
        configuration.budget = 15_000  // 250 units/s, gmail-api.md §3 (older page)
        let quota = QuotaBucket(configuration: configuration, clock: clock.scheduling)
        let get = GmailMethod.messagesGet.units
        var admitted: [(time: Duration, units: Int)] = []
        // Ten minutes of pages of 500: a list call, then batches of 25 gets.
        while clock.now < .seconds(600) {
            let list = try await quota.acquire(units: GmailMethod.messagesList.units, lane: .background)
            admitted.append((list, GmailMethod.messagesList.units))
            for _ in 0..<20 {
                let at = try await quota.acquire(units: 25 * get, lane: .background)
                admitted.append((at, 25 * get))
            }
            if admitted.count % 210 == 0 {
                // Mid-backfill, a push: the window is as full as background may make it.
                let before = clock.now
                let push = try await quota.acquire(units: GmailMethod.messagesBatchModify.units, lane: .interactive)
                #expect(push == before, "the push waited \(push - before)")
            }
        }
        let units = admitted.filter { $0.time < .seconds(600) }.reduce(0) { $0 + $1.units }
        let share = Double(units) / Double(configuration.budget * 10)
        #expect(share >= 0.9, "background used \(Int(share * 100)) % of ten minutes' budget")
        for entry in admitted {
            let window = admitted.filter { $0.time > entry.time - .seconds(60) && $0.time <= entry.time }
            #expect(window.reduce(0) { $0 + $1.units } <= configuration.budget)
        }
    }
}
