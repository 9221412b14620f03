// RawMessage as hd-send's sendmail mode uses it: only the headers Gmail needs are added, at
// the top; the rest of the message is kept byte for byte; the parents a reply names.
import HudsonMail
import Testing

@Suite("RawMessage for sendmail programs: added From and Bcc, byte-for-byte bodies, parents")
struct SendmailMessageTests {
    @Test("From and Bcc are added only as asked, above the message, which is otherwise unchanged")
    func addedHeaders() throws {
        let given = "To: bob@example.org\r\nSubject: s\r\nMessage-ID: <a@b.c>\r\nDate: x\r\n\r\nbody \t\r\n.\r\n"
        let prepared = try RawMessage.prepare(Array(given.utf8), date: "unused",
                                          from: MailAddress(name: "Ann Example", address: "ann@example.com"),
                                          bcc: [MailAddress(address: "carol@example.net")]) { "<unused@x>" }
        #expect(String(decoding: prepared.raw, as: UTF8.self)
                == "From: Ann Example <ann@example.com>\r\nBcc: carol@example.net\r\n" + given)
        #expect(prepared.recipients.map(\.address) == ["bob@example.org", "carol@example.net"])
        #expect(prepared.from?.address == "ann@example.com")

        let withFrom = "From: Bob <bob@example.org>\r\n" + given
        let kept = try RawMessage.prepare(Array(withFrom.utf8), date: "unused", from: MailAddress(address: "ann@example.com")) { "" }
        #expect(kept.raw == Array(withFrom.utf8) && kept.from?.address == "bob@example.org")
    }

    @Test("parents: In-Reply-To first, then References from the last back to the root, each once")
    func parents() {
        let headers = RFC822.parseHeaders(Array("""
            In-Reply-To: <p@x>\r
            References: <root@x> <mid@x>\r
             <p@x>\r
            \r
            """.utf8))
        #expect(RawMessage.parentMessageIDs(headers) == ["<p@x>", "<mid@x>", "<root@x>"])
        #expect(RawMessage.parentMessageIDs([]) == [])
    }
}
