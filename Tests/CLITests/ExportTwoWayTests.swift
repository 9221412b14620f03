// hd-export --two-way (issue 39): what a Maildir client changes (flags by renaming, a file
// removed) is read back, queued as one triage action and pushed to the project's fake
// Gmail by hd-sync; what Gmail changes reaches the flags; collisions; kill -9 at each step.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-export --two-way against the fake Gmail", .serialized)
struct ExportTwoWayTests {
    /// A demo mailbox synced whole with sources kept, exported two-way.
    func exported() throws -> (CLIFixture, FakeGmail, String) {
        let f = CLIFixture()
        let fake = try fixedFake()
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-auth", "set", fake.email, "keep-raw", "on").status == 0)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        let out = f.dir.path("Mail")
        let first = try f.run("hd-export", "--two-way", out)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        return (f, fake, out)
    }

    /// Maildir file names (cur/ and new/, relative) by Gmail id.
    func maildir(_ path: String) -> [String: String] {
        var names: [String: String] = [:]
        for directory in ["cur", "new"] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path + "/" + directory)) ?? [] {
                let id = String(name.split(separator: ":")[0].components(separatedBy: ".hudson-")[1])
                #expect(names[id] == nil, "two files for \(id)")
                names[id] = directory + "/" + name
            }
        }
        return names
    }

    func flags(_ relative: String) -> String { relative.components(separatedBy: ":2,").dropFirst().first ?? "" }

    /// Renames a message's file to these flags, as a Maildir client does.
    func setFlags(_ out: String, _ relative: String, _ flags: String) throws -> String {
        let base = String(relative.split(separator: ":")[0])
        let renamed = base + ":2," + String(Set(flags).sorted())
        if renamed != relative { try FileManager.default.moveItem(atPath: out + "/" + relative, toPath: out + "/" + renamed) }
        return renamed
    }

    /// Gmail ids of messages the store holds, with the fake's labels.
    func stored(_ f: CLIFixture, _ fake: FakeGmail) throws -> [String: Set<String>] {
        let ids = Set(try f.run("hd-search", "--messages", "--ids", "-n", "100000", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
        return try fake.messages().filter { ids.contains($0.key) }.mapValues(\.labels)
    }

    func actionCount(_ f: CLIFixture) throws -> Int {
        try f.run("hd-undo", "--list", "--json", "-n", "1000").lines.count
    }

    @Test("flags a client changes and a file it removes reach Gmail as one undoable action; no flip-flop after")
    func clientChangesReachGmail() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try stored(f, fake)
        let inbox = gmail.filter { $0.value.contains("INBOX") && !$0.value.contains("TRASH") && !$0.value.contains("SPAM") }
        let unread = try #require(inbox.keys.sorted().first { inbox[$0]!.contains("UNREAD") && !inbox[$0]!.contains("STARRED") })
        let read = try #require(inbox.keys.sorted().first { !inbox[$0]!.contains("UNREAD") && $0 != unread })
        let removed = try #require(inbox.keys.sorted().first { $0 != unread && $0 != read })
        let replied = try #require(inbox.keys.sorted().first { $0 != unread && $0 != read && $0 != removed })
        var files = maildir(out)
        _ = try setFlags(out, files[unread]!, flags(files[unread]!) + "SF")
        _ = try setFlags(out, files[read]!, flags(files[read]!).filter { $0 != "S" })
        try FileManager.default.removeItem(atPath: out + "/" + files[removed]!)
        // R (replied) has no Gmail meaning: never read back, and kept in the name.
        _ = try setFlags(out, files[replied]!, flags(files[replied]!) + "R")
        let actionsBefore = try actionCount(f)

        let second = try f.run("hd-export", out)
        #expect(second.status == 0, "\(second)")
        #expect(second.stderr.hasPrefix("hd-export: action "), "\(second)")
        #expect(second.stderr.contains("5 change(s) read back"), "-UNREAD +STARRED, +UNREAD, +TRASH -INBOX: \(second)")
        #expect(try actionCount(f) == actionsBefore + 1, "one action per run")
        files = maildir(out)
        #expect(flags(files[unread]!) == "FS")
        #expect(!flags(files[read]!).contains("S"))
        #expect(files[removed] == nil, "a file the client removed is not written again while in the trash")
        #expect(flags(files[replied]!).contains("R"))

        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        let after = try fake.messages()
        #expect(!after[unread]!.labels.contains("UNREAD") && after[unread]!.labels.contains("STARRED"))
        #expect(after[read]!.labels.contains("UNREAD"))
        #expect(after[removed]!.labels.contains("TRASH"))
        #expect(after[replied]!.labels == gmail[replied]!, "a flag with no Gmail meaning changes nothing")

        // Server truth came back through sync: the next runs read nothing back and change nothing.
        for _ in 0..<2 {
            let again = try f.run("hd-export", out)
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
            #expect(maildir(out) == files)
        }
        #expect(try actionCount(f) == actionsBefore + 1)
    }

    @Test("hd-undo of a read-back puts Gmail back and the file comes back")
    func undoReadBack() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try stored(f, fake)
        let removed = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains("TRASH") })
        try FileManager.default.removeItem(atPath: out + "/" + maildir(out)[removed]!)
        let second = try f.run("hd-export", out)
        let actionID = try #require(second.stderr.split(separator: " ").dropFirst(2).first.map { String($0.dropLast()) })
        #expect(maildir(out)[removed] == nil)
        #expect(try f.run("hd-undo", "--no-flush", actionID).status == 0)
        let third = try f.run("hd-export", out)
        #expect(third.status == 0 && third.stderr.isEmpty, "\(third)")
        #expect(maildir(out)[removed] != nil, "out of the trash: written again")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try fake.messages()[removed]!.labels == gmail[removed]!)
    }

    @Test("labels changed at Gmail reach the flags, and are not read back as the client's")
    func gmailChangesReachFlags() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try stored(f, fake)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH") })
        try fake.modify(id, add: ["STARRED"], remove: ["UNREAD"])
        #expect(try f.run("hd-sync").status == 0)
        let actionsBefore = try actionCount(f)
        let second = try f.run("hd-export", out)
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second)")
        #expect(flags(maildir(out)[id]!) == "FS")
        let third = try f.run("hd-export", out)
        #expect(third.stderr.isEmpty && third.stdout.contains(" 0 relabelled"), "\(third)")
        #expect(try actionCount(f) == actionsBefore)
        #expect(try fake.messages()[id]!.labels == gmail[id]!.union(["STARRED"]).subtracting(["UNREAD"]))
    }

    @Test("both sides changed one message: the client's change is queued, Gmail's kept, nothing flips back")
    func collisions() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try stored(f, fake)
        let candidates = gmail.keys.sorted().filter { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH") }
        #expect(candidates.count >= 2)
        let (both, same) = (candidates[0], candidates[1])
        let files = maildir(out)
        // Client reads `both` while Gmail stars it; client and Gmail both read `same`.
        _ = try setFlags(out, files[both]!, flags(files[both]!) + "S")
        _ = try setFlags(out, files[same]!, flags(files[same]!) + "S")
        try fake.modify(both, add: ["STARRED"])
        try fake.modify(same, remove: ["UNREAD"])
        #expect(try f.run("hd-sync").status == 0)
        let second = try f.run("hd-export", out)
        #expect(second.status == 0 && second.stderr.contains("1 change(s) read back"), "only `both` needs a change: \(second)")
        #expect(flags(maildir(out)[both]!) == "FS")
        #expect(flags(maildir(out)[same]!) == "S")
        #expect(try f.run("hd-sync").status == 0)
        let after = try fake.messages()
        #expect(after[both]!.labels == gmail[both]!.union(["STARRED"]).subtracting(["UNREAD"]))
        #expect(after[same]!.labels == gmail[same]!.subtracting(["UNREAD"]))
        // Gmail marks `both` unread again later: server truth wins at the next sync, and the
        // export's rename to it is not read back as the client's.
        try fake.modify(both, add: ["UNREAD"])
        #expect(try f.run("hd-sync").status == 0)
        let actionsBefore = try actionCount(f)
        for _ in 0..<2 {
            let run = try f.run("hd-export", out)
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
        }
        #expect(flags(maildir(out)[both]!) == "F")
        #expect(try actionCount(f) == actionsBefore)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try fake.messages()[both]!.labels.contains("UNREAD"))
    }

    @Test("--dry-run prints what would be queued as hd-mark --dry-run does, and changes nothing")
    func dryRun() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let gmail = try stored(f, fake)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("TRASH") })
        let before = maildir(out)
        _ = try setFlags(out, before[id]!, flags(before[id]!) + "S")
        let state = try exportStateText(out + "/.hudson-export")
        let planned = try f.run("hd-export", "--dry-run", out)
        let mark = try f.run("hd-mark", "--dry-run", "read", "message:\(id)")
        #expect(planned.status == 0 && planned.stdout == mark.stdout && !planned.stdout.isEmpty, "\(planned)\n\(mark)")
        #expect(try exportStateText(out + "/.hudson-export") == state)
        #expect(try actionCount(f) == 0)
        let oneWay = CLIFixture()
        let refused = try oneWay.run("hd-export", "--dry-run", oneWay.dir.path("none"))
        #expect(refused.status != 0 && refused.stderr.hasPrefix("hd-export: ") && refused.stderr.split(separator: "\n").count == 1, "\(refused)")
        // --one-way: nothing is read back from then on.
        let off = try f.run("hd-export", "--one-way", out)
        #expect(off.status == 0 && off.stderr.isEmpty, "\(off)")
        #expect(try actionCount(f) == 0)
    }

    @Test("kill -9 at each step of a read-back: no client change lost, none queued twice, the export's own renames never read back")
    func killed() throws {
        for point in ["read-back-saved", "read-back-queued", "batch-written"] {
            let (f, fake, out) = try exported()
            defer { withExtendedLifetime(fake) {} }
            let gmail = try stored(f, fake)
            let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH") })
            let files = maildir(out)
            _ = try setFlags(out, files[id]!, flags(files[id]!) + "S")
            // Gmail stars it meanwhile: the killed run's relabel gives the file F, which the
            // client never set.
            try fake.modify(id, add: ["STARRED"])
            #expect(try f.run("hd-sync").status == 0)
            let crashed = try f.run("hd-export", out, environment: ["HUDSON_TEST_CRASH_AT": point])
            #expect(crashed.status == 137 || crashed.status == -9 || crashed.status == 9, "\(point): \(crashed)")
            // Gmail unstars it before the next run: a rename the killed run made must not
            // come back as the client starring it.
            try fake.modify(id, remove: ["STARRED"])
            #expect(try f.run("hd-sync").status == 0)
            // Once the read-back is committed, the user marks it unread again: queueing the
            // client's read a second time would undo that later intent.
            let committed = point != "read-back-saved"
            if committed { #expect(try f.run("hd-mark", "unread", "message:\(id)").status == 0) }
            let rerun = try f.run("hd-export", out)
            #expect(rerun.status == 0, "\(point): \(rerun)")
            let again = try f.run("hd-export", out)
            #expect(again.status == 0 && again.stderr.isEmpty, "\(point): \(again)")
            let actions = try f.run("hd-undo", "--list", "--json", "-n", "1000").lines
            #expect(actions.count == (committed ? 2 : 1), "\(point): one read-back, queued once: \(actions)")
            #expect(try f.run("hd-sync").status == 0)
            let labels = try fake.messages()[id]!.labels
            #expect(labels.contains("UNREAD") == committed, "\(point): the client's read reached Gmail once")
            #expect(!labels.contains("STARRED"), "\(point): Gmail's unstar stands")
            #expect(flags(maildir(out)[id]!) == (committed ? "" : "S"), "\(point)")
        }
    }

    @Test("an idle run reads nothing: while cur/ and new/ keep the times recorded before the last read, no file is looked at")
    func idleRunReadsNothing() throws {
        let (f, fake, out) = try exported()
        defer { withExtendedLifetime(fake) {} }
        let settled = Date(timeIntervalSinceNow: -3_600)
        for directory in ["cur", "new"] {
            try FileManager.default.setAttributes([.modificationDate: settled], ofItemAtPath: out + "/" + directory)
        }
        let recorded = try f.run("hd-export", out)
        #expect(recorded.status == 0 && recorded.stderr.isEmpty, "\(recorded)")
        #expect(try exportStateText(out + "/.hudson-export").contains("\nscanned \(Int64(settled.timeIntervalSince1970))"),
                "times older than two seconds are recorded")
        let gmail = try stored(f, fake)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("TRASH") })
        let files = maildir(out)
        _ = try setFlags(out, files[id]!, flags(files[id]!) + "S")
        // The rename with cur/'s time put back: the run does not look (the proof it reads nothing).
        try FileManager.default.setAttributes([.modificationDate: settled], ofItemAtPath: out + "/cur")
        let idle = try f.run("hd-export", out)
        #expect(idle.status == 0 && idle.stderr.isEmpty, "\(idle)")
        // As a rename leaves it: a new time, and the change is read back.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: out + "/cur")
        let read = try f.run("hd-export", out)
        #expect(read.status == 0 && read.stderr.contains("1 change(s) read back"), "\(read)")
    }
}
