/*!
 `hd-unsubscribe`'s test seams (docs/reliability.md), read here like TestHooks' others:

 - `HUDSON_TEST_UNSUBSCRIBE_LOOPBACK=1`: a `http://127.0.0.1:PORT/...` URI counts as an
   https one, so the tests' loopback server can stand for a sender. RFC 8058 asks for
   https and users never get anything else: without this variable an http URI is no method.
 - `HUDSON_TEST_UNSUBSCRIBE_TIMEOUT=S`: the one-click POST's bound, S seconds instead of 20,
   so a test of a slow server takes seconds.
 */
extension TestHooks {
    public static func unsubscribeLoopback(environment: [String: String]) -> Bool {
        environment["HUDSON_TEST_UNSUBSCRIBE_LOOPBACK"] == "1"
    }

    public static func unsubscribeTimeoutSeconds(environment: [String: String]) -> Int? {
        environment["HUDSON_TEST_UNSUBSCRIBE_TIMEOUT"].flatMap(Int.init).flatMap { $0 > 0 && $0 <= 20 ? $0 : nil }
    }
}
