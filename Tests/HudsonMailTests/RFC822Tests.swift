// Raw RFC 5322 / MIME parsing: header unfolding, multipart boundaries, transfer encodings,
// Gmail part numbering, and bounded work on hostile structure.
import Testing
@testable import HudsonMail

private func parse(_ text: String) -> MIMEPart { RFC822.parse(bytes: Array(text.utf8)) }
private func body(_ part: MIMEPart) -> String { String(decoding: part.bodyData ?? [], as: UTF8.self) }

@Suite("RFC822.parse")
struct RFC822Tests {
    @Test("headers are unfolded and kept in order with duplicates; lookup ignores case")
    func headers() {
        let part = parse("Received: by a;\r\n\tMon, 2 Dec 2024\r\nReceived: by b\r\nSUBJECT: long\r\n  subject\r\n\r\nbody")
        #expect(part.headers.map(\.name) == ["Received", "Received", "SUBJECT"])
        #expect(part.headers.values(of: "received") == ["by a;\tMon, 2 Dec 2024", "by b"])
        #expect(part.header("Subject") == "long  subject")
        #expect(part.mimeType == "text/plain")
        #expect(body(part) == "body")
    }

    @Test("LF-only line ends, an mbox From line and obsolete 'Name :' syntax are accepted")
    func lenientHeaders() {
        let part = parse("From sender Mon Dec  2 13:00:00 2024\nSubject : hi\nX-Empty:\n\nline1\nline2\n")
        #expect(part.header("subject") == "hi")
        #expect(part.header("x-empty") == "")
        #expect(body(part) == "line1\nline2\n")
    }

    @Test("a header block without its blank line ends at the first non-header line")
    func missingSeparator() {
        let part = parse("Subject: x\nThis is body text.\nMore\n")
        #expect(part.headers.count == 1)
        #expect(body(part) == "This is body text.\nMore\n")
    }

    @Test("8-bit header bytes decode as UTF-8, else Windows-1252")
    func eightBitHeaders() {
        let bytes = Array("Subject: caf".utf8) + [0xE9] + Array("\r\nX: Gr\u{FC}\u{DF}e\r\n\r\n".utf8)
        let part = RFC822.parse(bytes: bytes)
        #expect(part.header("Subject") == "café")
        #expect(part.header("X") == "Grüße")
    }

    @Test("multipart: preamble and epilogue dropped, CRLF before a delimiter belongs to it")
    func multipart() {
        let raw = """
        Content-Type: multipart/mixed; boundary="=_b 1"\r
        \r
        preamble\r
        --=_b 1\r
        Content-Type: text/plain\r
        \r
        first\r
        \r
        --=_b 1  \r
        Content-Type: text/plain\r
        \r
        second\r
        --=_b 1--\r
        epilogue\r

        """
        let part = parse(raw)
        #expect(part.parts.map(\.partID) == ["0", "1"])
        #expect(part.parts.map(body) == ["first\r\n", "second"])
        #expect(part.bodyData == nil && part.size == 0)
    }

    @Test("a missing close delimiter ends the last part at the end of the input")
    func missingCloseDelimiter() {
        let part = parse("Content-Type: multipart/mixed; boundary=x\n\n--x\n\none\n--x\n\ntwo\n")
        #expect(part.parts.map(body) == ["one", "two\n"])
    }

    @Test("a lookalike line that continues past the boundary is content, not a delimiter")
    func boundaryLookalike() {
        let part = parse("Content-Type: multipart/mixed; boundary=x\n\n--x\n\n--xy is text\n--x--\n")
        #expect(part.parts.map(body) == ["--xy is text"])
    }

    @Test("without a boundary or delimiter, the multipart keeps its body as data")
    func noDelimiter() {
        let part = parse("Content-Type: multipart/mixed; boundary=nope\n\njust text\n")
        #expect(part.parts.isEmpty)
        #expect(MessageContent.extract(from: part).text == "just text")
    }

    @Test("base64 and quoted-printable transfer encodings are undone; others left alone")
    func transferEncodings() {
        let raw = """
        Content-Type: multipart/mixed; boundary=b

        --b
        Content-Transfer-Encoding: BASE64

        R3LD
        vMOfZQ==
        --b
        Content-Transfer-Encoding: quoted-printable

        Gr=C3=BC=C3=9Fe=
         aus Bonn
        --b
        Content-Transfer-Encoding: x-uuencode

        =41
        --b--
        """
        let part = parse(raw)
        #expect(part.parts.map(body) == ["Grüße", "Grüße aus Bonn", "=41"])
        #expect(part.parts[0].size == 7)
    }

    @Test("nested multiparts and message/rfc822 are numbered the Gmail way")
    func numbering() {
        let raw = """
        Content-Type: multipart/mixed; boundary=outer

        --outer
        Content-Type: multipart/alternative; boundary=inner

        --inner

        plain
        --inner
        Content-Type: text/html

        <p>html</p>
        --inner--
        --outer
        Content-Type: message/rfc822

        Subject: fwd
        Content-Type: multipart/mixed; boundary=fwd

        --fwd

        forwarded
        --fwd--
        --outer--
        """
        let part = parse(raw)
        #expect(part.partID == "")
        #expect(part.parts.map(\.partID) == ["0", "1"])
        #expect(part.parts[0].parts.map(\.partID) == ["0.0", "0.1"])
        #expect(part.parts[1].mimeType == "message/rfc822")
        #expect(part.parts[1].parts.map(\.partID) == ["1.0"])
        #expect(part.parts[1].parts[0].header("Subject") == "fwd")
        #expect(part.parts[1].parts[0].parts.map(\.partID) == ["1.0.0"])
    }

    @Test("multipart/digest parts default to message/rfc822 (RFC 2046 §5.1.5)")
    func digestDefault() {
        let part = parse("Content-Type: multipart/digest; boundary=d\n\n--d\n\nSubject: one\n\nbody one\n--d--\n")
        #expect(part.parts[0].mimeType == "message/rfc822")
        #expect(part.parts[0].parts[0].header("Subject") == "one")
    }

    @Test("filenames come from Content-Disposition, else the Content-Type name, decoded")
    func filenames() {
        let raw = """
        Content-Type: multipart/mixed; boundary=b

        --b
        Content-Type: application/pdf; name="=?UTF-8?Q?caf=C3=A9.pdf?="

        x
        --b
        Content-Type: application/pdf; name=ignored.pdf
        Content-Disposition: attachment; filename*=UTF-8''%E2%82%AC.pdf

        y
        --b--
        """
        #expect(parse(raw).parts.map(\.filename) == ["café.pdf", "€.pdf"])
    }

    @Test("an invalid Content-Type means text/plain (RFC 2045 §5.2)")
    func invalidContentType() {
        #expect(parse("Content-Type: text; charset=us-ascii\n\nx").mimeType == "text/plain")
        #expect(parse("Content-Type: Multipart/Mixed; Boundary=\"z\"\n\n--z\n\nq\n--z--").parts.count == 1)
    }

    @Test("nesting deeper than the bound is kept as an opaque leaf")
    func depthBound() {
        var raw = "innermost"
        for level in 0..<200 {
            raw = "Content-Type: multipart/mixed; boundary=b\(level)\n\n--b\(level)\n\(raw)\n--b\(level)--\n"
        }
        var part = parse(raw)
        var depth = 0
        while let child = part.parts.first { part = child; depth += 1 }
        #expect(depth == RFC822.maximumDepth)
        #expect(part.bodyData != nil)
        _ = MessageContent.extract(from: parse(raw))
    }

    @Test("the part count is bounded")
    func partBound() {
        let raw = "Content-Type: multipart/mixed; boundary=b\n\n" + String(repeating: "--b\n\nx\n", count: 20_000) + "--b--\n"
        #expect(parse(raw).parts.count == RFC822.maximumParts)
    }

    @Test("garbage never crashes", arguments: ["", "\n", ":", "\r\n\r\n", "Content-Type: multipart/mixed; boundary=\"\"\n\n--\n",
                                               "Content-Type: message/rfc822\n\n", "--\n--\n"])
    func garbage(raw: String) {
        _ = MessageContent.extract(from: parse(raw))
    }

    @Test("random MIME-shaped input never crashes parsing or extraction")
    func randomInput() {
        let fragments = [
            "Content-Type: multipart/mixed; boundary=b\n", "Content-Type: multipart/alternative; boundary=b\n",
            "Content-Type: multipart/related; boundary=b; start=<x>\n", "Content-Type: message/rfc822\n",
            "Content-Type: text/html; charset=shift_jis\n", "Content-Type: text/plain; charset*=utf-8''%FF\n",
            "Content-Transfer-Encoding: base64\n", "Content-Transfer-Encoding: quoted-printable\n",
            "Content-Disposition: attachment; filename*0*=x; filename*1=y\n", "Content-ID: <x>\n",
            "Subject: =?utf-8?b?4oI=?= =?x?q?=FF?=\n", "Date: Mon, 2 Dec 2024 13:00 +0100\n",
            "--b\n", "--b--\n", "\n", "\r\n", " folded\n", "<p>", "</div>", "&#x1F600;", "&amp", "<a href=x>",
            "=C3=\n", "SGVsbG8=\n", "\u{FF}\u{FE}", "BEGIN:VEVENT\nSUMMARY:x\n",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for _ in 0..<300 {
            var raw: [UInt8] = []
            for _ in 0..<(next() % 60) {
                if next() % 8 == 0 {
                    raw.append(UInt8(truncatingIfNeeded: next()))
                } else {
                    raw.append(contentsOf: Array(fragments[next() % fragments.count].utf8))
                }
            }
            let part = RFC822.parse(bytes: raw)
            _ = MessageContent.extract(from: part)
            _ = part.header("Date").flatMap(MailDate.parse)
        }
    }
}
