/*!
 Progress of a long sync on standard error: one line rewritten in place on a terminal
 ("listed 1200 of ~48213 · bodies 350, 2600 to go · 120 msg/s"), a line per update with
 --verbose, nothing in a pipe (CONTRACT.md "Output": progress goes to standard error and
 stays quiet in a pipe unless --verbose).
 */
import Foundation
import HudsonCLI
import HudsonOutput
import HudsonSync
import Synchronization

final class ProgressLine: Sendable {
    private struct State {
        var started = Date()
        var lastDraw = Date.distantPast
        var bodies = 0
        var shown = false
    }

    let enabled: Bool
    let verbose: Bool
    private let state = Mutex(State())

    init(enabled: Bool, verbose: Bool) {
        self.enabled = enabled
        self.verbose = verbose && !Terminal.stderrIsTerminal
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
            var parts = ["\(progress.account): listed \(progress.backfilled)"
                + (progress.backfillEstimate.map { " of ~\($0)" } ?? "")]
            parts.append("bodies \(state.bodies)" + (progress.bodiesRemaining > 0 ? ", \(progress.bodiesRemaining) to go" : ""))
            parts.append("\(Int(Double(progress.backfilled + state.bodies) / elapsed)) msg/s")
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

    func finish() {
        let shown = state.withLock { state -> Bool in
            defer { state.shown = false }
            return state.shown
        }
        if shown && !verbose { writeTerminalControl("\r\u{1B}[K") }
    }
}
