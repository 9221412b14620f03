// RFC 5322 §3.4 address lists, parsed leniently by MailAddress.parseList.
import Testing
@testable import HudsonMail

private func parse(_ header: String) -> [String] { MailAddress.parseList(header).map(\.description) }

@Suite("MailAddress.parseList")
struct MailAddressTests {
    @Test("an address field is decoded inside its names only: an encoded name cannot add an address")
    func decodedField() {
        // The attack: a name that decodes to an address and a comma.
        let tricky = "=?UTF-8?Q?eve=40evil.example=2C?= <boss@corp.example>"
        #expect(MailAddress.decodedField(tricky) == #""eve@evil.example," <boss@corp.example>"#)
        #expect(MailAddress.parseList(MailAddress.decodedField(tricky)).map(\.address) == ["boss@corp.example"])
        // A name with a comma stays one name; plain names and fields without encoded words stay as they are.
        #expect(MailAddress.decodedField("=?UTF-8?Q?M=C3=BCller=2C_J=C3=BCrgen?= <j@example.de>") == #""Müller, Jürgen" <j@example.de>"#)
        #expect(MailAddress.decodedField("=?UTF-8?Q?M=C3=BCller?= <m@example.de>, bob@example.org") == "Müller <m@example.de>, bob@example.org")
        #expect(MailAddress.decodedField("Ann <a@example.org>, \"Doe, J\" <j@example.org>") == "Ann <a@example.org>, \"Doe, J\" <j@example.org>")
        // A quote or backslash in a decoded name is escaped.
        #expect(MailAddress.decodedField("=?UTF-8?Q?A=22B=5CC?= <x@example.org>") == #""A\"B\\C" <x@example.org>"#)
    }

    @Test("angle addresses with and without display names")
    func angleAddresses() {
        #expect(parse("Ann Example <ann@example.com>, <bob@example.org>") == ["Ann Example <ann@example.com>", "bob@example.org"])
    }

    @Test("quoted names may hold commas, escapes and angle brackets")
    func quotedNames() {
        #expect(parse("\"Doe, John\" <john@example.com>, \"A \\\"B\\\" <c>\" <d@e.f>") == ["Doe, John <john@example.com>", "A \"B\" <c> <d@e.f>"])
    }

    @Test("a comment names a bare address; comments elsewhere are dropped")
    func comments() {
        #expect(parse("ann@example.com (Ann (the first) Example)") == ["Ann (the first) Example <ann@example.com>"])
        #expect(parse("Ann <ann@example.com> (work)") == ["Ann <ann@example.com>"])
    }

    @Test("groups contribute their members; an empty group contributes nothing")
    func groups() {
        #expect(parse("Team: ann@example.com, Bob <bob@example.org>;, carol@example.net") ==
                ["ann@example.com", "Bob <bob@example.org>", "carol@example.net"])
        #expect(parse("undisclosed-recipients:;").isEmpty)
    }

    @Test("obsolete source routes are stripped")
    func routes() {
        #expect(parse("Ann <@relay1,@relay2:ann@example.com>") == ["Ann <ann@example.com>"])
    }

    @Test("encoded-word display names are decoded, quoted or not, and in comments")
    func encodedWordNames() {
        #expect(parse("=?UTF-8?Q?Ren=C3=A9_Dupont?= <rene@example.org>, \"=?ISO-8859-1?Q?J=F6rg?=\" <j@example.de>")
                == ["René Dupont <rene@example.org>", "Jörg <j@example.de>"])
        #expect(parse("rene@example.org (=?UTF-8?B?UmVuw6k=?=)") == ["René <rene@example.org>"])
    }

    @Test("bare addresses and display names")
    func bare() {
        #expect(MailAddress.parseList("ann@example.com").first?.displayName == "ann@example.com")
        #expect(MailAddress.parseList("Ann <ann@example.com>").first?.displayName == "Ann")
    }

    @Test("garbage never fails and yields no empty addresses", arguments: ["", ",,,", "<>", "\"unterminated", "(((", ";:;", "<<a>"])
    func garbage(header: String) {
        #expect(MailAddress.parseList(header).allSatisfy { !$0.address.isEmpty })
    }

    @Test("the byte reading of plain From headers gives what the parser gives, and leaves the rest to it", arguments: [
        "Linda Johnson <linda.johnson@initech.example>", "bob@example.org", "Mary T. O'Brien-Smith <m@x.example>",
        "J. Smith <j@x>", "Alex Hudson <alex.hudson@example.com>", "A <a@b>",
        // Not plain: each goes to the parser, which must still answer the same.
        "\"Doe, Jane\" <jane@example.org>", "Jane  Doe <jane@example.org>", " Jane <j@x>", "Jane<j@x>",
        "ceo@bank.example <thief@evil.example>", "=?UTF-8?B?WsO2ZQ==?= <z@x>", "Zoë <z@x>", "a@b, c@d",
        "Jane (work) <j@x>", "<j@x>", "Jane <@route:j@x>", "Jane <j x@y>", "<>", "Jane <>", "plain text",
        "a@b@c", "@x", "Jane <j@x> trailing", "Jane\t<j@x>", "user@host>", "Jane <j@x>>",
    ])
    func plainHeaders(header: String) {
        let parsed = MailAddress.parseList(header).first?.displayName
        #expect(MailAddress.firstDisplayName(header) == parsed)
        if let plain = MailAddress.plainDisplayName(header) { #expect(plain == parsed) }
    }

    @Test("the common forms are read without the parser")
    func plainFastPath() {
        #expect(MailAddress.plainDisplayName("Linda Johnson <linda.johnson@initech.example>") == "Linda Johnson")
        #expect(MailAddress.plainDisplayName("bob@example.org") == "bob@example.org")
        #expect(MailAddress.plainDisplayName("\"Doe, Jane\" <jane@example.org>") == nil)
        #expect(MailAddress.plainDisplayName("ceo@bank.example <thief@evil.example>") == nil)
    }
}
