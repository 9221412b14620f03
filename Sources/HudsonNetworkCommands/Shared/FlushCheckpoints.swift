/*!
 `HUDSON_TEST_CRASH_AT=POINT` for the mutation flusher (see HudsonCLI's TestHooks): the
 process kills itself the first time the flusher reaches the named `FlushCheckpoint`.
 Unset, no checkpoint closure is installed at all.
 */
import HudsonCLI
import HudsonSync

extension TestHooks {
    /// The checkpoint closure for a flusher, or nil when no crash point is asked for.
    public static func flushCheckpoint(environment: [String: String]) -> (@Sendable (FlushCheckpoint) -> Void)? {
        guard let name = crashPoint(environment: environment), let point = FlushCheckpoint(rawValue: name) else {
            return nil
        }
        return { reached in
            if reached == point { crash() }
        }
    }
}
