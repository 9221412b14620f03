// The rules of reply-all, quoting, forwarding and the edit template (HudsonMail's
// ReplyForward and EditTemplate), one by one.
import HudsonMail
import Testing

@Suite("Reply to all, quote, forward, and the edit template")
struct ReplyForwardTests {
    let original = OriginalHeaders(from: "Alice <alice@example.org>", to: "ann@example.com, Bob <bob@example.org>",
                                   cc: "carol@example.net, ANN@example.com, bob@example.org", replyTo: "",
                                   subject: "Numbers", date: "Wed, 02 Dec 2026 09:30:00 +0000")

    @Test("reply to all: the sender in To, everyone else once in Cc, never the user's own address")
    func replyAll() throws {
        let (to, cc) = try ReplyForward.replyAll(original, own: ["ann@example.com"])
        #expect(to.map(\.address) == ["alice@example.org"])
        #expect(cc.map(\.address) == ["bob@example.org", "carol@example.net"])
    }

    @Test("reply to all honours Reply-To; one's own message goes to its recipients")
    func replyToAndOwnMessage() throws {
        var withReplyTo = original
        withReplyTo.replyTo = "list@example.org"
        #expect(try ReplyForward.replyAll(withReplyTo, own: ["ann@example.com"]).to.map(\.address) == ["list@example.org"])
        let mine = OriginalHeaders(from: "Ann <ann@example.com>", to: "bob@example.org", cc: "carol@example.net")
        let (to, cc) = try ReplyForward.replyAll(mine, own: ["ANN@example.com"])
        #expect(to.map(\.address) == ["bob@example.org"] && cc.map(\.address) == ["carol@example.net"])
    }

    @Test("a name that held a comma in one encoded word, stored decoded, is one name again; other unreadable fields still refused")
    func decodedNamesWithCommas() throws {
        let split = try ReplyForward.recipients("From", "Müller, Jürgen <j@example.de>")
        #expect(split == [MailAddress(name: "Müller, Jürgen", address: "j@example.de")])
        let several = try ReplyForward.recipients("To", "Doe, Jane, Dr. <jane@example.org>, bob@example.org, Roe, R <r@example.net>")
        #expect(several.map(\.address) == ["jane@example.org", "bob@example.org", "r@example.net"])
        #expect(several.map(\.name) == ["Doe, Jane, Dr.", "", "Roe, R"])
        let (to, cc) = try ReplyForward.replyAll(OriginalHeaders(from: "Müller, Jürgen <j@example.de>", to: "ann@example.com",
                                                                  cc: "Roe, R <r@example.net>"), own: ["ann@example.com"])
        #expect(to.map(\.address) == ["j@example.de"] && cc.map(\.address) == ["r@example.net"])
        // Not a name split by decoding: a group, a trailing fragment, a bare word before a
        // bare address, a control character.
        for value in ["demo@hudson.test, Bcc: eve@evil.example", "friends: a@evil.example, b@evil.example;",
                      "Jane <jane@example.org>, Doe", "Doe, jane@example.org", "Doe, Jane\u{0}x <jane@example.org>",
                      "Doe\r\nBcc: eve@evil.example, Jane <jane@example.org>"] {
            #expect(throws: OutgoingMessageError.self, "\(value.debugDescription)") { try ReplyForward.recipients("Cc", value) }
        }
    }

    @Test("quote: attribution, '> ' per line, '>' alone on empty lines, '>>' before quoted text, no trailing blank lines")
    func quote() {
        let text = ReplyForward.quote("One\r\n\r\n> older\nTwo\n\n\n", original: original)
        #expect(text == "On Wed, 02 Dec 2026 09:30:00 +0000, Alice <alice@example.org> wrote:\n> One\n>\n>> older\n> Two\n")
    }

    @Test("forward: the subject gains Fwd: once; the block names the original's headers")
    func forward() {
        #expect(ReplyForward.forwardSubject("Numbers") == "Fwd: Numbers")
        #expect(ReplyForward.forwardSubject("FWD: Numbers") == "FWD: Numbers")
        #expect(ReplyForward.forwardSubject("Fw: x") == "Fw: x")
        let block = ReplyForward.forwardedBlock("Body\r\n", original: original)
        #expect(block.hasPrefix("---------- Forwarded message ---------\nFrom: Alice <alice@example.org>\nDate: Wed,"))
        #expect(block.hasSuffix("Cc: carol@example.net, ANN@example.com, bob@example.org\n\nBody\n"))
    }

    @Test("an attachment survives forwarding byte for byte; a forwarded message is attached as message/rfc822, not base64")
    func attachmentsRoundTrip() {
        var random = SystemRandomNumberGenerator()
        let data = (0..<600).map { UInt8($0 % 256) }
        let first = MessageBuilder.render(OutgoingMessage(
            from: MailAddress(address: "alice@example.org"), to: [MailAddress(address: "ann@example.com")], subject: "Numbers",
            text: "Hi", attachments: [OutgoingAttachment(filename: "data.bin", data: data)], messageID: "<1@example.org>",
            date: "Wed, 02 Dec 2026 09:30:00 +0000"), using: &random)
        let forwarded = ReplyForward.attachments(ofRaw: first)
        #expect(forwarded.map(\.filename) == ["data.bin"] && forwarded.first?.data == data)

        let second = MessageBuilder.render(OutgoingMessage(
            from: MailAddress(address: "ann@example.com"), to: [MailAddress(address: "dave@example.com")], subject: "Fwd: Numbers",
            attachments: [ReplyForward.asAttachment(first, subject: "Numbers / Q4")], messageID: "<2@example.com>",
            date: "Wed, 02 Dec 2026 10:00:00 +0000"), using: &random)
        let text = String(decoding: second, as: UTF8.self)
        #expect(text.contains("Content-Type: message/rfc822\r\nContent-Disposition: attachment; filename=\"Numbers _ Q4.eml\"\r\nContent-Transfer-Encoding: 7bit\r\n\r\n"))
        #expect(MessageBuilderTests.contains(second, first))
    }

    @Test("the edit template reads back what was written; empty or unchanged means cancel; unknown headers are refused")
    func editTemplate() throws {
        let message = EditableMessage(to: "bob@example.org", cc: "", bcc: "", subject: "Grüße", body: "Line\r\n")
        let template = EditTemplate.render(message)
        #expect(template == "To: bob@example.org\nCc: \nBcc: \nSubject: Grüße\n\nLine\n")
        #expect(try EditTemplate.parse(template, template: template) == nil)
        #expect(try EditTemplate.parse(" \n\n", template: template) == nil)
        let edited = try EditTemplate.parse("to: bob@example.org,\n carol@example.net\nSubject: New\n\nBody\n", template: template)
        #expect(edited == EditableMessage(to: "bob@example.org, carol@example.net", subject: "New", body: "Body\n"))
        #expect(throws: EditTemplateError.unknownHeader("X-Other")) { try EditTemplate.parse("X-Other: 1\n\nb", template: template) }
        #expect(throws: EditTemplateError.notAHeader(line: 1)) { try EditTemplate.parse("just text\n", template: template) }
        // A bare CR in a header line would be a line break once line ends are made one.
        #expect(throws: EditTemplateError.bareCR(line: 2)) {
            try EditTemplate.parse("To: bob@example.org\nSubject: hi\rBcc: eve@example.net\n\nb\n", template: template)
        }
        #expect(throws: EditTemplateError.bareCR(line: 1)) { try EditTemplate.parse("To: bob@example.org\rBcc: eve@example.net\r\rb", template: template) }
        // CRLF is a line end; a CR in the body is the body's.
        #expect(try EditTemplate.parse("To: bob@example.org\r\nSubject: s\r\n\r\nb\rc\r\n", template: template)?.subject == "s")
    }
}

extension MessageBuilderTests {
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
