// hd-export --two-way (issue 39) under clients that give a file a new unique name when they
// move it (mu4e's mu4e-change-filenames-when-moving, mbsync's ,U= part): the file is found
// by what the export wrote into it, and its flags read back as for a rename — never a
// removal, which would trash the message at Gmail.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-export --two-way: files a client renamed to a new unique name", .serialized)
struct ExportTwoWayRenameTests {
    let twoWay = ExportTwoWayTests()

    /// Every file of cur/ and new/ (relative), by the Gmail id its X-Hudson-Id names (or its Hudson name).
    func files(_ out: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for directory in ["cur", "new"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: out + "/" + directory)) ?? [] {
                let relative = directory + "/" + name
                let text = (try? String(contentsOfFile: out + "/" + relative, encoding: .utf8)) ?? ""
                let header = text.split(separator: "\n").first { $0.hasPrefix("X-Hudson-Id: ") }
                if let id = header?.split(separator: " ").dropFirst().first {
                    result[String(id), default: []].append(relative)
                } else if name.contains(".hudson-") {
                    result[String(name.split(separator: ":")[0].components(separatedBy: ".hudson-")[1]), default: []].append(relative)
                } else {
                    result["?", default: []].append(relative)
                }
            }
        }
        return result
    }

    nonisolated(unsafe) static var counter = 0

    /// A new unique name as mu4e or mbsync gives one (`<time>.<pid>_<n>.<host>,U=<uid>`), with these flags.
    func clientName(_ directory: String, _ flags: String?) -> String {
        Self.counter += 1
        let base = "\(1_733_500_000 + Self.counter).M\(Self.counter)P4242.client,U=\(Self.counter)"
        return directory + "/" + base + (flags.map { ":2," + String(Set($0).sorted()) } ?? "")
    }

    func move(_ out: String, _ from: String, _ to: String) throws {
        try FileManager.default.moveItem(atPath: out + "/" + from, toPath: out + "/" + to)
    }

    func flags(_ relative: String) -> String { relative.components(separatedBy: ":2,").dropFirst().first ?? "" }

    @Test("renamed to new names (flags changed in the move, into cur/ or new/, copied): read back as flags, never as trash; a real removal still trashes")
    func renamedFilesAreNotRemovals() throws {
        let (f, fake, out) = try twoWay.exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try twoWay.stored(f, fake)
        let candidates = gmail.keys.sorted().filter {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH")
        }
        try #require(candidates.count >= 6, "\(candidates.count)")
        let (read, starred, toNew, copied, removed, forged) = (candidates[0], candidates[1], candidates[2], candidates[3], candidates[4], candidates[5])
        let before = files(out)
        #expect(before["?"] == nil && before.values.allSatisfy { $0.count == 1 })
        // mu4e marking read: new/ → cur/ under a new name with S.
        try move(out, before[read]![0], clientName("cur", flags(before[read]![0]) + "S"))
        // Read and starred in one move.
        try move(out, before[starred]![0], clientName("cur", flags(before[starred]![0]) + "SF"))
        // Moved back to new/ under a new name, no info: its flags say nothing.
        try move(out, before[toNew]![0], clientName("new", nil))
        // Copied: two files of one message, the original in place.
        try FileManager.default.copyItem(atPath: out + "/" + before[copied]![0], toPath: out + "/" + clientName("cur", "S"))
        try FileManager.default.removeItem(atPath: out + "/" + before[removed]![0])
        try FileManager.default.removeItem(atPath: out + "/" + before[forged]![0])
        // Files that are not the export's: one claiming the removed message with another export's id.
        try "X-Hudson-Id: \(forged) \(String(repeating: "0", count: 32))\nMessage-ID: <nobody@example.com>\nSubject: x\n\nbody\n"
            .write(toFile: out + "/" + clientName("cur", "S"), atomically: true, encoding: .utf8)
        try "From: stranger@example.com\nSubject: not ours\n\nbody\n".write(toFile: out + "/" + clientName("cur", ""), atomically: true, encoding: .utf8)
        // Gmail stars the message mu4e renamed, before the export runs: both changes stand.
        try fake.modify(read, add: ["STARRED"])
        #expect(try f.run("hd-sync").status == 0)
        let actionsBefore = try twoWay.actionCount(f)

        let second = try f.run("hd-export", out)
        #expect(second.status == 0, "\(second)")
        // read -UNREAD; starred -UNREAD +STARRED; removed and forged +TRASH -INBOX each.
        #expect(second.stderr.hasPrefix("hd-export: action ") && second.stderr.contains("7 change(s) read back"), "\(second)")
        #expect(try twoWay.actionCount(f) == actionsBefore + 1)
        #expect(try f.run("hd-sync").status == 0)
        let after = try fake.messages()
        #expect(after[read]!.labels == gmail[read]!.union(["STARRED"]).subtracting(["UNREAD"]), "a rename with S is a read, not a trash")
        #expect(after[starred]!.labels == gmail[starred]!.union(["STARRED"]).subtracting(["UNREAD"]))
        #expect(after[toNew]!.labels == gmail[toNew]!, "moved to new/ without info: no change")
        #expect(after[copied]!.labels == gmail[copied]!, "a copy changes nothing")
        #expect(after[removed]!.labels.contains("TRASH"), "a real removal is still trash")
        #expect(after[forged]!.labels.contains("TRASH"), "another export's header does not name this export's message")
        for _ in 0..<2 {
            let again = try f.run("hd-export", out)
            #expect(again.status == 0 && again.stderr.isEmpty, "no flip-flop: \(again)")
        }
        #expect(try twoWay.actionCount(f) == actionsBefore + 1)
        let now = files(out)
        #expect(now[read]?.count == 1 && now[starred]?.count == 1 && now[toNew]?.count == 1, "\(now)")
        #expect(now[starred]?.first.map(flags) == "FS")
        #expect(now[read]?.first.map(flags) == "FS", "written again under Gmail's star, once")
        #expect(now[copied]?.count == 2, "the copy is left alone")
        #expect(now[removed] == nil)
    }

    @Test("a renamed file whose content a client altered, and one an older export wrote (no X-Hudson-Id), are found; Gmail's later change relabels the renamed file")
    func alteredAndOlderFiles() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try twoWay.stored(f, fake)
        let candidates = gmail.keys.sorted().filter {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH")
        }
        let before = files(out)
        let withMessageID = candidates.filter { id in
            ((try? String(contentsOfFile: out + "/" + before[id]![0], encoding: .utf8)) ?? "").lowercased().contains("\nmessage-id:")
        }
        try #require(candidates.count >= 3 && !withMessageID.isEmpty)
        let altered = candidates.first { $0 != withMessageID[0] }!, older = withMessageID[0]
        let unholdable = candidates.first { $0 != altered && $0 != older }!
        // Renamed under a name the state cannot hold (a control character): still there, so no change at all.
        let unique = before[unholdable]![0].split(separator: ":")[0]
        try move(out, before[unholdable]![0], unique + ":2,S\n\u{1B}[2J")
        // Altered: a header added under the export's, a line added to the body, renamed with S.
        var text = try String(contentsOfFile: out + "/" + before[altered]![0], encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let own = (lines.firstIndex { $0.hasPrefix("X-Hudson-Id: ") } ?? 0) + 1
        text = (lines.prefix(own) + ["X-Label: seen-on-phone"] + lines.dropFirst(own)).joined(separator: "\n") + "a line the client added\n"
        try text.write(toFile: out + "/" + clientName("cur", "S"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: out + "/" + before[altered]![0])
        // Older: as a version without X-Hudson-Id wrote it; found by its Message-ID.
        let old = try String(contentsOfFile: out + "/" + before[older]![0], encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("X-Hudson-Id: ") }.joined(separator: "\n")
        try old.write(toFile: out + "/" + clientName("cur", "S"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: out + "/" + before[older]![0])

        let second = try f.run("hd-export", out)
        #expect(second.status == 0 && second.stderr.contains("2 change(s) read back"), "two reads, no trash: \(second)")
        #expect(try f.run("hd-sync").status == 0)
        var after = try fake.messages()
        for id in [altered, older] {
            #expect(!after[id]!.labels.contains("UNREAD") && !after[id]!.labels.contains("TRASH"), "\(id)")
        }
        #expect(after[unholdable]!.labels == gmail[unholdable]!, "a file still there is not trash, whatever its name")
        // The export adopted the client's names; Gmail stars both: each is written again, once.
        try fake.modify(altered, add: ["STARRED"])
        try fake.modify(older, add: ["STARRED"])
        #expect(try f.run("hd-sync").status == 0)
        let third = try f.run("hd-export", out)
        #expect(third.status == 0 && third.stderr.isEmpty, "\(third)")
        let now = files(out)
        #expect(now[altered]?.count == 1 && flags(now[altered]![0]) == "FS", "\(now)")
        #expect(now[older]?.count == 1 && flags(now[older]![0]) == "FS", "\(now)")
        let rewritten = try String(contentsOfFile: out + "/" + (try #require(now[altered]?.first)), encoding: .utf8)
        #expect(rewritten.contains("a line the client added") && rewritten.contains("X-Label: seen-on-phone"), "the client's content is kept")
        #expect(try f.run("hd-export", out).stderr.isEmpty)
        after = try fake.messages()
        #expect(after[altered]!.labels.contains("STARRED") && !after[altered]!.labels.contains("TRASH"))
    }

    /// A directory's modification time, to set back after a rename: the rename then looks
    /// to the export as if it came after its read-back began.
    func mtime(_ path: String) throws -> timespec {
        var info = stat()
        try #require(stat(path, &info) == 0)
        return info.st_mtim
    }

    func setMtime(_ path: String, _ time: timespec?) throws {
        var times = [time ?? timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1 /* UTIME_NOW */), time ?? timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1 /* UTIME_NOW */)]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test("a file a client renames while a run writes it: that run leaves it, the next reads the client's change back and writes Gmail's, once")
    func renamedDuringRun() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try twoWay.stored(f, fake)
        let target = try #require(gmail.keys.sorted().first {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH")
        })
        // A run with nothing to do once the directories have settled records their times,
        // so the next run's read-back reads nothing unless they change.
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try f.run("hd-export", out).stderr.isEmpty)
        // Gmail stars the message: the next run renames its file (flag F).
        try fake.modify(target, add: ["STARRED"])
        #expect(try f.run("hd-sync").status == 0)
        // The client marks it read (a new name with S) just after that run's read-back: the
        // directories' times are as the read-back saw them.
        let before = try #require(files(out)[target]?.first)
        let (cur, new) = (try mtime(out + "/cur"), try mtime(out + "/new"))
        try move(out, before, clientName("cur", flags(before) + "S"))
        try setMtime(out + "/cur", cur)
        try setMtime(out + "/new", new)

        let during = try f.run("hd-export", out)
        #expect(during.status == 0 && during.stderr.isEmpty, "nothing read back, nothing written over the client's file: \(during)")
        let state = try exportStateText(out + "/.hudson-export")
        #expect(state.contains("\nR \(target)\n"), "written again next run: \(state)")
        #expect(files(out)[target]?.count == 1 && flags(files(out)[target]![0]) == flags(before) + "S", "\(files(out))")

        // The rename's own time, as it would have been had it come during the run.
        try setMtime(out + "/cur", nil)
        let next = try f.run("hd-export", out)
        #expect(next.status == 0 && next.stderr.contains("1 change(s) read back"), "the client's read: \(next)")
        let now = files(out)
        #expect(now[target]?.count == 1 && now[target].map { flags($0[0]) } == "FS", "Gmail's star and the client's read, in one file: \(now)")
        #expect(try !exportStateText(out + "/.hudson-export").contains("\nR \(target)\n"))
        #expect(try f.run("hd-sync").status == 0)
        let after = try fake.messages()
        #expect(after[target]!.labels == gmail[target]!.union(["STARRED"]).subtracting(["UNREAD"]), "\(after[target]!.labels)")
        for _ in 0..<2 {
            let again = try f.run("hd-export", out)
            #expect(again.status == 0 && again.stderr.isEmpty, "no flip-flop: \(again)")
        }
    }

    func exported() throws -> (CLIFixture, FakeGmail, String) { try twoWay.exported() }

    @Test("two Gmail messages with one Message-ID (a message sent to oneself), both files renamed by a client and without X-Hudson-Id: neither is read back as trash")
    func sharedMessageIDRenamed() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let raw = "From: Alex <\(fake.email)>\r\nTo: Alex <\(fake.email)>\r\nSubject: a note to myself\r\n"
            + "Date: Thu, 01 Jan 2026 09:00:00 +0000\r\nMessage-ID: <note-to-self@example.org>\r\n\r\nRemember the milk.\r\n"
        var ids: [String] = []
        for labels in [["INBOX", "UNREAD"], ["SENT"]] {
            let answer = try #require(try fake.admin("POST", "insert", ["raw": raw, "labelIds": labels]) as? [String: Any])
            ids.append(try #require(answer["id"] as? String))
        }
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-export", out).status == 0)
        let before = files(out)
        for id in ids {
            // As an export older than X-Hudson-Id wrote it, then given a new name by the client.
            let path = try #require(before[id]?.first, "\(before)")
            let text = try String(contentsOfFile: out + "/" + path, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("X-Hudson-Id: ") }.joined(separator: "\n")
            try text.write(toFile: out + "/" + clientName("cur", "S"), atomically: true, encoding: .utf8)
            try FileManager.default.removeItem(atPath: out + "/" + path)
        }
        let run = try f.run("hd-export", out)
        #expect(run.status == 0, "\(run)")
        #expect(try f.run("hd-sync").status == 0)
        let labels = try fake.messages()
        for id in ids {
            #expect(!(labels[id]?.labels.contains("TRASH") ?? true), "\(id): \(String(describing: labels[id]))")
        }
    }

    @Test("--notmuch: a file renamed to a new name and indexed by notmuch new is one read, no tag churn")
    func notmuchRename() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try ExportNotmuchTests().setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try ExportNotmuchTests().stored(s)
        let id = try #require(gmail.keys.sorted().first {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && s.messageIDs[$0] != nil
        })
        let before = files(s.out)
        try move(s.out, before[id]![0], clientName("cur", flags(before[id]![0]) + "S"))
        // As a notmuch client does after moving files (synchronize_flags: S drops "unread").
        #expect(try s.notmuch("new", "--quiet").status == 0)
        let second = try s.export()
        #expect(second.status == 0 && second.stderr.contains("1 change(s) read back"), "only the read: \(second)")
        #expect(try s.f.run("hd-sync").status == 0)
        let after = try s.fake.messages()[id]!.labels
        #expect(after == gmail[id]!.subtracting(["UNREAD"]), "\(after)")
        for _ in 0..<2 {
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
        }
        let tags = try s.tags(id)
        #expect(tags.contains("inbox") && !tags.contains("unread"), "\(tags)")
    }
}
