// hd-export --notmuch (issue 39) with the real notmuch: a kill -9 in the middle of a relabel
// loses no tag change a client makes before the next run, and a Gmail label whose name
// holds a comma round-trips through X-Keywords and notmuch's tags.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-export --notmuch: kill -9 during a relabel, labels with a comma", .serialized)
struct ExportNotmuchEdgeTests {
    let base = ExportNotmuchTests()

    /// The first message (by id) in the inbox, not starred, not in the trash, with a Message-ID:
    /// one Gmail can star so that the next export relabels it.
    func unstarredInboxMessage(_ gmail: [String: Set<String>], _ messageIDs: [String: String]) -> String? {
        gmail.keys.sorted().first {
            gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains("STARRED") && !gmail[$0]!.contains("TRASH") && messageIDs[$0] != nil
        }
    }

    func labelID(_ fake: FakeGmail, _ name: String) throws -> String {
        let labels = try #require(try fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
        return try #require(labels.first { $0["name"] as? String == name }?["id"] as? String)
    }

    @Test("kill -9 after a relabel's files are written (before or after notmuch is tagged): a tag change made before the next run is read back, once, and not undone")
    func killedRelabel() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        // The second point kills the next run too, as it saves the read-back pending.
        for (point, next) in [("notmuch-tagging", nil), ("batch-written", nil), ("notmuch-tagging", "read-back-saved")] as [(String, String?)] {
            let s = try base.setUp()
            defer { withExtendedLifetime(s.fake) {} }
            let gmail = try base.stored(s)
            let id = try #require(unstarredInboxMessage(gmail, s.messageIDs))
            // Gmail stars it: the next export relabels it (new flags, new X-Keywords), and is killed.
            try s.fake.modify(id, add: ["STARRED"])
            #expect(try s.f.run("hd-sync").status == 0)
            let crashed = try s.f.run("hd-export", s.out, environment: s.env.merging(["HUDSON_TEST_CRASH_AT": point]) { $1 })
            #expect(crashed.status == 137 || crashed.status == 9, "\(point): \(crashed)")
            // Between the killed run and the next, the user labels and archives it in notmuch.
            #expect(try s.notmuch("tag", "+Receipts", "-inbox", "--", "id:\(s.messageIDs[id]!)").status == 0)
            if let next {
                let killed = try s.f.run("hd-export", s.out, environment: s.env.merging(["HUDSON_TEST_CRASH_AT": next]) { $1 })
                #expect(killed.status == 137 || killed.status == 9, "\(point), \(next): \(killed)")
            }
            let rerun = try s.export()
            #expect(rerun.status == 0 && rerun.stderr.contains("2 change(s) read back"), "\(point): +Receipts -INBOX, nothing of the relabel: \(rerun)")
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "\(point): \(again)")
            #expect(try s.f.run("hd-sync").status == 0)
            let labels = try s.fake.messages()[id]!.labels
            #expect(labels == gmail[id]!.union(["STARRED", try labelID(s.fake, "Receipts")]).subtracting(["INBOX"]), "\(point): \(labels)")
            let tags = try s.tags(id)
            #expect(tags.isSuperset(of: ["Receipts", "flagged"]) && !tags.contains("inbox"), "\(point): notmuch keeps the user's change: \(tags)")
        }
    }

    @Test("two runs killed before notmuch is tagged: Gmail's relabel is not read back as the client's undoing it, and a tag change after them is read back alone")
    func twiceKilledBeforeTagging() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try base.setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try base.stored(s)
        let id = try #require(unstarredInboxMessage(gmail, s.messageIDs))
        try s.fake.modify(id, add: ["STARRED"])
        #expect(try s.f.run("hd-sync").status == 0)
        // The second run writes the file again (its X-Keywords already say flagged) and is
        // killed before tagging too: notmuch still has the tags from before the star.
        for run in 1...2 {
            let crashed = try s.f.run("hd-export", s.out, environment: s.env.merging(["HUDSON_TEST_CRASH_AT": "notmuch-tagging"]) { $1 })
            #expect(crashed.status == 137 || crashed.status == 9, "run \(run): \(crashed)")
        }
        #expect(try s.notmuch("tag", "+Receipts", "--", "id:\(s.messageIDs[id]!)").status == 0)
        let rerun = try s.export()
        #expect(rerun.status == 0 && rerun.stderr.contains("1 change(s) read back"), "+Receipts only: \(rerun)")
        #expect(try s.f.run("hd-sync").status == 0)
        let labels = try s.fake.messages()[id]!.labels
        #expect(labels == gmail[id]!.union(["STARRED", try labelID(s.fake, "Receipts")]), "Gmail's star stays: \(labels)")
        #expect(try s.tags(id).isSuperset(of: ["Receipts", "flagged"]))
    }

    @Test("kill -9 during the run that turns --notmuch on, before it tagged anything: tags notmuch gave by itself are not read back as the client's; later changes are")
    func killedFirstNotmuchRun() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try base.setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try base.stored(s)
        // Made one-way, then a new database (rebuilt from the files: notmuch's own tags only), then --notmuch again.
        #expect(try s.export("--one-way").status == 0)
        try FileManager.default.removeItem(atPath: s.out + "/.notmuch")
        #expect(try s.notmuch("new", "--quiet").status == 0)
        let crashed = try s.f.run("hd-export", "--notmuch", s.out, environment: s.env.merging(["HUDSON_TEST_CRASH_AT": "notmuch-tagging"]) { $1 })
        #expect(crashed.status == 137 || crashed.status == 9, "\(crashed)")
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains("TRASH") && s.messageIDs[$0] != nil })
        #expect(try s.notmuch("tag", "+attachment-seen", "--", "id:\(s.messageIDs[id]!)").status == 0)
        let rerun = try s.export()
        #expect(rerun.status == 0 && !rerun.stderr.contains("read back"), "notmuch's own tags are not the client's: \(rerun)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[id]!.labels == gmail[id]!)
        #expect(try s.tags(id).isSuperset(of: ["inbox", "attachment-seen"]), "tagged in full by the run that finished")
        // From then on, the client's changes are read back.
        #expect(try s.notmuch("tag", "-inbox", "--", "id:\(s.messageIDs[id]!)").status == 0)
        let archived = try s.export()
        #expect(archived.status == 0 && archived.stderr.contains("1 change(s) read back"), "\(archived)")
        let again = try s.export()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[id]!.labels == gmail[id]!.subtracting(["INBOX"]))
    }

    @Test("a database rebuilt under a --notmuch export (another UUID) is tagged again in full; its own tags are not read back as the client's")
    func rebuiltDatabase() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try base.setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try base.stored(s)
        try FileManager.default.removeItem(atPath: s.out + "/.notmuch")
        #expect(try s.notmuch("new", "--quiet").status == 0)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains("TRASH") && s.messageIDs[$0] != nil })
        #expect(try s.notmuch("tag", "+attachment-seen", "--", "id:\(s.messageIDs[id]!)").status == 0)
        let rerun = try s.export()
        #expect(rerun.status == 0 && rerun.stderr.isEmpty, "\(rerun)")
        #expect(try s.tags(id).isSuperset(of: ["inbox", "attachment-seen"]), "tagged again in full")
        #expect(try s.notmuch("tag", "+Receipts", "--", "id:\(s.messageIDs[id]!)").status == 0)
        let labelled = try s.export()
        #expect(labelled.status == 0 && labelled.stderr.contains("1 change(s) read back"), "only +Receipts: \(labelled)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[id]!.labels == gmail[id]!.union([try labelID(s.fake, "Receipts")]))
    }

    @Test("labels x,y and x y read the same in X-Keywords: ambiguous, never read back, and no other label changes")
    func ambiguousCommaLabels() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        var chosen = ""
        let s = try base.setUp { fake in
            try fake.admin("POST", "create-label", ["name": "x,y"])
            try fake.admin("POST", "create-label", ["name": "x y"])
            let messages = try fake.messages()
            chosen = try #require(messages.keys.sorted().first { messages[$0]!.labels.contains("INBOX") && !messages[$0]!.labels.contains("TRASH") })
            try fake.modify(chosen, add: ["x,y"])
        }
        defer { withExtendedLifetime(s.fake) {} }
        let header = try #require(s.messageIDs[chosen])
        let gmail = try base.stored(s)
        #expect(try s.notmuch("tag", "-x,y", "+x y", "-inbox", "--", "id:\(header)").status == 0)
        let run = try s.export()
        #expect(run.status == 0 && run.stderr.contains("1 change(s) read back"), "only -INBOX: \(run)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[chosen]!.labels == gmail[chosen]!.subtracting(["INBOX"]))
        let again = try s.export()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    @Test("a label named a,b: X-Keywords holds `a b`, notmuch `a,b`; no change read back from the difference; removing the tag removes the label")
    func commaInLabel() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        var chosen = ""
        let s = try base.setUp { fake in
            try fake.admin("POST", "create-label", ["name": "a,b"])
            let messages = try fake.messages()
            chosen = try #require(messages.keys.sorted().first { messages[$0]!.labels.contains("INBOX") && !messages[$0]!.labels.contains("TRASH") })
            try fake.modify(chosen, add: ["a,b"])
        }
        defer { withExtendedLifetime(s.fake) {} }
        let id = chosen
        let header = try #require(s.messageIDs[id])
        #expect(try s.tags(id).contains("a,b"), "notmuch holds the label's own name")
        let file = try #require((try FileManager.default.contentsOfDirectory(atPath: s.out + "/cur")).first { $0.contains(".hudson-\(id):") })
        let text = try String(contentsOfFile: s.out + "/cur/" + file, encoding: .utf8)
        #expect(text.split(separator: "\n").first?.contains(" a b") == true, "X-Keywords separates tags by commas: \(text.prefix(200))")
        // The message enters notmuch's lastmod window (archived): only that is read back.
        #expect(try s.notmuch("tag", "-inbox", "--", "id:\(header)").status == 0)
        let archived = try s.export()
        #expect(archived.status == 0 && archived.stderr.contains("1 change(s) read back"), "\(archived)")
        for _ in 0..<2 {
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "nothing read back from a,b against a b: \(again)")
        }
        #expect(try s.f.run("hd-sync").status == 0)
        let ab = try labelID(s.fake, "a,b")
        #expect(try s.fake.messages()[id]!.labels.contains(ab))
        #expect(try s.notmuch("tag", "-a,b", "--", "id:\(header)").status == 0)
        let removed = try s.export()
        #expect(removed.status == 0 && removed.stderr.contains("1 change(s) read back"), "\(removed)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try !s.fake.messages()[id]!.labels.contains(ab), "the tag's removal reached Gmail")
        let last = try s.export()
        #expect(last.status == 0 && last.stderr.isEmpty, "\(last)")
        #expect(try !s.tags(id).contains("a,b"))
    }

    @Test("a notmuch that says its database is locked ends the run with 75 and one line; the state stays as it was (notmuch 0.37 waits on its lock instead, so a stand-in program says it)")
    func lockedDatabase() throws {
        let w = try ExportWorkspace()
        let target = w.path("out")
        #expect(try w.export("--no-fetch", target).status == 0)
        let state = try exportStateText(target + "/.hudson-export")
        let bin = w.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // As notmuch answers when Xapian refuses its write lock (DatabaseLockError).
        try """
            #!/bin/sh
            case "$1" in
              config) echo '\(target)' ;;
              *) echo 'A Xapian exception occurred opening database: Unable to get write lock on \(target)/.notmuch/xapian: already locked' >&2
                 echo 'Error: could not open database' >&2; exit 1 ;;
            esac
            """.write(toFile: bin + "/notmuch", atomically: true, encoding: .utf8)
        #expect(chmod(bin + "/notmuch", 0o755) == 0)
        var environment = w.f.environment
        environment["PATH"] = bin
        let locked = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--notmuch", "--no-fetch", target], environment: environment, timeout: 60)
        #expect(locked.status == 75 && locked.stderr.hasPrefix("hd-export: ") && locked.stderr.split(separator: "\n").count == 1, "\(locked)")
        #expect(locked.stderr.contains("locked"), "\(locked)")
        #expect(try exportStateText(target + "/.hudson-export") == state, "the export stays as it was")
    }
}
