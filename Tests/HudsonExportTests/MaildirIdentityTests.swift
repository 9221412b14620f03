// Which Gmail message a Maildir file a client renamed is (issue 39, MaildirIdentity): the
// export's X-Hudson-Id header, its stripping, the claim read from a header block, the names
// a client may give a file, and the state lines that record them.
@testable import HudsonExport
import HudsonTestSupport
import Testing

@Suite("Maildir identity: X-Hudson-Id, client names, the state's new lines")
struct MaildirIdentityTests {
    let exportID = String(repeating: "ab", count: 16)

    @Test("the export's headers strip back to the source exactly; a source's own X-Hudson-Id (another export's id) is kept")
    func strip() {
        let source = Array("From: a@example.com\r\nSubject: s\r\n\r\nbody\r\n".utf8)
        let written = MaildirIdentity.exportHeaders(tags: ["inbox", "a b"], gmailID: "18c0a1", exportID: exportID, newline: [13, 10]) + source
        #expect(MaildirIdentity.strippingExportHeaders(written, exportID: exportID) == source)
        #expect(MaildirNames.tagsWritten(written) == ["inbox", "a b"])
        let forged = Array("X-Hudson-Id: 18c0a1 \(String(repeating: "0", count: 32))\nSubject: s\n\nbody\n".utf8)
        let withForged = MaildirIdentity.exportHeaders(tags: [], gmailID: "18c0a1", exportID: exportID, newline: [10]) + forged
        #expect(MaildirIdentity.strippingExportHeaders(withForged, exportID: exportID) == forged)
        // A file written before the export was two-way: only X-Keywords above the source.
        let older = MaildirNames.keywordsHeader(["inbox"], newline: [10]) + forged
        #expect(MaildirIdentity.strippingExportHeaders(older, exportID: exportID) == forged, "a source's line right under X-Keywords is the source's")
        // One-way: no header, no export id.
        #expect(MaildirIdentity.exportHeaders(tags: ["inbox"], gmailID: "18c0a1", exportID: "", newline: [10]) == MaildirNames.keywordsHeader(["inbox"], newline: [10]))
    }

    @Test("a claim: the Gmail id only under this export's id; the Message-ID without brackets; folded and any case")
    func claim() {
        let mine = Array("X-Keywords: inbox\nx-hudson-id: 18c0a1\n \(exportID)\nMessage-ID:\n <m1@example.com>\n\nX-Hudson-Id: 99 \(exportID)\n".utf8)
        #expect(MaildirIdentity.claim(mine, exportID: exportID) == .init(gmailID: "18c0a1", messageID: "m1@example.com"))
        let other = Array("X-Hudson-Id: 18c0a1 \(String(repeating: "0", count: 32))\nSubject: x\n\n".utf8)
        #expect(MaildirIdentity.claim(other, exportID: exportID) == .init())
        let bad = Array("X-Hudson-Id: ../../victim \(exportID)\nX-Hudson-Id: \(exportID)\n\n".utf8)
        #expect(MaildirIdentity.claim(bad, exportID: exportID).gmailID == nil)
        #expect(MaildirIdentity.claim(mine, exportID: "").gmailID == nil, "a one-way export claims nothing by header")
        #expect(MaildirIdentity.claim([], exportID: exportID) == .init())
    }

    @Test("client names: plain names in cur/ or new/ only")
    func clientPaths() {
        #expect(MaildirIdentity.isClientPath("cur/1733500000.M1P2.host,U=7:2,S"))
        #expect(MaildirIdentity.isClientPath("new/1733500000.M1P2.host"))
        for bad in ["tmp/x", "cur/", "cur", "cur/.hidden", "cur/a/b", "cur/../x", "cur/a\u{1B}b", "x/cur/a", "cur/" + String(repeating: "x", count: 256)] {
            #expect(!MaildirIdentity.isClientPath(bad), "\(bad)")
        }
        #expect(MaildirIdentity.preferred(["new/b", "cur/c", "cur/a:2,S", "cur/b:2,"]) == "cur/a:2,S")
        #expect(MaildirIdentity.preferred(["new/b", "new/a"]) == "new/a")
    }

    @Test("the state: client names kept in a two-way export only; W lines round-trip; old states still read")
    func state() {
        var state = ExportState(format: .maildir, email: "ann@example.com")
        state.entries["a1"] = .init(status: .live, path: "cur/1.hudson-a1:2,S")
        let oneWay = state
        #expect(ExportState(parsing: oneWay.bytes) == oneWay, "a state as earlier versions wrote it")
        state.entries["b2"] = .init(status: .live, path: "cur/1733500000.M1P2.host,U=7:2,FS")
        #expect(ExportState(parsing: state.bytes) == nil, "a one-way export has no client names")
        state.twoWay = .notmuch
        state.exportID = exportID
        state.pendingIntake = 1
        state.pendingBaseline = ["a1": "new/client", "b2": nil]
        state.writingAhead = ["a1": "cur/1.hudson-a1:2,"]
        state.taggedBefore = ["a1": ["inbox", "a b", "x%y", "Ünï"], "b2": []]
        #expect(ExportState(parsing: state.bytes) == state)
        let base = String(decoding: state.bytes, as: UTF8.self)
        for bad in ["M c3 cur/.hidden\n", "M c3 tmp/x\n", "B c3 cur/a/b\n", "P c3 cur/client\n", "W ../x inbox\n", "W c3  x\n"] {
            #expect(ExportState(parsing: Array((base + bad).utf8)) == nil, "\(bad)")
        }
    }

    @Test("generated sources, tags and header blocks: the export's headers always strip back to the source; claims never crash and name only this export's ids")
    func generated() {
        let seed: UInt64 = 0x3939_1D
        var random = SeededRandom(state: seed)
        let pieces: [[UInt8]] = ["X-Keywords:", "X-Hudson-Id:", " ", "\t", ",", "\r\n", "\n", ":", "Message-ID:", "<a@b>", "\u{1B}", "é",
                                 exportID, "18c0a1", "\n\n", "\0"].map { Array($0.utf8) }
        for iteration in 0..<2_000 {
            var source: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) { source += pieces.randomElement(using: &random)! }
            // Tags as the export makes them from label names (controls become spaces).
            let tags = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                let name = String(decoding: (0..<Int.random(in: 1...30, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! }, as: UTF8.self)
                return MaildirNames.tag(labelID: "Label_1", names: ["Label_1": name])
            }
            let newline: [UInt8] = Bool.random(using: &random) ? [13, 10] : [10]
            let file = MaildirIdentity.exportHeaders(tags: tags, gmailID: "18c0a1", exportID: exportID, newline: newline) + source
            // A source starting with a fold or with this export's own line cannot come from Gmail's mail unchanged.
            if !(source.first == 0x20 || source.first == 0x09 || source.starts(with: Array("X-Hudson-Id:".utf8))) {
                #expect(MaildirIdentity.strippingExportHeaders(file, exportID: exportID) == source, "seed \(seed) iteration \(iteration): \(tags) \(source)")
            }
            let claim = MaildirIdentity.claim(file, exportID: exportID)
            #expect(claim.gmailID == nil || claim.gmailID == "18c0a1", "seed \(seed) iteration \(iteration)")
            _ = MaildirIdentity.claim(source, exportID: exportID)
        }
    }
}
