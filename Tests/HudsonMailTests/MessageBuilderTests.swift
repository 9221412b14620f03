// Outgoing MIME (MessageBuilder, HeaderField, BodyEncoding, RawMessage) read back by the
// project's own decoder (RFC822.parse, EncodedWords, MailAddress, MessageContent) and by
// Python's `email` package, the independent oracle: a script kept below as a string, run with
// `python3 -c`; without python3 that test is skipped with a message saying so.
import Foundation
import Testing
@testable import HudsonMail

/// A deterministic generator, so rendered messages are reproducible.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The messages every round-trip test renders.
enum Samples {
    static let binary: [UInt8] = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) } + Array(0...255)

    static let messages: [OutgoingMessage] = [
        OutgoingMessage(
            from: MailAddress(name: "Ann Example", address: "ann@example.com"),
            to: [MailAddress(address: "bob@example.org")], subject: "Lunch?", text: "Noon at the usual place.\n",
            messageID: "<plain@example.com>", date: "Thu, 01 Jan 2026 12:00:00 +0000"),
        OutgoingMessage(
            from: MailAddress(name: "Zoë Müller", address: "zoe@example.com"),
            to: [MailAddress(name: "Jürgen Groß", address: "juergen@example.de"), MailAddress(name: "Doe, Jane", address: "jane@example.net"),
                 MailAddress(name: "山田 太郎", address: "taro@example.jp")],
            cc: [MailAddress(name: "O'Brien \"Bo\"", address: "bo@example.ie")],
            bcc: [MailAddress(address: "archive@example.com")],
            subject: "Re: Plans for Zürich — the café, the läckerli and a very long tail of words that must fold =?x?",
            text: "Grüße aus Zürich!\n\nA line that is long enough to need a soft line break in quoted-printable, with ümlauts at the end ü\nFrom here on, trailing blanks:   \n.\nLast line without a newline",
            messageID: "<nonascii@example.com>", date: "Thu, 01 Jan 2026 12:00:00 +0100",
            inReplyTo: "<parent@example.org>", references: ["<root@example.org>", "<parent@example.org>"]),
        OutgoingMessage(
            from: MailAddress(name: "山田 太郎", address: "taro@example.jp"), to: [MailAddress(address: "ann@example.com")],
            subject: "会議の議事録と次回の予定について（長い件名のテスト）", text: "本日はありがとうございました。\n議事録を添付します。\n",
            attachments: [
                OutgoingAttachment(filename: "議事録 2026年1月.pdf", data: binary),
                OutgoingAttachment(filename: "Résumé – final version with a rather long name, really.docx", data: Array(binary.reversed())),
                OutgoingAttachment(filename: "notes.txt", data: Array("plain notes\r\nsecond line\r\n".utf8)),
                OutgoingAttachment(filename: "empty.bin", data: []),
            ],
            messageID: "<attachments@example.jp>", date: "Fri, 02 Jan 2026 09:30:00 +0900"),
    ]

    static func render(_ message: OutgoingMessage) -> [UInt8] {
        var random = SplitMix(state: 42)
        return MessageBuilder.render(message, using: &random)
    }
}

@Suite("Outgoing MIME: generation and round trips")
struct MessageBuilderTests {
    /// Text as a reader compares it: LF line ends.
    func lf(_ text: String) -> String { text.replacingOccurrences(of: "\r\n", with: "\n") }

    @Test("generated MIME is 7-bit, CRLF only, with lines of at most 76 characters", arguments: Samples.messages.indices)
    func wireForm(index: Int) throws {
        let bytes = Samples.render(Samples.messages[index])
        #expect(bytes.allSatisfy { $0 < 128 })
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\r"))
        // A longer line is one unbreakable token (a long media type): 998 is the hard limit.
        for line in text.components(separatedBy: "\r\n") where line.utf8.count > 76 {
            #expect(line.utf8.count <= 998 && !line.contains("=?") && line.split(separator: " ").count <= 2, "line too long: \(line)")
        }
    }

    @Test("generated MIME parses back exactly through RFC822.parse and MessageContent.extract", arguments: Samples.messages.indices)
    func roundTripOwnDecoder(index: Int) throws {
        let message = Samples.messages[index]
        let root = RFC822.parse(bytes: Samples.render(message))
        #expect(EncodedWords.decode(root.header("Subject") ?? "") == message.subject)
        #expect(MailAddress.parseList(root.header("From") ?? "") == [message.from])
        #expect(MailAddress.parseList(root.header("To") ?? "") == message.to)
        #expect(MailAddress.parseList(root.header("Cc") ?? "") == message.cc)
        #expect(MailAddress.parseList(root.header("Bcc") ?? "") == message.bcc)
        #expect(root.header("Message-ID") == message.messageID)
        #expect(root.header("Date").flatMap(MailDate.parse) == MailDate.parse(message.date))
        #expect(root.header("In-Reply-To") == message.inReplyTo)
        #expect(root.header("References") == (message.references.isEmpty ? nil : message.references.joined(separator: " ")))

        let textPart = message.attachments.isEmpty ? root : try #require(root.parts.first)
        #expect(textPart.decodedBody == BodyEncoding.canonicalLines(message.text), "the text part's bytes are exact")
        let content = MessageContent.extract(from: root)
        #expect(lf(content.text ?? "") == message.text.trimmingCharacters(in: .newlines))
        #expect(content.attachments.map(\.filename) == message.attachments.map(\.filename))
        #expect(content.attachments.map(\.mimeType) == message.attachments.map(\.mimeType))
        for (part, attachment) in zip(root.parts.dropFirst(), message.attachments) {
            #expect(part.decodedBody == attachment.data, "\(attachment.filename) comes back byte for byte")
        }
    }

    @Test(
        "generated MIME parses back exactly through Python's email package",
        .enabled(if: PythonMIMEOracle.available, "skipped: python3 is not on this machine")
    )
    func roundTripPython() throws {
        for message in Samples.messages {
            let parsed = try PythonMIMEOracle.parse(Samples.render(message))
            #expect(parsed.subject == (message.subject.isEmpty ? nil : message.subject))
            #expect(parsed.from == [[message.from.name, message.from.address]])
            #expect(parsed.to == message.to.map { [$0.name, $0.address] })
            #expect(parsed.cc == message.cc.map { [$0.name, $0.address] })
            #expect(parsed.bcc == message.bcc.map { [$0.name, $0.address] })
            #expect(parsed.messageID == message.messageID)
            #expect(parsed.defects.isEmpty, "Python reports defects: \(parsed.defects)")
            #expect(lf(parsed.text) == lf(String(decoding: BodyEncoding.canonicalLines(message.text), as: UTF8.self)))
            #expect(parsed.attachments.map(\.filename) == message.attachments.map(\.filename))
            #expect(parsed.attachments.map(\.contentType) == message.attachments.map(\.mimeType))
            #expect(parsed.attachments.map { Base64.decode($0.data) } == message.attachments.map(\.data))
        }
    }

    @Test("quoted-printable encoding inverts QuotedPrintable.decode for any bytes")
    func quotedPrintableRoundTrip() {
        var random = SplitMix(state: 7)
        for length in [0, 1, 75, 76, 77, 200, 1000] {
            let alphabet: [UInt8] = Array(" \t=.Fabcé\r\n".utf8) + [0, 255, 128]
            let bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let canonical = RawMessage.crlf(bytes)
            let encoded = QuotedPrintable.encode(canonical)
            #expect(QuotedPrintable.decode(Array(encoded.utf8)) == canonical)
            #expect(encoded.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 && !$0.hasSuffix(" ") && !$0.hasSuffix("\t") })
        }
    }

    @Test("text that is already 7-bit stays as it is; mostly non-Latin text goes base64, mostly Latin quoted-printable")
    func transferEncodingChoice() {
        #expect(BodyEncoding.text(BodyEncoding.canonicalLines("Hello,\nworld\n")).transferEncoding == "7bit")
        #expect(BodyEncoding.text(BodyEncoding.canonicalLines("trailing blank \n")).transferEncoding == "quoted-printable")
        #expect(BodyEncoding.text(BodyEncoding.canonicalLines("Grüße aus Zürich: see you on Monday at the office, as agreed last week.")).transferEncoding == "quoted-printable")
        #expect(BodyEncoding.text(BodyEncoding.canonicalLines("本日はありがとうございました。")).transferEncoding == "base64")
    }

    @Test("a long subject folds into several encoded words, each at most 75 characters")
    func encodedWordLimits() {
        let field = HeaderField.unstructured("Subject", String(repeating: "Überraschung ", count: 12))
        let words = field.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("=?") }
        #expect(words.count > 1)
        #expect(words.allSatisfy { $0.count <= 75 })
        #expect(EncodedWords.decode(String(field.dropFirst("Subject:".count))).trimmingWhitespace()
                == String(repeating: "Überraschung ", count: 12).trimmingWhitespace())
    }

    @Test("the RFC 5322 date is right in both directions of the epoch and with offsets")
    func dates() {
        #expect(MailDate.format(epochSeconds: 0, offsetSeconds: 0) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(MailDate.format(epochSeconds: 1_767_225_600, offsetSeconds: 3600) == "Thu, 01 Jan 2026 01:00:00 +0100")
        #expect(MailDate.format(epochSeconds: 1_709_208_000, offsetSeconds: -18_000) == "Thu, 29 Feb 2024 07:00:00 -0500")
        #expect(MailDate.format(epochSeconds: -1, offsetSeconds: 0) == "Wed, 31 Dec 1969 23:59:59 +0000")
        #expect(MailDate.format(epochSeconds: 1_767_225_600, offsetSeconds: 19_800) == "Thu, 01 Jan 2026 05:30:00 +0530")
        for seconds: Int64 in [0, 951_782_400, 1_767_225_600, 4_102_444_799] {
            #expect(MailDate.parse(MailDate.format(epochSeconds: seconds, offsetSeconds: -25_200)) == seconds)
        }
    }

    @Test("Message-IDs are fresh, on the sender's domain, and searchable with rfc822msgid:")
    func messageIDs() {
        var random = SystemRandomNumberGenerator()
        let ids = (0..<100).map { _ in MessageBuilder.messageID(domain: "example.com", using: &random) }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.hasSuffix("@example.com>") && RawMessage.isSearchableMessageID($0) })
        #expect(!RawMessage.isSearchableMessageID("<no at sign>"))
        #expect(!RawMessage.isSearchableMessageID("bare@example.com"))
    }

    @Test("--raw: line ends become CRLF, and a Message-ID and Date are added only when missing")
    func rawPreparation() throws {
        let bare = Array("From: Ann <ann@example.com>\nTo: bob@example.org, Carol <carol@example.net>\nSubject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\n\nHi\n".utf8)
        let prepared = try RawMessage.prepare(bare, date: "Thu, 01 Jan 2026 00:00:00 +0000") { "<new@example.com>" }
        let text = String(decoding: prepared.raw, as: UTF8.self)
        #expect(text.hasPrefix("Message-ID: <new@example.com>\r\nDate: Thu, 01 Jan 2026 00:00:00 +0000\r\nFrom: Ann"))
        #expect(text.hasSuffix("\r\n\r\nHi\r\n") && !text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        #expect(prepared.messageID == "<new@example.com>")
        #expect(prepared.from == MailAddress(name: "Ann", address: "ann@example.com"))
        #expect(prepared.recipients.map(\.address) == ["bob@example.org", "carol@example.net"])
        #expect(prepared.subject == "Grüße")

        let complete = Array("Message-ID: <kept@example.com>\r\nDate: Fri, 02 Jan 2026 00:00:00 +0000\r\nFrom: ann@example.com\r\nTo: bob@example.org\r\n\r\nHi".utf8)
        let kept = try RawMessage.prepare(complete, date: "unused") { Issue.record("a new id was made"); return "" }
        #expect(kept.raw == complete && kept.messageID == "<kept@example.com>")
    }
}

/// Runs Python's `email` package over a message and reports what it decoded.
enum PythonMIMEOracle {
    struct Parsed: Decodable {
        struct Attachment: Decodable {
            var filename: String
            var contentType: String
            var data: String
        }
        var subject: String?
        var from: [[String]]
        var to: [[String]]
        var cc: [[String]]
        var bcc: [[String]]
        var messageID: String?
        var text: String
        var attachments: [Attachment]
        var defects: [String]
    }

    static let available: Bool = {
        (try? run(["-c", "import email"], input: Data()))?.status == 0
    }()

    static func parse(_ bytes: [UInt8]) throws -> Parsed {
        let result = try run(["-c", script], input: Data(bytes))
        guard result.status == 0 else { throw OracleFailure(output: String(decoding: result.output, as: UTF8.self)) }
        return try JSONDecoder().decode(Parsed.self, from: result.output)
    }

    struct OracleFailure: Error { var output: String }

    static func run(_ arguments: [String], input: Data) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    static let script = #"""
import base64, email, email.policy, json, sys
msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
def addrs(name):
    header = msg[name]
    return [[a.display_name, a.addr_spec] for a in header.addresses] if header is not None else []
defects = [type(d).__name__ for d in msg.defects]
for part in msg.walk():
    defects += [type(d).__name__ for d in part.defects]
body = msg.get_body(preferencelist=("plain",))
attachments = [{"filename": p.get_filename(), "contentType": p.get_content_type(),
                "data": base64.b64encode(p.get_payload(decode=True) or b"").decode()} for p in msg.iter_attachments()]
print(json.dumps({"subject": None if msg["Subject"] is None else str(msg["Subject"]),
                  "from": addrs("From"), "to": addrs("To"), "cc": addrs("Cc"), "bcc": addrs("Bcc"),
                  "messageID": None if msg["Message-ID"] is None else str(msg["Message-ID"]),
                  "text": body.get_content() if body is not None else "", "attachments": attachments,
                  "defects": defects}))
"""#
}
