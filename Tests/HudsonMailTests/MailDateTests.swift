// RFC 5322 §3.3 / §4.3 Date headers to epoch seconds, without Foundation.
import Testing
@testable import HudsonMail

@Suite("MailDate.parse")
struct MailDateTests {
    // 2024-12-02T12:00:00Z
    static let noonUTC: Int64 = 1_733_140_800

    @Test("the RFC 5322 form and its variants", arguments: [
        ("Mon, 2 Dec 2024 13:00:00 +0100", noonUTC),
        ("Mon, 02 Dec 2024 12:00:00 +0000", noonUTC),
        ("2 Dec 2024 12:00:00 GMT", noonUTC),
        ("Mon,  2 Dec 2024 04:00:00 -0800 (PST)", noonUTC),
        ("Mon, 2 Dec 2024 04:00 PST", noonUTC),
        ("Mon, 2 Dec 2024 07:00:00 EST", noonUTC),
        ("Mon, 2 Dec 2024 05:00:00 PDT", noonUTC),
        ("Mon, 2 Dec 2024 12:00:00 UT", noonUTC),
        ("Mon, 2 Dec 2024 12:00:00 UTC", noonUTC),
        ("Mon (Monday), 2 (the second) Dec 2024 12:00:00 +0000 (comment (nested))", noonUTC),
        ("Mon, 2 Dec 24 12:00:00 +0000", noonUTC),
        ("Mon, 2 Dec 124 12:00:00 +0000", noonUTC),
        ("Mon, 2 December 2024 12:00:00 Z", noonUTC),
        ("Mon, 2 Dec 2024 12:00:00 -0000", noonUTC),
        ("Mon, 2 Dec 2024 12:00:00 A", noonUTC),
        ("Mon, 2 Dec 2024 12:00:00", noonUTC),
        ("Mon Dec  2 12:00:00 2024", noonUTC),
        ("2024-12-02T13:00:00+01:00", noonUTC),
        ("2024-12-02 12:00:00Z", noonUTC),
        ("Thu, 1 Jan 1970 00:00:00 +0000", 0),
        ("Wed, 31 Dec 1969 23:59:59 +0000", -1),
        ("Sat, 1 Jan 2000 00:00:00 +1400", 946_634_400),
        ("Thu, 29 Feb 2024 00:00:00 +0000", 1_709_164_800),
        ("Fri, 13 Jun 99 10:00:00 +0000", 929_268_000),
    ] as [(String, Int64)])
    func parses(value: String, expected: Int64) {
        #expect(MailDate.parse(value) == expected)
    }

    @Test("invalid dates give nil", arguments: [
        "", "not a date", "Mon, 30 Feb 2023 00:00:00 +0000", "Mon, 2 Foo 2024 12:00 +0000",
        "Mon, 2 Dec 2024 25:00:00 +0000", "Mon, 2 Dec 2024 12:61:00 +0000", "Mon, 32 Dec 2024 12:00:00 +0000",
    ])
    func rejects(value: String) {
        #expect(MailDate.parse(value) == nil)
    }
}
