// The readers and label rules hd-import uses (HudsonMail/MailSources.swift, ImportLabels.swift).
import Glibc
import HudsonMail
import Testing

@Suite("Mail sources: mbox splitting and unquoting, Maildir flags, import labels")
struct MailSourcesTests {
    func split(_ text: String, chunk: Int = 7) throws -> [String] {
        var splitter = MboxSplitter()
        var out: [String] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try splitter.feed(bytes[start..<min(start + chunk, bytes.count)]) { out.append(String(decoding: $0, as: UTF8.self)) }
        }
        try splitter.finish { out.append(String(decoding: $0, as: UTF8.self)) }
        return out
    }

    @Test("mboxrd: From_ lines start messages only after an empty line; one > comes off >From lines; the separator's blank line goes")
    func mboxrd() throws {
        let mbox = "From a@b Tue Jan  2 10:00:00 2018\nSubject: one\n\nline\n>From quoted\n>>From twice\n\n\n"
            + "From b@c Tue Jan  2 11:00:00 2018\nSubject: two\n\nText, then\nFrom inside a paragraph\n\n"
        for chunk in [1, 3, 7, 1000] {
            let messages = try split(mbox, chunk: chunk)
            #expect(messages == ["Subject: one\n\nline\nFrom quoted\n>From twice\n\n",
                                 "Subject: two\n\nText, then\nFrom inside a paragraph\n"], "chunk \(chunk)")
        }
        #expect(try split("") == [])
        #expect(try split("junk before\n\nFrom x\nA: b\n\nbody") == ["A: b\n\nbody"])
        #expect(try split("From x\r\nA: b\r\n\r\nbody\r\n\r\nFrom y\r\nC: d\r\n\r\nz\r\n") == ["A: b\r\n\r\nbody\r\n", "C: d\r\n\r\nz\r\n"])
    }

    @Test("a line longer than any message Gmail takes is not held whole: its message is too large, the next one whole")
    func overlongLine() throws {
        var splitter = MboxSplitter()
        var out: [[UInt8]] = []
        try splitter.feed(Array("From a\nSubject: one\n\nfine\n\nFrom b\nSubject: two\n\n".utf8)) { out.append($0) }
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<(MailSources.maximumMessageBytes / chunk.count + 8) {
            try splitter.feed(chunk) { out.append($0) }
        }
        try splitter.feed(Array("\n\nFrom c\nSubject: three\n\nwhole\n".utf8)) { out.append($0) }
        try splitter.finish { out.append($0) }
        #expect(out.map(\.count) == [out[0].count, 0, out[2].count], "\(out.map(\.count))")
        #expect(String(decoding: out[0], as: UTF8.self) == "Subject: one\n\nfine\n")
        #expect(String(decoding: out[2], as: UTF8.self) == "Subject: three\n\nwhole\n")
        // Before the first message, such a line is text that is not mail, and counted.
        var before = MboxSplitter()
        var got: [[UInt8]] = []
        for _ in 0..<(MailSources.maximumMessageBytes / chunk.count + 8) { try before.feed(chunk) { got.append($0) } }
        try before.feed(Array("\n\nFrom c\nSubject: three\n\nwhole\n".utf8)) { got.append($0) }
        try before.finish { got.append($0) }
        #expect(got.count == 1 && before.discardedLines == 1, "\(got.map(\.count)) \(before.discardedLines)")
    }

    @Test("Maildir flags are the letters after :2,")
    func maildirFlags() {
        #expect(MailSources.flags(ofMaildirName: "1700000000.M1P2.host:2,FS") == "FS")
        #expect(MailSources.flags(ofMaildirName: "1700000000.M1P2.host") == "")
        #expect(MailSources.flags(ofMaildirName: "1700000000.host:2,") == "")
        #expect(MailSources.flags(ofMaildirName: "a:2,b:2,RT") == "RT")
    }

    @Test("X-Gmail-Labels: quoted names, Takeout's system names, ignored names, encoded words")
    func takeoutLabels() {
        #expect(ImportLabels.splitList("Inbox,\"Trips, 2019\",  Work ,\"Say \"\"hi\"\"\"") == ["Inbox", "Trips, 2019", "Work", "Say \"hi\""])
        let raw = Array("X-Gmail-Labels: Archived,Opened,Unread,Category Updates,=?UTF-8?Q?Caf=C3=A9?=,work,Work,Draft\nMessage-ID: <a@b>\n\nx".utf8)
        let meta = ImportLabels.metadata(of: raw, maildirFlags: "S")
        #expect(meta == ImportMetadata(messageID: "<a@b>", systemLabels: ["UNREAD", "CATEGORY_UPDATES"], userLabels: ["Café", "work"]))
        #expect(ImportLabels.meaning(of: "\\Inbox") == .system("INBOX"))
        #expect(ImportLabels.meaning(of: "Sent Mail") == .system("SENT"))
        #expect(ImportLabels.meaning(of: "Chat") == .ignored)
        #expect(ImportLabels.meaning(of: "Travel/2026") == .user("Travel/2026"))
    }

    @Test("without X-Gmail-Labels: Maildir flags, mbox Status and X-Status; a Message-ID search cannot find is none")
    func flagsAndStatus() {
        let plain = Array("Subject: x\nMessage-ID: <not searchable>\n\nbody".utf8)
        #expect(ImportLabels.metadata(of: plain, maildirFlags: "").systemLabels == ["UNREAD"])
        #expect(ImportLabels.metadata(of: plain, maildirFlags: "FST").systemLabels == ["STARRED", "TRASH"])
        #expect(ImportLabels.metadata(of: plain, maildirFlags: nil)
                == ImportMetadata(messageID: nil, systemLabels: [], userLabels: [], writtenMessageID: "<not searchable>"))
        #expect(ImportLabels.metadata(of: Array("Subject: x\n\nbody".utf8), maildirFlags: nil).writtenMessageID == nil)
        let status = Array("Status: O\nX-Status: F\nX-Keywords: \\Inbox, Lists\n\nbody".utf8)
        #expect(ImportLabels.metadata(of: status, maildirFlags: nil).systemLabels == ["INBOX", "UNREAD", "STARRED"])
        #expect(ImportLabels.metadata(of: status, maildirFlags: nil).userLabels == ["Lists"])
        let read = Array("Status: RO\n\nbody".utf8)
        #expect(ImportLabels.metadata(of: read, maildirFlags: nil).systemLabels == [])
    }

    @Test("a reader goes through Maildir cur/ and new/ (not tmp/), .eml trees and mbox files in name order")
    func reader() throws {
        let base = "/tmp/hudson-mailsources-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = system("rm -rf '\(base)'") }
        for dir in ["md/cur", "md/new", "md/tmp", "tree/a"] { #expect(system("mkdir -p '\(base)/\(dir)'") == 0) }
        func write(_ path: String, _ text: String) {
            let file = fopen(base + "/" + path, "w")
            fputs(text, file)
            fclose(file)
        }
        write("md/cur/2:2,S", "To: 1\n\nx")
        write("md/new/1", "To: 2\n\nx")
        write("md/tmp/3", "To: 3\n\nx")
        write("tree/a/m.eml", "To: 4\n\nx")
        write("tree/readme.txt", "not mail")
        write("box", "From x\nTo: 5\n\nx\n\nFrom y\nTo: 6\n\ny\n")
        let reader = MailSourceReader(paths: [base + "/md", base + "/tree", base + "/box"])
        var seen: [String] = []
        while let message = try reader.next() {
            seen.append(String(message.origin.dropFirst(base.count + 1)) + "=" + String(decoding: message.raw, as: UTF8.self).prefix(5)
                        + (message.maildirFlags.map { "/" + $0 } ?? ""))
        }
        #expect(seen == ["md/cur/2:2,S=To: 1/S", "md/new/1=To: 2/", "tree/a/m.eml=To: 4", "box:1=To: 5", "box:2=To: 6"])
        let missing = MailSourceReader(paths: [base + "/nothing", base + "/box"])
        #expect(throws: MailSourceError.self) { _ = try missing.next() }
        #expect(try missing.next()?.origin == base + "/box:1")
    }
}
