// The one rule for outgoing recipients (issue 37 §1): OutgoingAddresses and the strict
// header reader OutgoingHeaderBlock. Generated address lists (a fixed seed, printed on
// failure; HUDSON_TEST_SEED picks another) must parse to exactly the addresses written,
// survive rendering by HeaderField and reading back, and read the same to Python's email
// package, an independent RFC 5322 parser standing in for Gmail's; the same lists with a
// line break or a NUL put anywhere must be refused.
import Foundation
import Testing
@testable import HudsonMail

/// SplitMix64: a small, fast generator whose sequence a seed fixes.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// HUDSON_TEST_SEED, else a fixed seed: the run is the same every time unless asked.
    static var testSeed: UInt64 {
        ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 3_720_211
    }
}

/// Address lists as people and mail programs write them, with what each must parse to.
enum AddressListGenerator {
    static let atext = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~")

    static func local(_ random: inout SeededGenerator) -> String {
        let atoms = (0..<Int.random(in: 1...3, using: &random)).map { _ in
            String((0..<Int.random(in: 1...8, using: &random)).map { _ in
                Bool.random(using: &random) ? "abcdefghij0123456789".randomElement(using: &random)! : atext.randomElement(using: &random)!
            })
        }
        return atoms.joined(separator: ".")
    }

    static func domain(_ random: inout SeededGenerator) -> String {
        ["example.org", "example.net", "mail.example.com", "xn--bcher-kva.example", "a-b.c-d.example", "x1.io"]
            .randomElement(using: &random)!
    }

    /// A display name as written and as read.
    static func name(_ random: inout SeededGenerator) -> (written: String, read: String) {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: return ("Ada Lovelace", "Ada Lovelace")
        case 1: return ("J. R. Smith", "J. R. Smith")
        case 2: return ("\"Doe, John\"", "Doe, John")
        case 3: return ("\"a;b:c <d> @e (f)\"", "a;b:c <d> @e (f)")
        case 4: return ("\"with \\\"quotes\\\" and \\\\ slash\"", "with \"quotes\" and \\ slash")
        case 5: return ("Zoë Ünlü", "Zoë Ünlü")
        case 6: return ("=?UTF-8?Q?Gr=C3=BC=C3=9Fe?=", "Grüße")
        case 7: return ("=?UTF-8?B?" + Data("Müller, Jürgen".utf8).base64EncodedString() + "?=", "Müller, Jürgen")
        default: return ("日本 語  🙂", "日本 語 🙂")
        }
    }

    static func blanks(_ random: inout SeededGenerator) -> String {
        ["", " ", "  ", "\t", " \t "].randomElement(using: &random)!
    }

    static func mailbox(_ random: inout SeededGenerator) -> (written: String, expected: MailAddress) {
        let address = local(&random) + "@" + domain(&random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return (address, MailAddress(address: address))
        case 1: return ("<\(address)>", MailAddress(address: address))
        case 2: return ("\(address) (Ada (the first))", MailAddress(name: "Ada (the first)", address: address))
        default:
            let name = name(&random)
            return ("\(name.written)\(blanks(&random)) <\(address)>", MailAddress(name: name.read, address: address))
        }
    }

    static func list(_ random: inout SeededGenerator, count: ClosedRange<Int> = 1...5) -> (written: String, expected: [MailAddress]) {
        let boxes = (0..<Int.random(in: count, using: &random)).map { _ in mailbox(&random) }
        var written = blanks(&random)
        for (index, box) in boxes.enumerated() {
            if index > 0 { written += blanks(&random) + "," + blanks(&random) }
            written += box.written
        }
        return (written + blanks(&random), boxes.map(\.expected))
    }
}

/// Python's `email` (policy.default, RFC 5322 header parsing) over many header blocks at once.
enum PythonAddressOracle {
    static let available: Bool = PythonMIMEOracle.available

    /// For each header value, Python's (display name, address) pairs for `To`, or nil when
    /// it found a defect.
    static func read(_ values: [String]) throws -> [[[String]]?] {
        let input = try JSONSerialization.data(withJSONObject: values)
        let result = try PythonMIMEOracle.run(["-c", script], input: input)
        guard result.status == 0 else { throw PythonMIMEOracle.OracleFailure(output: String(decoding: result.output, as: UTF8.self)) }
        let decoded = try JSONSerialization.jsonObject(with: result.output) as? [Any] ?? []
        return decoded.map { $0 as? [[String]] }
    }

    static let script = #"""
import email, email.policy, json, sys
out = []
for value in json.load(sys.stdin):
    msg = email.message_from_bytes(("To: " + value + "\r\n\r\n").encode(), policy=email.policy.default)
    header = msg["To"]
    if header is None or header.defects:
        out.append(None)
    else:
        out.append([[a.display_name, a.addr_spec] for a in header.addresses])
print(json.dumps(out))
"""#
}

@Suite("OutgoingAddresses: the one strict rule for where outgoing mail goes")
struct OutgoingAddressesTests {
    func pairs(_ list: [MailAddress]) -> [[String]] { list.map { [$0.name, $0.address] } }

    /// The value of the To field HeaderField writes for `list`, unfolded.
    func rendered(_ list: [MailAddress]) -> String {
        let field = HeaderField.addresses("To", list)
        return String(field.dropFirst("To:".count)).replacingOccurrences(of: "\r\n", with: "").trimmingWhitespace()
    }

    @Test("generated lists parse to exactly what was written, render and read back the same, and read the same to Python")
    func generatedLists() throws {
        let seed = SeededGenerator.testSeed
        var random = SeededGenerator(seed: seed)
        var values: [String] = []
        var expected: [[MailAddress]] = []
        for _ in 0..<600 {
            let (written, addresses) = AddressListGenerator.list(&random)
            let parsed = try OutgoingAddresses.parse(written)
            #expect(parsed == addresses, "seed \(seed): \(written.debugDescription)")
            let header = rendered(parsed)
            let reread = try OutgoingHeaderBlock.envelope(of: Array("To: \(header)\r\n\r\n".utf8)).to
            #expect(reread == parsed, "seed \(seed): \(written.debugDescription) rendered \(header.debugDescription)")
            values.append(header)
            expected.append(parsed)
        }
        guard PythonAddressOracle.available else { return }
        let python = try PythonAddressOracle.read(values)
        for (index, read) in python.enumerated() {
            #expect(read == pairs(expected[index]), "seed \(seed): Python reads \(values[index].debugDescription) otherwise")
        }
    }

    @Test("a line break, NUL or other control anywhere in a generated list is refused")
    func injectedControls() {
        let seed = SeededGenerator.testSeed
        var random = SeededGenerator(seed: seed &+ 1)
        let breaks = ["\r\n", "\n", "\r", "\0", "\u{2028}", "\u{1B}", "\u{7F}", "\u{85}"]
        for _ in 0..<400 {
            let (written, _) = AddressListGenerator.list(&random)
            let scalars = Array(written.unicodeScalars)
            let at = Int.random(in: 0...scalars.count, using: &random)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[..<at])
            let bad = breaks.randomElement(using: &random)!
            view.append(contentsOf: (bad + "Bcc: eve@example.net").unicodeScalars)
            view.append(contentsOf: scalars[at...])
            let injected = String(view)
            #expect(throws: OutgoingAddressError.self, "seed \(seed): \(injected.debugDescription)") {
                try OutgoingAddresses.parse(injected)
            }
        }
    }

    @Test("adversarial strings of specials: refused, or addresses that were written, that render and read back the same")
    func adversarialStrings() throws {
        let seed = SeededGenerator.testSeed
        var random = SeededGenerator(seed: seed &+ 2)
        let pieces = ["a", "b@x.org", "eve@evil.example", "@", ",", ";", ":", "<", ">", "\"", "\\", "(", ")", " ", ".", "=?UTF-8?Q?",
                      "?=", "=2C", "Bcc", "[", "]", "ü", "xn--", "\t"]
        var values: [String] = []
        var accepted: [[MailAddress]] = []
        for _ in 0..<3000 {
            let text = (0..<Int.random(in: 1...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            guard let parsed = try? OutgoingAddresses.parse(text) else { continue }
            for address in parsed {
                #expect(text.contains(address.address) && OutgoingAddresses.isSendable(address.address), "seed \(seed): \(text.debugDescription)")
            }
            #expect(parsed.count <= text.filter { $0 == "@" }.count, "seed \(seed): \(text.debugDescription)")
            guard !parsed.isEmpty else { continue }
            let header = rendered(parsed)
            #expect(try OutgoingHeaderBlock.envelope(of: Array("To: \(header)\r\n\r\n".utf8)).to == parsed,
                    "seed \(seed): \(text.debugDescription)")
            values.append(header)
            accepted.append(parsed)
        }
        #expect(!accepted.isEmpty, "seed \(seed): the generator produced nothing the parser accepts")
        guard PythonAddressOracle.available, !values.isEmpty else { return }
        for (index, read) in try PythonAddressOracle.read(values).enumerated() {
            #expect(read == pairs(accepted[index]), "seed \(seed): Python reads \(values[index].debugDescription) otherwise")
        }
    }

    @Test("the reported case: a line break that makes a group of the operand, and its neighbours")
    func lineBreakGroup() {
        for text in ["ada@example.org\r\nBcc: eve@example.net", "ada@example.org\nBcc: eve@example.net",
                     "ada@example.org\rBcc: eve@example.net", "ada@example.org\0Bcc: eve@example.net"] {
            #expect(throws: OutgoingAddressError.self) { try OutgoingAddresses.parse(text) }
        }
        // Lenient reading (for display) still makes eve of it: the reason recipients never go through it.
        #expect(MailAddress.parseList("ada@example.org\r\nBcc: eve@example.net").map(\.address) == ["eve@example.net"])
        #expect(throws: OutgoingAddressError.self) { try OutgoingAddresses.parse("ada@example.org Bcc: eve@example.net") }
        #expect(throws: OutgoingAddressError.group(name: "friends")) { try OutgoingAddresses.parse("friends: a@x.org, b@y.org;") }
        #expect(throws: OutgoingAddressError.group(name: "Bcc")) { try OutgoingAddresses.parse("Bcc: eve@example.net") }
    }

    @Test("neighbours: empty groups, empty elements, <>, blanks only, routes, literals, quoted and non-ASCII addresses")
    func neighbours() throws {
        #expect(try OutgoingAddresses.parse("undisclosed-recipients:;") == [])
        #expect(try OutgoingAddresses.parse("a@x.org, undisclosed-recipients: ;") == [MailAddress(address: "a@x.org")])
        #expect(try OutgoingAddresses.parse("") == [] && OutgoingAddresses.parse(" \t ") == [])
        for text in ["a@x.org,,b@y.org", "a@x.org,", ",a@x.org", "a@x.org, ,b@y.org"] {
            #expect(throws: OutgoingAddressError.emptyElement, "\(text)") { try OutgoingAddresses.parse(text) }
        }
        #expect(throws: OutgoingAddressError.emptyAddress) { try OutgoingAddresses.parse("<>") }
        #expect(throws: OutgoingAddressError.emptyAddress) { try OutgoingAddresses.parse("Ada <>") }
        for text in ["<@route.example:ada@x.org>", "ada@[127.0.0.1]", "\"a b\"@x.org", "ada @ x.org", "ada@ x.org", "ada@x.org@y.org",
                     "ceo@bank.example <thief@evil.example>", "ada", "Ada Lovelace", "ada@localhost", "ada@-x.org", "ada@x..org",
                     ".ada@x.org", "ada.@x.org", "a..b@x.org", "<ada@x.org", "ada@x.org>", "\"open", "(open", "a@x.org)",
                     "a@x.org; b@y.org", String(repeating: "a", count: 65) + "@x.org"] {
            #expect(throws: OutgoingAddressError.self, "\(text)") { try OutgoingAddresses.parse(text) }
        }
        for text in ["zoë@example.org", "ada@例え.jp", "ada@bücher.example"] {
            #expect(throws: OutgoingAddressError.notASCII(text.split(separator: " ").last.map(String.init)!), "\(text)") {
                try OutgoingAddresses.parse(text)
            }
        }
        #expect(try OutgoingAddresses.parse("ada@xn--r8jz45g.jp") == [MailAddress(address: "ada@xn--r8jz45g.jp")])
        #expect(try OutgoingAddresses.parse("\"ceo@bank.example\" <thief@evil.example>")
                == [MailAddress(name: "ceo@bank.example", address: "thief@evil.example")])
        // An encoded word that decodes to a line break is a control in the name.
        #expect(throws: OutgoingAddressError.controlCharacter("\r")) {
            try OutgoingAddresses.parse("=?UTF-8?Q?a=0D=0ABcc=3A_eve=40x=2Eorg?= <a@x.org>")
        }
        #expect(try OutgoingAddresses.parse("(Ada) ada@x.org") == [MailAddress(name: "Ada", address: "ada@x.org")])
        #expect(try OutgoingAddresses.parse("Ada <ada@x.org> (work)") == [MailAddress(name: "Ada", address: "ada@x.org")])
    }

    @Test("a very long list is read whole, in order, in bounded time")
    func longList() throws {
        let addresses = (0..<5000).map { MailAddress(name: $0 % 2 == 0 ? "Person \($0)" : "", address: "p\($0)@example.org") }
        let text = addresses.map { $0.name.isEmpty ? $0.address : "\"\($0.name)\" <\($0.address)>" }.joined(separator: ", ")
        #expect(try OutgoingAddresses.parse(text) == addresses)
    }

    @Test("header blocks: a second To, NUL, a line that is no field, a blank line, blanks before a colon are refused")
    func headerBlocks() throws {
        func envelope(_ text: String) throws(OutgoingMessageError) -> OutgoingEnvelope {
            try RawMessage.envelope(Array(text.utf8))
        }
        #expect(try envelope("From: Ann <ann@example.com>\nTo: b@x.org\nCc: \"Doe, J\" <j@y.org>\nBcc: c@z.org\n\nbody\nTo: eve@x.org\n")
                == OutgoingEnvelope(from: MailAddress(name: "Ann", address: "ann@example.com"), to: [MailAddress(address: "b@x.org")],
                                    cc: [MailAddress(name: "Doe, J", address: "j@y.org")], bcc: [MailAddress(address: "c@z.org")]))
        #expect(try envelope("To: undisclosed-recipients:;\nBcc: c@z.org\n\n").recipients == [MailAddress(address: "c@z.org")])
        #expect(try envelope("To: a@x.org,\n b@y.org\n\n").to.map(\.address) == ["a@x.org", "b@y.org"])
        #expect(throws: OutgoingMessageError.repeated("To")) { try envelope("To: a@x.org\nTo: eve@x.org\n\n") }
        #expect(throws: OutgoingMessageError.repeated("Bcc")) { try envelope("Bcc: a@x.org\nbcc: eve@x.org\n\n") }
        #expect(throws: OutgoingMessageError.repeated("Message-ID")) { try envelope("To: a@x.org\nMessage-ID: <a@b>\nMessage-Id: <c@d>\n\n") }
        #expect(throws: OutgoingMessageError.nul(line: 2)) { try envelope("To: a@x.org\nSubject: a\0b\n\n") }
        #expect(throws: OutgoingMessageError.notAField(line: 2)) { try envelope("To: a@x.org\nnot a field\nBcc: eve@x.org\n\n") }
        #expect(throws: OutgoingMessageError.notAField(line: 1)) { try envelope(" To: a@x.org\n\n") }
        #expect(throws: OutgoingMessageError.notAField(line: 1)) { try envelope("From a@x.org Thu Jan  1 00:00:00 2026\nTo: a@x.org\n\n") }
        #expect(throws: OutgoingMessageError.blankLine(line: 2)) { try envelope("To: a@x.org\n \nBcc: eve@x.org\n\n") }
        #expect(throws: OutgoingMessageError.blankBeforeColon(line: 1)) { try envelope("To : eve@x.org\n\n") }
        #expect(throws: OutgoingMessageError.severalSenders) { try envelope("From: a@x.org, b@y.org\nTo: c@z.org\n\n") }
        #expect(throws: OutgoingMessageError.field(name: "Cc", value: "friends: eve@x.org;", .group(name: "friends"))) {
            try envelope("To: a@x.org\nCc: friends: eve@x.org;\n\n")
        }
    }

    @Test("a sendmail Bcc added to a message that has one is merged into one field; the envelope is read from the result")
    func bccMerged() throws {
        let given = "To: bob@example.org\r\nBcc: carol@example.net,\r\n erin@example.net\r\nSubject: s\r\nMessage-ID: <a@b.c>\r\nDate: x\r\n\r\nbody\r\n"
        let prepared = try RawMessage.prepare(Array(given.utf8), date: "unused", bcc: [MailAddress(address: "dan@example.com")]) { "" }
        let text = String(decoding: prepared.raw, as: UTF8.self)
        #expect(text == "Bcc: carol@example.net, erin@example.net, dan@example.com\r\nTo: bob@example.org\r\nSubject: s\r\nMessage-ID: <a@b.c>\r\nDate: x\r\n\r\nbody\r\n",
                "\(text)")
        #expect(prepared.bcc.map(\.address) == ["carol@example.net", "erin@example.net", "dan@example.com"])
        #expect(throws: OutgoingMessageError.self) {
            try RawMessage.prepare(Array("To: a@x.org\r\nTo: eve@x.org\r\n\r\n".utf8), date: "d") { "<n@x>" }
        }
    }

    @Test("reply to all reads the original's fields strictly and names the one it refuses")
    func replyAllStrict() throws {
        let hostile = OriginalHeaders(from: "Mallory <mallory@evil.example>", to: "ann@example.com",
                                      cc: "ann@example.com, Bcc: eve@evil.example", replyTo: "")
        #expect(throws: OutgoingMessageError.field(name: "Cc", value: "ann@example.com, Bcc: eve@evil.example", .group(name: "Bcc"))) {
            try ReplyForward.replyAll(hostile, own: ["ann@example.com"])
        }
        let tricky = OriginalHeaders(from: "\"ceo@bank.example\" <thief@evil.example>", to: "ann@example.com")
        #expect(try ReplyForward.replyAll(tricky, own: ["ann@example.com"]).to.map(\.address) == ["thief@evil.example"])
    }
}
