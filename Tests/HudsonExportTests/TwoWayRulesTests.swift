// The rules of the two-way export (issue 39), one by one: flags to triage, the state's
// two-way lines, notmuch's dump lines and ids.
@testable import HudsonExport
import HudsonStore
import Testing

@Suite("Two-way export rules: flags read back, state lines, notmuch ids and dumps")
struct TwoWayRulesTests {
    @Test("S, F and T read back as read/unread, star/unstar, trash/untrash; other flags never")
    func flagActions() {
        #expect(MaildirReadBack.actions(from: "cur/1.hudson-a:2,", to: "cur/1.hudson-a:2,FS") == [.read, .star])
        #expect(MaildirReadBack.actions(from: "cur/1.hudson-a:2,FST", to: "cur/1.hudson-a:2,") == [.untrash, .unread, .unstar])
        #expect(MaildirReadBack.actions(from: "cur/1.hudson-a:2,S", to: "cur/1.hudson-a:2,PRSabc").isEmpty)
        #expect(MaildirReadBack.actions(from: "cur/1.hudson-a:2,S", to: "cur/1.hudson-a:2,DS").isEmpty, "D (draft) is Gmail's")
        #expect(MaildirReadBack.info(of: "new/1.hudson-a") == nil)
        #expect(MaildirReadBack.info(of: "cur/1.hudson-a:2,FS") == "FS")
    }

    @Test("one group per action, trash first, messages sorted; the description counts them")
    func groups() {
        var readBack = MaildirReadBack()
        readBack.actions = ["b": [.read], "a": [.read, .star], "c": [.trash], "d": [.addLabel("Work")]]
        #expect(readBack.groups.map(\.actions) == [[.trash], [.read], [.star], [.addLabel("Work")]])
        #expect(readBack.groups[1].references == [.message("a"), .message("b")])
        #expect(readBack.description == "hd-export: trash 1, read 2, star 1, +Work 1")
    }

    @Test("the two-way lines round-trip; lines naming paths outside the export or out of order are refused")
    func state() {
        var state = ExportState(format: .maildir, email: "ann@example.com")
        state.entries["a1"] = .init(status: .live, path: "cur/1.hudson-a1:2,S")
        state.twoWay = .notmuch
        state.exportID = String(repeating: "ab", count: 16)
        state.intake = 3
        state.pendingIntake = 4
        state.pendingBaseline = ["a1": "cur/1.hudson-a1:2,FS", "b2": nil]
        state.writingAhead = ["a1": "cur/1.hudson-a1:2,F"]
        state.removedByClient = ["c3"]
        state.relabelAgain = ["d4"]
        state.scanned = .init(cur: 12, new: 34)
        state.notmuchUUID = "0b8e-uuid"
        state.notmuchRevision = 77
        state.pendingRevision = 80
        state.notmuchSHA1 = ["e5": String(repeating: "0", count: 40)]
        #expect(ExportState(parsing: state.bytes) == state)
        let base = String(decoding: state.bytes, as: UTF8.self)
        for bad in ["B a1 ../../victim\n", "P a1 cur/../../x\n", "intake-pending 9\n", "two-way sideways\n", "H a1 xyz\n",
                    "export-id 12\n", "scanned 1\n", "notmuch uuid -1\n"] {
            #expect(ExportState(parsing: Array((base + bad).utf8)) == nil, "\(bad)")
        }
        var mbox = ExportState(format: .mbox, email: "ann@example.com")
        mbox.twoWay = .maildir
        mbox.exportID = state.exportID
        #expect(ExportState(parsing: mbox.bytes) == nil, "only a Maildir is two-way")
    }

    @Test("SHA-1 as notmuch computes it for a message without Message-ID (FIPS 180 vectors)")
    func sha1() {
        #expect(NotmuchSHA1.hex([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(NotmuchSHA1.hex(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(NotmuchSHA1.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("notmuch dump's batch-tag lines: tags and ids %-decoded; other lines ignored")
    func dump() {
        let parsed = NotmuchTags.parseDump(Array("+inbox +Travel%2f2026 +a%20b -- id:x%40y\n#@ garbage\n -- id:none\n".utf8))
        #expect(parsed.count == 2)
        #expect(parsed[0].id == "x@y" && parsed[0].tags == ["inbox", "Travel/2026", "a b"])
        #expect(parsed[1].id == "none" && parsed[1].tags.isEmpty)
    }

    @Test("the tags written in X-Keywords are read back exactly, folded or not")
    func keywords() {
        let tags = ["inbox", "unread", "Travel/2026", "a very long label name that has to be folded somewhere", "x"]
        let file = MaildirNames.keywordsHeader(tags, newline: [13, 10]) + Array("From: a\r\n\r\nbody\r\n".utf8)
        #expect(MaildirNames.tagsWritten(file) == Set(tags))
        #expect(MaildirNames.tagsWritten(Array("From: a\n\nbody\n".utf8)).isEmpty)
    }

    @Test("the unique part and the state's path rule, on bytes, say what the String versions said")
    func uniqueParts() {
        #expect(MaildirNames.uniquePart(of: "1700.hudson-a1:2,FS") == "1700.hudson-a1")
        #expect(MaildirNames.uniquePart(of: "1700.hudson-a1") == "1700.hudson-a1")
        #expect(MaildirNames.uniquePart(of: ":1700.hudson-a1:2,S") == "1700.hudson-a1", "leading colons are skipped, as split did")
        #expect(MaildirNames.uniquePart(of: "x:2,.hudson-") == "x", "the marker anywhere in the name")
        #expect(MaildirNames.uniquePart(of: "1700.mbsync-a1:2,S") == nil)
        #expect(MaildirNames.uniquePart(of: "") == nil && MaildirNames.uniquePart(of: ":::") == nil)
        #expect(ExportState.isPath("cur/1700.hudson-a1:2,S", of: "a1", in: .maildir))
        #expect(ExportState.isPath("new/1700.hudson-a1", of: "a1", in: .maildir))
        #expect(!ExportState.isPath("cur/1700.hudson-a1:2,S", of: "b1", in: .maildir))
        #expect(!ExportState.isPath("tmp/1700.hudson-a1:2,S", of: "a1", in: .maildir))
        #expect(!ExportState.isPath("cur/x/1700.hudson-a1", of: "a1", in: .maildir))
        #expect(!ExportState.isPath("cur/1700.hudson-a1:2,S\u{1B}", of: "a1", in: .maildir))
        #expect(!ExportState.isPath("cur/", of: "a1", in: .maildir) && !ExportState.isPath("cur", of: "a1", in: .maildir))
        #expect(!ExportState.isPath("cur/1700.hudson-xa1", of: "a1", in: .maildir), "the whole .hudson-ID suffix, as hasSuffix was")
        #expect(!ExportState.isPath("cur/hudson-a1", of: "a1", in: .maildir))
        #expect(ExportState.isPath("cur/1.hudson-a1", of: "a1", in: .maildir))
    }

    @Test("entries are checked against the format they are read under: a format line comes once, and an entry before it is checked at the end")
    func entriesAgainstTheirFormat() {
        let header = "hudson-export 1\naccount ann@example.com\nseq 1\nmbox-size 0\n"
        let eml = "M a1 2024/05/a1.eml\n", maildir = "M a1 cur/1700.hudson-a1:2,S\n"
        #expect(ExportState(parsing: Array((header + "format maildir\n" + maildir).utf8))?.entries["a1"]?.path == "cur/1700.hudson-a1:2,S")
        #expect(ExportState(parsing: Array((header + maildir + "format maildir\n").utf8)) != nil, "an entry before the format line")
        #expect(ExportState(parsing: Array((header + eml + "format maildir\n").utf8)) == nil, "an .eml path in a Maildir, read before the format")
        #expect(ExportState(parsing: Array((header + "format eml\n" + eml + "format maildir\n").utf8)) == nil, "a second format line")
        #expect(ExportState(parsing: Array((header + "format maildir\n" + "M a1 cur/1700.hudson-b1:2,S\n").utf8)) == nil, "another message's name")
    }
}
