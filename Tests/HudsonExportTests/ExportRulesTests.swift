// The rules of hd-export's Maildir and tag file (issue 24 §2), one by one.
@testable import HudsonExport
import Testing

@Suite("Maildir names, X-Keywords, notmuch batch lines, the export state")
struct ExportRulesTests {
    @Test("flags: D draft, F starred, S read, T trash, in ASCII order")
    func flags() {
        #expect(MaildirNames.flags(["INBOX", "UNREAD"]) == "")
        #expect(MaildirNames.flags(["INBOX"]) == "S")
        #expect(MaildirNames.flags(["STARRED", "TRASH", "DRAFT"]) == "DFST")
        #expect(MaildirNames.fileName(gmailID: "abc", internalDate: 1_700_000_000_123, labels: ["STARRED", "UNREAD"])
                == "1700000000.hudson-abc:2,F")
        #expect(MaildirNames.uniquePart(of: "1700000000.hudson-abc:2,FS") == "1700000000.hudson-abc")
        #expect(MaildirNames.uniquePart(of: "1700000000.M1P2.host:2,S") == nil)
        #expect(MaildirNames.isUsableID("19eb94f191a0fd54") && !MaildirNames.isUsableID("../x") && !MaildirNames.isUsableID(""))
    }

    @Test("tags are lieer's names for system labels, the name for user labels, without control characters")
    func tags() {
        let names = ["Label_1": "Travel/2026", "Label_2": "bad\u{1B}[31mname"]
        #expect(MaildirNames.tag(labelID: "STARRED", names: names) == "flagged")
        #expect(MaildirNames.tag(labelID: "CATEGORY_PROMOTIONS", names: names) == "promotions")
        #expect(MaildirNames.tag(labelID: "Label_1", names: names) == "Travel/2026")
        #expect(MaildirNames.tag(labelID: "Label_2", names: names) == "bad [31mname")
    }

    @Test("X-Keywords is folded, uses the source's line ending, and comes off again exactly")
    func keywords() {
        let tags = (1...20).map { "label number \($0)" } + ["a,b"]
        let header = MaildirNames.keywordsHeader(tags, newline: [13, 10])
        let text = String(decoding: header, as: UTF8.self)
        #expect(text.hasPrefix("X-Keywords: label number 1,") && text.hasSuffix("a b\r\n"))
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        let source = Array("From: a@example.org\r\nX-Keywords: theirs\r\n\r\nbody\r\n".utf8)
        #expect(MaildirNames.strippingKeywords(header + source) == source)
        #expect(MaildirNames.strippingKeywords(source) == source)
        // No tags still gets the header: a source that starts with its own X-Keywords keeps it.
        #expect(MaildirNames.keywordsHeader([], newline: [10]) == Array("X-Keywords:\n".utf8))
        let theirs = Array("X-Keywords: theirs\nFrom: a@example.org\n\nbody\n".utf8)
        #expect(MaildirNames.strippingKeywords(MaildirNames.keywordsHeader([], newline: [10]) + theirs) == theirs)
        #expect(MaildirNames.newline(of: source) == [13, 10] && MaildirNames.newline(of: Array("a\nb".utf8)) == [10])
    }

    @Test("a source whose first lines start with a space keeps them when the header comes off (a relabel rewrites it)")
    func keywordsBeforeLinesThatLookFolded() {
        for tags in [[], ["inbox"], (1...20).map { "label number \($0)" }] {
            for newline: [UInt8] in [[10], [13, 10]] {
                let source = Array(" looks folded\(newline == [10] ? "\n" : "\r\n")\tand this\(newline == [10] ? "\n" : "\r\n")Subject: x\n\nbody".utf8)
                let header = MaildirNames.keywordsHeader(tags, newline: newline)
                #expect(MaildirNames.strippingKeywords(header + source) == source, "\(tags.count) tags, \(newline)")
            }
        }
    }

    @Test("a batch line sets the message's tags, clears the others, hex-encodes tags and quotes the id")
    func batchLine() {
        let line = NotmuchBatch.line(messageID: "we\"ird id@x", tags: ["inbox", "Travel/2026"], managed: ["inbox", "unread", "Travel/2026", "Work Stuff"])
        #expect(line == "+Travel%2f2026 +inbox -Work%20Stuff -unread -- id:\"we\"\"ird id@x\"\n")
        #expect(NotmuchBatch.messageID(" <abc@x> ") == "abc@x")
        #expect(NotmuchBatch.messageID("") == nil && NotmuchBatch.messageID(nil) == nil)
        // A line break of any kind would split the tag file's line: no id then.
        for broken in ["<a\nb@x>", "<a\rb@x>", "<a\u{85}b@x>", "<a\u{2028}b@x>", "<a\u{0}b@x>", "<a\u{1B}b@x>"] {
            #expect(NotmuchBatch.messageID(broken) == nil, "\(broken.debugDescription)")
        }
    }

    @Test("a Message-ID is read as notmuch 0.37 reads it (each shape's id checked with notmuch new)")
    func messageIDAsNotmuchReadsIt() {
        let shapes: [(String, String?)] = [
            ("(gateway) <cmt-1@host>", "cmt-1@host"),
            ("   <spaced@host>   ", "spaced@host"),
            ("<a b@host>", "ab@host"),
            ("<a\tb@host>", "ab@host"),
            ("no-brackets@host", "no-brackets@host"),
            ("  no-brackets2@host  ", "no-brackets2@host"),
            ("<( c ) inner@host>", "inner@host"),
            ("(a (nested \\) one)) <n@host>", "n@host"),
            ("text before <x@host> <y@host>", "x@host"),
            ("<unterminated@host", "unterminated@host"),
            ("(only comment)", "(only comment)"),
            ("<>", "<>"),
            ("<x>", "<x>"),
            ("<xy>", "xy"),
            ("   ", nil),
        ]
        for (header, id) in shapes {
            #expect(NotmuchBatch.messageID(header) == id, "\(header.debugDescription)")
        }
    }

    @Test("the state round-trips and refuses what is not one")
    func state() {
        var state = ExportState(format: .maildir, email: "ann@example.com")
        state.seq = 42
        state.entries["a1"] = .init(status: .live, path: "cur/1.hudson-a1:2,S")
        state.entries["b2"] = .init(status: .kept, path: "cur/2.hudson-b2:2,")
        state.failed = ["c3"]
        #expect(ExportState(parsing: state.bytes) == state)
        #expect(ExportState(parsing: Array("not a state\n".utf8)) == nil)
        #expect(ExportState(parsing: Array("hudson-export 1\nformat maildir\n".utf8)) == nil)
    }
}
