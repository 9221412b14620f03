/*!
 Hudson's own operators of issue 41 (snooze and reminders): `is:awaiting-reply`,
 `awaiting-reply:AGE` and `snoozed:before:DATE`, read by the one parser.
 */
import HudsonQuery
import Testing

@Suite("Snooze and reminder operators")
struct TimerOperatorTests {
    @Test("is:awaiting-reply and is:snoozed are flags; awaiting-reply: takes an age; snoozed:before: a date")
    func reads() throws {
        #expect(try tree("is:awaiting-reply") == node(.flag(.awaitingReply)))
        #expect(try tree("IS:Awaiting-Reply") == node(.flag(.awaitingReply)))
        #expect(try tree("is:snoozed") == node(.flag(.snoozed)))
        #expect(try tree("awaiting-reply:3d") == node(.awaitingReply(RelativeAge(amount: 3, unit: .day))))
        #expect(try tree("snoozed:before:2026-12-08") == node(.snoozedBefore(.day(year: 2026, month: 12, day: 8))))
        #expect(try tree("snoozed:BEFORE:2026/12/08") == node(.snoozedBefore(.day(year: 2026, month: 12, day: 8))))
    }

    @Test("a bad value is an error at the value's column", arguments: [
        "awaiting-reply:soon", "awaiting-reply:2w", "snoozed:after:2026-12-08", "snoozed:before:tomorrow", "snoozed:before:",
    ])
    func refused(_ query: String) {
        let error = parseError(query)
        #expect(error != nil, "\(query)")
        #expect(error.map { $0.column > 1 } ?? false, "\(query): \(String(describing: error))")
    }

    @Test("--explain renders them")
    func rendered() throws {
        #expect(Term.awaitingReply(RelativeAge(amount: 3, unit: .day)).description.hasPrefix("(awaiting-reply "))
        #expect(Term.snoozedBefore(.day(year: 2026, month: 12, day: 8)).description.hasPrefix("(snoozed-before "))
    }
}
