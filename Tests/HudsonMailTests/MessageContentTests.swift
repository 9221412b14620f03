// Content extraction for each tree shape of gmail-api.md §8, built the way sync will map
// Gmail's format=full JSON: bytes already transfer-decoded, attachments by attachmentId.
import Testing
@testable import HudsonMail

private func header(_ name: String, _ value: String) -> MIMEPart.Header { .init(name: name, value: value) }

private func leaf(_ id: String, _ type: String, _ text: String, charset: String? = "UTF-8",
                  headers extra: [MIMEPart.Header] = []) -> MIMEPart {
    let contentType = charset.map { "\(type); charset=\"\($0)\"" } ?? type
    return MIMEPart(partID: id, mimeType: type, headers: [header("Content-Type", contentType)] + extra,
                    bodyData: Array(text.utf8))
}

private func multipart(_ id: String, _ subtype: String, _ parts: [MIMEPart], parameters: String = "") -> MIMEPart {
    MIMEPart(partID: id, mimeType: "multipart/\(subtype)",
             headers: [header("Content-Type", "multipart/\(subtype); boundary=\"b\(id)\"\(parameters)")], parts: parts)
}

private func file(_ id: String, _ type: String, _ name: String, disposition: String = "attachment",
                  contentID: String? = nil) -> MIMEPart {
    var headers = [header("Content-Type", "\(type); name=\"\(name)\""),
                   header("Content-Disposition", "\(disposition); filename=\"\(name)\""),
                   header("Content-Transfer-Encoding", "base64")]
    if let contentID { headers.append(header("Content-ID", "<\(contentID)>")) }
    return MIMEPart(partID: id, mimeType: type, filename: name, headers: headers, attachmentID: "ANG-\(id)", size: 40211)
}

@Suite("MessageContent.extract: the tree shapes of gmail-api.md §8")
struct MessageContentTests {
    @Test("text/plain alone at the root")
    func plainAlone() {
        let root = leaf("", "text/plain", "Hi Ann,\r\nthe draft is attached.\r\n\r\n")
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Hi Ann,\nthe draft is attached.")
        #expect(content.html == nil)
        #expect(content.attachments.isEmpty)
    }

    @Test("multipart/alternative: text/plain is shown, the HTML kept for --html")
    func alternative() {
        let root = multipart("", "alternative", [
            leaf("0", "text/plain", "Plain version"),
            leaf("1", "text/html", "<div>HTML <b>version</b></div>"),
        ])
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Plain version")
        #expect(content.html == "<div>HTML <b>version</b></div>")
    }

    @Test("multipart/alternative with an empty text/plain falls back to the HTML")
    func alternativeEmptyPlain() {
        let root = multipart("", "alternative", [leaf("0", "text/plain", " \r\n"), leaf("1", "text/html", "<p>Real</p>")])
        #expect(MessageContent.extract(from: root).text == "Real")
    }

    @Test("text/html alone is converted to text")
    func htmlAlone() {
        let root = leaf("", "text/html", "<p>Hello&nbsp;<b>world</b></p>")
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Hello world")
        #expect(content.html == "<p>Hello&nbsp;<b>world</b></p>")
    }

    @Test("multipart/mixed: alternative plus an attachment fetched by attachmentId")
    func mixedWithAttachment() {
        let root = multipart("", "mixed", [
            multipart("0", "alternative", [leaf("0.0", "text/plain", "Body"), leaf("0.1", "text/html", "<p>Body</p>")]),
            file("1", "application/pdf", "report.pdf"),
        ])
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Body")
        #expect(content.attachments == [ExtractedAttachment(
            partID: "1", filename: "report.pdf", mimeType: "application/pdf", size: 40211,
            attachmentID: "ANG-1", contentID: nil, isInline: false)])
    }

    @Test("multipart/mixed concatenates inline text parts in order")
    func mixedConcatenates() {
        let root = multipart("", "mixed", [
            leaf("0", "text/plain", "First"),
            file("1", "image/png", "photo.png", disposition: "inline"),
            leaf("2", "text/plain", "Second"),
            leaf("3", "text/html", "<p>Third</p>"),
        ])
        let content = MessageContent.extract(from: root)
        #expect(content.text == "First\n\nSecond\n\nThird")
        #expect(content.attachments.map(\.filename) == ["photo.png"])
        #expect(content.attachments[0].isInline)
    }

    @Test("multipart/related: the root is shown and cid: images are inline attachments")
    func related() {
        let root = multipart("", "related", [
            file("0", "image/png", "logo.png", disposition: "inline", contentID: "logo@x"),
            leaf("1", "text/html", "<p>Hi <img src=\"cid:logo@x\" alt=\"Logo\"></p>", headers: [header("Content-ID", "<root@x>")]),
        ], parameters: "; type=\"text/html\"; start=\"<root@x>\"")
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Hi [Logo]")
        #expect(content.attachments.count == 1)
        #expect(content.attachments[0].contentID == "logo@x")
        #expect(content.attachments[0].isInline)
    }

    @Test("related resources without a disposition or filename are listed inline")
    func relatedResourceWithoutName() {
        let image = MIMEPart(partID: "1", mimeType: "image/gif",
                             headers: [header("Content-Type", "image/gif"), header("Content-ID", "<a>")], attachmentID: "ANG", size: 9)
        let root = multipart("", "related", [leaf("0", "text/html", "<p>x</p>"), image])
        let content = MessageContent.extract(from: root)
        #expect(content.attachments.map(\.partID) == ["1"])
        #expect(content.attachments[0].isInline && content.attachments[0].filename.isEmpty)
    }

    @Test("multipart/signed shows its first part; a named signature is listed")
    func signed() {
        let root = multipart("", "signed", [
            leaf("0", "text/plain", "Signed text"),
            file("1", "application/pgp-signature", "signature.asc"),
        ], parameters: "; protocol=\"application/pgp-signature\"")
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Signed text")
        #expect(content.attachments.map(\.filename) == ["signature.asc"])
    }

    @Test("multipart/encrypted and application/pkcs7-mime say so and list their parts")
    func encrypted() {
        let pgp = multipart("", "encrypted", [
            MIMEPart(partID: "0", mimeType: "application/pgp-encrypted", bodyData: Array("Version: 1".utf8)),
            file("1", "application/octet-stream", "encrypted.asc", disposition: "inline"),
        ])
        let content = MessageContent.extract(from: pgp)
        #expect(content.text == "[encrypted message]")
        #expect(content.attachments.map(\.partID) == ["0", "1"])
        let smime = file("", "application/pkcs7-mime", "smime.p7m")
        #expect(MessageContent.extract(from: smime).text == "[encrypted message]")
        #expect(MessageContent.extract(from: smime).attachments.count == 1)
    }

    @Test("message/rfc822: a forwarded-message header block, then its text")
    func forwarded() {
        let inner = MIMEPart(partID: "1.0", mimeType: "text/plain", headers: [
            header("From", "=?UTF-8?Q?Ren=C3=A9?= <rene@example.org>"),
            header("Date", "Mon, 2 Dec 2024 13:00:00 +0100"),
            header("Subject", "Original\r\n subject"),
            header("To", "ann@example.com"),
            header("Content-Type", "text/plain; charset=utf-8"),
        ], bodyData: Array("Inner body".utf8))
        let root = multipart("", "mixed", [
            leaf("0", "text/plain", "See below."),
            MIMEPart(partID: "1", mimeType: "message/rfc822", headers: [header("Content-Type", "message/rfc822")], parts: [inner]),
        ])
        let content = MessageContent.extract(from: root)
        #expect(content.text == """
            See below.

            ---------- Forwarded message ----------
            From: René <rene@example.org>
            Date: Mon, 2 Dec 2024 13:00:00 +0100
            Subject: Original subject
            To: ann@example.com

            Inner body
            """)
    }

    @Test("message/rfc822 delivered as bytes is parsed on the spot, with part ids below it")
    func forwardedAsBytes() {
        let raw = "From: a@example.org\r\nSubject: Hi\r\nContent-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\n\r\nInner\r\n--q\r\nContent-Type: image/png; name=i.png\r\n\r\nPNG\r\n--q--\r\n"
        let root = MIMEPart(partID: "2", mimeType: "message/rfc822", bodyData: Array(raw.utf8))
        let content = MessageContent.extract(from: root)
        #expect(content.text == "---------- Forwarded message ----------\nFrom: a@example.org\nSubject: Hi\n\nInner")
        #expect(content.attachments.map(\.partID) == ["2.0.1"])
        #expect(content.attachments.map(\.filename) == ["i.png"])
    }

    @Test("text/calendar gives a one-line summary and is listed for saving")
    func calendar() {
        let ics = "BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nDTSTART;TZID=Europe/Paris:20241202T130000\r\nSUMMARY:Team\r\n  sync\\, weekly\r\nLOCATION:Room 4\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        let root = multipart("", "mixed", [leaf("0", "text/plain", "Invite"), leaf("1", "text/calendar", ics)])
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Invite\n\n[Calendar invitation: Team sync, weekly, 2024-12-02 13:00 (Europe/Paris), Room 4]")
        #expect(content.attachments.map(\.mimeType) == ["text/calendar"])
    }

    @Test("application/ms-tnef (winmail.dat) is an attachment")
    func tnef() {
        let root = multipart("", "mixed", [leaf("0", "text/plain", "See attached"), file("1", "application/ms-tnef", "winmail.dat")])
        #expect(MessageContent.extract(from: root).attachments.map(\.filename) == ["winmail.dat"])
    }

    @Test("a text part delivered by attachmentId is listed, not dropped (gmail-api.md §8)")
    func textByAttachmentID() {
        let big = MIMEPart(partID: "1", mimeType: "text/plain", headers: [header("Content-Type", "text/plain")],
                           attachmentID: "ANG-big", size: 9_000_000)
        let root = multipart("", "mixed", [leaf("0", "text/plain", "Short"), big])
        let content = MessageContent.extract(from: root)
        #expect(content.text == "Short")
        #expect(content.attachments.map(\.attachmentID) == ["ANG-big"])
    }

    @Test("non-UTF-8 charsets are decoded from Content-Type; HTML may name one in <meta>")
    func charsets() {
        let latin = MIMEPart(partID: "", mimeType: "text/plain", headers: [header("Content-Type", "text/plain; charset=ISO-8859-1")],
                             bodyData: [0x47, 0x72, 0xFC, 0xDF, 0x65])
        #expect(MessageContent.extract(from: latin).text == "Grüße")
        let sjis = MIMEPart(partID: "", mimeType: "text/html", headers: [header("Content-Type", "text/html")],
                            bodyData: Array("<meta charset=\"Shift_JIS\"><p>".utf8) + [0x82, 0xB1, 0x82, 0xF1])
        #expect(MessageContent.extract(from: sjis).text == "こん")
    }

    @Test("attachment names: filename field, else RFC 2231 disposition, else RFC 2047 Content-Type name")
    func attachmentNaming() {
        let fromField = MIMEPart(partID: "1", mimeType: "application/pdf", filename: "=?UTF-8?Q?caf=C3=A9.pdf?=",
                                 attachmentID: "A")
        let from2231 = MIMEPart(partID: "2", mimeType: "application/pdf", headers: [
            header("Content-Disposition", "attachment; filename*0*=UTF-8''%E2%82%AC; filename*1=.pdf")], attachmentID: "B")
        let from2047 = MIMEPart(partID: "3", mimeType: "application/pdf", headers: [
            header("Content-Type", "application/pdf; name=\"=?ISO-8859-1?Q?Gr=FC=DFe.pdf?=\"")], attachmentID: "C")
        let unnamed = MIMEPart(partID: "4", mimeType: "application/octet-stream", headers: [
            header("Content-Disposition", "attachment")], attachmentID: "D")
        let root = multipart("", "mixed", [leaf("0", "text/plain", "x"), fromField, from2231, from2047, unnamed])
        #expect(MessageContent.extract(from: root).attachments.map(\.filename) == ["café.pdf", "€.pdf", "Grüße.pdf", ""])
    }

    @Test("forwarded messages nested past the limit end in the note, not in silence or a phantom file",
          arguments: [MessageContent.maximumDepth - 1, MessageContent.maximumDepth, MessageContent.maximumDepth + 1, 200])
    func deepForwardedChain(levels: Int) {
        // As Gmail's JSON gives it (each message/rfc822 part holding the message as its
        // child), cut where the mapping of that JSON stops (its children past the limit
        // are left out), and as raw bytes parsed here.
        func forwardedChain(_ levels: Int) -> MIMEPart {
            var part = leaf("x", "text/plain", "bottom")
            for level in stride(from: levels, to: 0, by: -1) {
                part = MIMEPart(partID: "m", mimeType: "message/rfc822",
                                headers: [header("Content-Type", "message/rfc822"), header("Subject", "level \(level)")],
                                parts: [part])
            }
            return part
        }
        func cut(_ part: MIMEPart, depth: Int = 0) -> MIMEPart {
            var copy = part
            copy.parts = depth < MessageContent.maximumDepth ? part.parts.map { cut($0, depth: depth + 1) } : []
            return copy
        }
        var raw = "Subject: bottom\r\nContent-Type: text/plain\r\n\r\nbottom\r\n"
        for level in stride(from: levels, to: 0, by: -1) {
            raw = "Subject: level \(level)\r\nContent-Type: message/rfc822\r\n\r\n" + raw
        }
        for (form, root) in [("tree", forwardedChain(levels)), ("cut tree", cut(forwardedChain(levels))),
                             ("raw", RFC822.parse(bytes: Array(raw.utf8)))] {
            let content = MessageContent.extract(from: root)
            let text = content.text ?? ""
            if levels <= MessageContent.maximumDepth {
                #expect(text.hasSuffix("bottom") && !text.contains("too deeply"), "\(form): \(text.suffix(200))")
            } else {
                #expect(text.hasSuffix(MessageContent.tooDeepNote), "\(form), \(levels) levels: \(text.suffix(200))")
            }
            #expect(content.attachments.isEmpty, "\(form), \(levels) levels: \(content.attachments)")
        }
    }

    @Test("a 1000-deep tree neither overflows nor hangs; the depth limit is noted")
    func deepNesting() {
        var part = leaf("x", "text/plain", "bottom")
        for _ in 0..<1000 { part = multipart("m", "mixed", [part]) }
        let content = MessageContent.extract(from: part)
        #expect(content.text == "[message nested too deeply to show: parts more than 64 levels down are left out]")
        var shallow = leaf("x", "text/plain", "bottom")
        for _ in 0..<10 { shallow = multipart("m", "mixed", [shallow]) }
        #expect(MessageContent.extract(from: shallow).text == "bottom")
    }

    @Test("parts whose CTE was not undone are decoded when flagged")
    func transferEncodedFlag() {
        let part = MIMEPart(partID: "", mimeType: "text/plain", headers: [
            header("Content-Type", "text/plain; charset=utf-8"), header("Content-Transfer-Encoding", "Quoted-Printable")],
            bodyData: Array("caf=C3=A9=\r\n!".utf8), bodyIsTransferEncoded: true)
        #expect(MessageContent.extract(from: part).text == "café!")
    }

    @Test("a message with only attachments has no text")
    func onlyAttachments() {
        let root = multipart("", "mixed", [file("0", "image/jpeg", "a.jpg")])
        let content = MessageContent.extract(from: root)
        #expect(content.text == nil && content.html == nil && content.attachments.count == 1)
    }
}
