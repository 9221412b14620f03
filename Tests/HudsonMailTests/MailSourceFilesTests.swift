// What hd-import reads (issue 37 §2, §3): a source judged by its start (an mbox, one
// message, empty, or not mail), an mbox's last message cut short, a From_ line in a body,
// and files opened the one way (InputFiles): regular files only, never waiting on a FIFO,
// symbolic links kept inside the tree the user gave, a directory walked once.
import Glibc
import HudsonMail
import Testing

@Suite("Mail sources: what a source is, truncation, and files opened the one way")
struct MailSourceFilesTests {
    /// A fresh directory, removed at the end of the test.
    final class Scratch {
        let path = "/tmp/hudson-mailfiles-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        init() { mkdir(path, 0o700) }
        deinit { _ = system("rm -rf '\(path)'") }
        func write(_ name: String, _ text: String) {
            let file = fopen(path + "/" + name, "w")
            fputs(text, file)
            fclose(file)
        }
        func mkdirs(_ name: String) { _ = system("mkdir -p '\(path)/\(name)'") }
    }

    func split(_ text: String, chunk: Int = 5) throws -> (messages: [String], truncation: String?, discarded: Int) {
        var splitter = MboxSplitter()
        var out: [String] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try splitter.feed(bytes[start..<min(start + chunk, bytes.count)]) { out.append(String(decoding: $0, as: UTF8.self)) }
        }
        try splitter.finish { out.append(String(decoding: $0, as: UTF8.self)) }
        return (out, splitter.lastTruncation, splitter.discardedLines)
    }

    /// Every message (origin=first line) and every error (ERR kind) the reader gives, in order.
    func readAll(_ paths: [String], stdin: Int32 = 0, base: String = "") -> [String] {
        let reader = MailSourceReader(paths: paths, standardInput: stdin)
        var seen: [String] = []
        for _ in 0..<1000 {
            do {
                guard let message = try reader.next() else { return seen }
                let first = String(decoding: message.raw.prefix { $0 != 10 }, as: UTF8.self)
                seen.append(String(message.origin.dropFirst(base.count)) + "=" + first
                            + (message.defect.map { " [\($0)]" } ?? ""))
            } catch let error as MailSourceError {
                seen.append("ERR \(error.kind) " + String(error.path.dropFirst(error.path.hasPrefix(base) ? base.count : 0)))
            } catch {
                seen.append("ERR \(error)")
            }
        }
        return seen
    }

    @Test("a source is an mbox, one message, empty, or not mail, by its start")
    func content() {
        func judge(_ text: String) -> MailSources.Content { MailSources.content(startingWith: Array(text.utf8)) }
        #expect(judge("") == .empty)
        #expect(judge("\n\r\n") == .empty)
        #expect(judge("From a@b Tue Jan  2 10:00:00 2018\nSubject: x\n\ny\n") == .mbox)
        #expect(judge("\n\nFrom a@b Tue\nSubject: x\n") == .mbox)
        #expect(judge("From: a@x\nSubject: s\n\nb\n") == .message)
        #expect(judge("Subject: only headers\n") == .message)
        #expect(judge("Received: from x\r\n\tby y\r\nSubject: z\r\n\r\nbody") == .message)
        #expect(judge("hello world\n") == .notMail)
        #expect(judge("\nSubject: a blank line first\n\nx") == .notMail)
        #expect(judge(": no name\n") == .notMail)
        #expect(judge("Sub\u{0}ject: x\n\ny") == .notMail)
        #expect(judge("Subject: x\nX-Bin: a\u{0}b\n\nbody") == .notMail)
        #expect(judge("Subject: x\n\nbody with \u{0} NUL") == .message)
        #expect(MailSources.content(startingWith: [0xFF, 0xFE, 0x00, 0x01, 0x80]) == .notMail)
        // The shape of a header is not enough: a field a message has must be there.
        #expect(judge("key: value\n") == .notMail)
        #expect(judge("root:x:0:0:root:/root:/bin/bash\nbin:x:2:2:bin:/bin:/usr/sbin/nologin\n") == .notMail)
        #expect(judge("Content-Type: text/plain\nX-Mailer: m\n\nbody\n") == .notMail)
        #expect(judge("X-Mailer: m\nMESSAGE-ID: <a@b>\n\nbody\n") == .message)
        #expect(judge("Delivered-To: a@x\nReceived: by 10.0.0.1\n\nbody\n") == .message)
        #expect(judge("MIME-Version: 1.0\n\nbody\n") == .message)
    }

    @Test("a From_ line in a body that is not followed by a header stays in the body (mboxo)")
    func fromLineInBody() throws {
        let mbox = "From a Tue\nSubject: one\n\nDear all,\n\nFrom the minutes of Tuesday:\nnothing.\n\nFrom b Tue\nSubject: two\n\nz\n\n"
        for chunk in [1, 4, 100] {
            let result = try split(mbox, chunk: chunk)
            #expect(result.messages == ["Subject: one\n\nDear all,\n\nFrom the minutes of Tuesday:\nnothing.\n",
                                        "Subject: two\n\nz\n"], "chunk \(chunk)")
            #expect(result.truncation == nil && result.discarded == 0)
        }
        // Not after an empty line, or quoted: text either way.
        #expect(try split("From a\nS: 1\n\nx\nFrom y\n>From z\n\n").messages == ["S: 1\n\nx\nFrom y\nFrom z\n"])
        // Text before the first message is counted, not silently lost.
        #expect(try split("From nobody\nnot a header\n\nFrom a\nS: 1\n\nx\n\n").discarded == 2)
    }

    @Test("the last message of an mbox cut short is marked: inside a line, inside its header, before its close delimiter, after its From_ line")
    func truncation() throws {
        let whole = "From a\nSubject: one\n\nbody\n\n"
        #expect(try split(whole).truncation == nil)
        #expect(try split("From a\nSubject: one\n\nbody\n").truncation == nil)   // no trailing separator line
        #expect(try split("From a\nSubject: only headers\n\n").truncation == nil)
        #expect(try split("From a\nSubject: one\n\nbo").truncation == "the file ends inside a line")
        #expect(try split("From a\nSubject: one\nTo: x@y\n").truncation == "the file ends inside its header")
        let multipart = "From a\nSubject: m\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nhi\n"
        #expect(try split(multipart).truncation == "its multipart body has no closing delimiter line")
        #expect(try split(multipart + "--B--\n\n").truncation == nil)
        let dangling = try split(whole + "From b Tue Jan  2 10:00:00 2018\n")
        #expect(dangling.messages == ["Subject: one\n\nbody\n", ""] && dangling.truncation == "the file ends just after its From_ line")
        // CRLF mbox.
        let crlf = try split("From a\r\nSubject: one\r\n\r\nbody\r\n\r\nFrom b\r\nSubject: two\r\n\r\nx\r\n\r\n")
        #expect(crlf.messages == ["Subject: one\r\n\r\nbody\r\n", "Subject: two\r\n\r\nx\r\n"] && crlf.truncation == nil)
    }

    @Test("standard input: one message, an mbox, empty, or refused as not mail")
    func standardInput() throws {
        func viaPipe(_ text: [UInt8]) -> [String] {
            var fds: [Int32] = [0, 0]
            pipe(&fds)
            _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
            close(fds[1])
            defer { close(fds[0]) }
            return readAll(["-"], stdin: fds[0])
        }
        #expect(viaPipe(Array("From: a@x\nSubject: s\n\nb\n".utf8)) == ["-=From: a@x"])
        #expect(viaPipe(Array("From a Tue\nSubject: s\n\nb\n\nFrom b Tue\nSubject: t\n\nc\n".utf8)) == ["-:1=Subject: s", "-:2=Subject: t"])
        #expect(viaPipe([]) == [])
        #expect(viaPipe(Array("hello\n".utf8)) == ["ERR notMail standard input"])
        #expect(viaPipe([0, 1, 2, 255, 10]) == ["ERR notMail standard input"])
        // An mbox whose messages are all cut short: marked, not dropped.
        #expect(viaPipe(Array("From a Tue\nSubject: s\n\nb".utf8)) == ["-:1=Subject: s [truncated: the mbox ends inside this message (the file ends inside a line)]"])
    }

    @Test("files: a FIFO or a device is refused at once, never read; a file too large is refused")
    func notRegularFiles() throws {
        let dir = Scratch()
        #expect(mkfifo(dir.path + "/fifo", 0o600) == 0)
        dir.write("m.eml", "Subject: ok\n\nx\n")
        // A FIFO with no writer: an open without O_NONBLOCK would wait for ever here.
        #expect(throws: InputFileError.self) { _ = try InputFiles.readRegular(dir.path + "/fifo", limit: 100, what: "100 bytes") }
        do {
            _ = try InputFiles.readRegular(dir.path + "/fifo", limit: 100, what: "100 bytes")
        } catch {
            #expect(error.kind == .notRegularFile && error.reason == "a FIFO, not a regular file")
        }
        do {
            _ = try InputFiles.readRegular("/dev/zero", limit: 100, what: "100 bytes")
            Issue.record("/dev/zero was read")
        } catch {
            #expect(error.kind == .notRegularFile && error.reason == "a character device, not a regular file")
        }
        do {
            _ = try InputFiles.readRegular(dir.path + "/m.eml", limit: 4, what: "4 bytes")
            Issue.record("a file over the limit was read")
        } catch {
            #expect(error.kind == .tooLarge && error.reason == "larger than 4 bytes")
        }
        do {
            _ = try InputFiles.readRegular(dir.path + "/none", limit: 4, what: "4 bytes")
        } catch {
            #expect(error.kind == .missing)
        }
        #expect(try InputFiles.readRegular(dir.path + "/m.eml", limit: 100, what: "100 bytes") == Array("Subject: ok\n\nx\n".utf8))
        #expect(readAll([dir.path + "/fifo", "/dev/zero", dir.path + "/m.eml"], base: dir.path)
                == ["ERR notRegularFile /fifo", "ERR notRegularFile /dev/zero", "/m.eml=Subject: ok"])
    }

    @Test("trees: links out of the tree refused, links inside followed, a link back up walked once, FIFOs named like mail refused")
    func trees() throws {
        let dir = Scratch()
        dir.mkdirs("t/sub")
        dir.mkdirs("outside")
        dir.write("outside/secret.eml", "Subject: secret\n\nx\n")
        dir.write("t/a.eml", "Subject: a\n\nx\n")
        dir.write("t/sub/b.eml", "Subject: b\n\nx\n")
        dir.write("t/notes.txt", "not mail\n")
        dir.write("t/c.eml", "this is not a message\n")
        symlink("/etc/passwd", dir.path + "/t/passwd.eml")
        symlink(dir.path + "/outside/secret.eml", dir.path + "/t/s.eml")
        symlink(dir.path + "/outside", dir.path + "/t/out")
        symlink("sub/b.eml", dir.path + "/t/d.eml")          // inside: followed
        symlink("..", dir.path + "/t/sub/up")                 // a loop back up the tree
        symlink("nowhere.eml", dir.path + "/t/e.eml")         // dangling
        mkfifo(dir.path + "/t/f.eml", 0o600)
        symlink("/etc/passwd", dir.path + "/t/z.txt")         // not mail by name: ignored
        let seen = readAll([dir.path + "/t"], base: dir.path)
        #expect(seen == ["/t/a.eml=Subject: a", "ERR notMail /t/c.eml", "/t/d.eml=Subject: b", "ERR unreadable /t/e.eml",
                         "ERR notRegularFile /t/f.eml", "ERR outsideTree /t/out", "ERR outsideTree /t/passwd.eml",
                         "ERR outsideTree /t/s.eml", "/t/sub/b.eml=Subject: b"], "\(seen)")
        // A Maildir whose cur/ is a link out of the tree takes nothing out with it.
        dir.mkdirs("md/new")
        dir.mkdirs("elsewhere")
        dir.write("elsewhere/1:2,S", "Subject: elsewhere\n\nx\n")
        symlink(dir.path + "/elsewhere", dir.path + "/md/cur")
        dir.write("md/new/2", "Subject: new\n\nx\n")
        #expect(readAll([dir.path + "/md"], base: dir.path) == ["ERR outsideTree /md/cur/1:2,S", "/md/new/2=Subject: new"])
        // The user names a link: what it names is the source, and its tree the tree (so
        // sub/up, a link to t, is now out of it).
        symlink(dir.path + "/t/sub", dir.path + "/named")
        #expect(readAll([dir.path + "/named"], base: dir.path) == ["/named/b.eml=Subject: b", "ERR outsideTree /named/up"])
    }

    @Test("a Message-ID added at the top, in the message's line ends, after a From_ line")
    func addedMessageID() {
        let id = ImportLabels.addedMessageID(digestHex: "ab12")
        #expect(id == "<ab12@import.hudson.invalid>")
        #expect(String(decoding: ImportLabels.addingMessageID(id, to: Array("Subject: x\n\nb\n".utf8)), as: UTF8.self)
                == "Message-ID: <ab12@import.hudson.invalid>\nSubject: x\n\nb\n")
        #expect(String(decoding: ImportLabels.addingMessageID(id, to: Array("Subject: x\r\n\r\nb\r\n".utf8)), as: UTF8.self)
                == "Message-ID: <ab12@import.hudson.invalid>\r\nSubject: x\r\n\r\nb\r\n")
        #expect(String(decoding: ImportLabels.addingMessageID(id, to: Array("From a Tue\nSubject: x\n".utf8)), as: UTF8.self)
                == "From a Tue\nMessage-ID: <ab12@import.hudson.invalid>\nSubject: x\n")
        #expect(RFC822.looksLikeMessage(ImportLabels.addingMessageID(id, to: Array("Subject: x".utf8))))
    }
}
