/*!
 Progress of a long sync on standard error: one line rewritten in place on a terminal
 ("listed 1200 of ~48213 · bodies 350, 2600 to go · 120 msg/s · about 6 min left"), a
 line per update with --verbose, nothing in a pipe (CONTRACT.md "Output": progress goes
 to standard error and stays quiet in a pipe unless --verbose). The rate and the time
 left count only what this process did: a resumed backfill's earlier work is not speed.
 Nor is the first minute's: the quota's window starts empty, so a catch-up fetches a whole
 minute's budget in seconds and then waits (issue 43 §4 measured 250 msg/s for the first
 20 s at a ceiling of 47); the rate the line tells time by is never above what the
 background lane's budget admits per second.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonOutput
import HudsonSync
import Synchronization

final class ProgressLine: Sendable {
    private struct State {
        var started = Date()
        var lastDraw = Date.distantPast
        var bodies = 0
        var shown = false
        /// How many messages were listed when this process first reported.
        var listedAtStart: Int?
    }

    let enabled: Bool
    let verbose: Bool
    /// Messages (or bodies) a second the quota admits at most for background work; nil: no bound.
    let ceiling: Double?
    private let state = Mutex(State())

    init(enabled: Bool, verbose: Bool, ceiling: Double? = nil) {
        self.enabled = enabled
        self.verbose = verbose && !Terminal.stderrIsTerminal
        self.ceiling = ceiling
    }

    /// The most `messages.get` a second the background lane's share of `quota` admits.
    static func ceiling(of quota: QuotaBucket.Configuration) -> Double {
        let window = Double(quota.window.components.seconds) + Double(quota.window.components.attoseconds) / 1e18
        return Double(quota.budget) * quota.backgroundShare / max(1, window) / Double(GmailMethod.messagesGet.units)
    }

    func update(_ progress: SyncProgress) {
        guard enabled else { return }
        let line: String? = state.withLock { state in
            state.bodies += progress.bodiesHydrated
            let now = Date()
            guard verbose || now.timeIntervalSince(state.lastDraw) >= 0.25 else { return nil }
            state.lastDraw = now
            state.shown = true
            let elapsed = max(0.001, now.timeIntervalSince(state.started))
            let listedAtStart = state.listedAtStart ?? progress.backfilled
            state.listedAtStart = listedAtStart
            var parts = ["\(progress.account): listed \(progress.backfilled)"
                + (progress.backfillEstimate.map { " of ~\($0)" } ?? "")]
            parts.append("bodies \(state.bodies)" + (progress.bodiesRemaining > 0 ? ", \(progress.bodiesRemaining) to go" : ""))
            let done = max(0, progress.backfilled - listedAtStart) + state.bodies
            let measured = Double(done) / elapsed
            let rate = ceiling.map { min(measured, $0) } ?? measured
            parts.append("\(Int(rate)) msg/s")
            // Gmail's estimate of the mailbox is approximate (resultSizeEstimate): "about".
            let remaining = max(0, (progress.backfillEstimate ?? 0) - progress.backfilled) + progress.bodiesRemaining
            if done > 0 && remaining > 0 { parts.append("about \(Self.timeText(seconds: Double(remaining) / rate)) left") }
            return parts.joined(separator: " · ")
        }
        guard let line else { return }
        if verbose {
            writeError("hd-sync: \(line)\n")
        } else {
            // The line names an account: scrubbed like any diagnostic, then drawn over the last.
            writeTerminalControl("\r\u{1B}[K" + TerminalSafety.field(line))
        }
    }

    /// "40 s", "12 min", "3 h 5 min": as precise as an estimate deserves.
    static func timeText(seconds: Double) -> String {
        let whole = Int(min(seconds, 1e9).rounded())
        if whole < 60 { return "\(max(1, whole)) s" }
        if whole < 3600 { return "\((whole + 30) / 60) min" }
        let minutes = (whole + 30) / 60
        return "\(minutes / 60) h \(minutes % 60) min"
    }

    func finish() {
        let shown = state.withLock { state -> Bool in
            defer { state.shown = false }
            return state.shown
        }
        if shown && !verbose { writeTerminalControl("\r\u{1B}[K") }
    }
}
