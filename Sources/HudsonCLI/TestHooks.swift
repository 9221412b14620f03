/*!
 The reliability suite's seams (docs/reliability.md), read from `HUDSON_TEST_*`
 variables here and nowhere else: the libraries take them as arguments and never read
 the environment (STYLE.md rule 2). With none of these variables set, nothing is
 installed and every command behaves exactly as without this file.

 - `HUDSON_TEST_CRASH_AFTER_COMMIT=N`: the process kills itself (SIGKILL, as `kill -9`
   would) right after its Nth write transaction commits, so a test can stop a command
   at every commit in turn and check that the next run resumes from that state.
 - `HUDSON_TEST_CRASH_AT=POINT`: the same at a named point of the mutation flusher
   (`after-send`, `after-mark-in-flight`, `before-retirement`; optimistic-mutations.md
   "Crash safety").
 - `HUDSON_TEST_DEFERRED_WRITES=1`: write transactions begin DEFERRED, which is wrong on
   purpose, so the concurrency suite can show that it notices busy errors.
 - `HUDSON_TEST_WATCH_PAUSE=S`: `hd-sync --watch` waits S seconds between passes once
   caught up instead of 30, so a test sees several passes in a few seconds.
 - `HUDSON_TEST_CRASH_AFTER_SEND=1`, `HUDSON_TEST_CRASH_AFTER_DRAFT_CHECK=1`: `hd-send` and
   `hd-drafts send` die (exit 70, no cleanup) the moment Gmail has answered a send, before
   the answer is recorded, or between a draft's check and its write (OutboxSender), as a
   crash at the worst time would.
 - `HUDSON_TEST_NOW=SECONDS`: the time (epoch seconds) that snooze, reminders and WHEN
   (issue 41) take for now, so a test can snooze, then wake at the time or after sleeping
   past it, without waiting. Only these timers read it; the store's own timestamps,
   quotas and timeouts keep the real clock.
 */
import Glibc
import SQLite
import Synchronization

public enum TestHooks {
    /// Write commits made by this process so far, for `HUDSON_TEST_CRASH_AFTER_COMMIT`.
    private static let commits = Atomic<Int>(0)

    /// The connection seams the environment asks for; empty when it asks for none.
    public static func connection(environment: [String: String]) -> TestingHooks {
        var hooks = TestingHooks()
        if let text = environment["HUDSON_TEST_CRASH_AFTER_COMMIT"], let limit = Int(text), limit > 0 {
            hooks.afterWriteCommit = {
                if commits.add(1, ordering: .relaxed).newValue >= limit { crash() }
            }
        }
        hooks.deferredWrites = environment["HUDSON_TEST_DEFERRED_WRITES"] == "1"
        return hooks
    }

    /// The pause between caught-up passes `HUDSON_TEST_WATCH_PAUSE` asks for, if any.
    public static func watchPause(environment: [String: String]) -> Int? {
        environment["HUDSON_TEST_WATCH_PAUSE"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }

    /// What an outbox attempt of `hd-send` or `hd-drafts send` runs after Gmail answered
    /// a send (`HUDSON_TEST_CRASH_AFTER_SEND`) and after a draft's check
    /// (`HUDSON_TEST_CRASH_AFTER_DRAFT_CHECK`): nothing unless asked.
    public static func outboxCrashes(environment: [String: String]) -> (afterSend: @Sendable () -> Void, afterDraftCheck: @Sendable () -> Void) {
        let afterSend = environment["HUDSON_TEST_CRASH_AFTER_SEND"] == "1"
        let afterCheck = environment["HUDSON_TEST_CRASH_AFTER_DRAFT_CHECK"] == "1"
        return ({ if afterSend { _exit(70) } }, { if afterCheck { _exit(70) } })
    }

    /// The named crash point `HUDSON_TEST_CRASH_AT` asks for, if any.
    public static func crashPoint(environment: [String: String]) -> String? {
        environment["HUDSON_TEST_CRASH_AT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Now, in epoch seconds, for the timers of issue 41: `HUDSON_TEST_NOW` when set,
    /// else the real clock.
    public static func timerNow(environment: [String: String]) -> Int64 {
        if let text = environment["HUDSON_TEST_NOW"], let seconds = Int64(text), seconds > 0 { return seconds }
        return LocalTime.nowMilliseconds / 1000
    }

    /// Ends the process the way `kill -9` does: no flush, no cleanup, no exit handlers.
    public static func crash() -> Never {
        kill(getpid(), SIGKILL)
        _exit(137)
    }
}
