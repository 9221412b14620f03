// hd-export and kept sources (issue 24 §1, §2) against the project's fake Gmail over HTTP,
// and the Maildir proven with the real notmuch and mu.
import Foundation
import HudsonTestSupport
import Testing

/// notmuch and mu on this machine. Under CI they must be there (scripts/lib.sh's
/// ensure_mail_indexers installs them), so their test fails rather than skips without them.
enum MailIndexers {
    static let notmuch = ManPages.tool("notmuch")
    static let mu = ManPages.tool("mu")
}

@Suite("hd-export and kept sources against the fake Gmail", .serialized)
struct ExportCommandTests {
    /// A demo mailbox synced whole (every body), its sources kept or not.
    func synced(keepRaw: Bool, _ extra: [String] = []) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try fixedFake(extra)
        try f.connect(fake, lookbackDays: 0)
        if keepRaw {
            let set = try f.run("hd-auth", "set", fake.email, "keep-raw", "on")
            #expect(set.status == 0 && set.stderr == "hd-auth: demo@hudson.test: keep-raw on\n", "\(set)")
        }
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    /// The Gmail ids of every message in the store (the fake may hold some that sync does not list).
    func stored(_ f: CLIFixture) throws -> Set<String> {
        Set(try f.run("hd-search", "--messages", "--ids", "-n", "100000", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
    }

    func files(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Maildir file names in cur/ by Gmail id.
    func maildir(_ path: String) -> [String: String] {
        var names: [String: String] = [:]
        for name in files(path + "/cur") {
            let id = name.split(separator: ":")[0].components(separatedBy: ".hudson-")[1]
            #expect(names[id] == nil, "two files for \(id)")
            names[id] = name
        }
        return names
    }

    @Test("a kept source: hydration fetches format=raw only, hd-show --raw and hd-export need no network")
    func keptSources() throws {
        let (f, fake) = try synced(keepRaw: true)
        let messages = try stored(f)
        #expect(try f.run("hd-auth", "list", "--json").stdout.contains("\"keep_raw\":true"))
        let off = try f.run("hd-auth", "set", fake.email, "keep-raw", "maybe")
        #expect(off.status == 64 && off.stderr.hasPrefix("hd-auth: keep-raw: maybe: not on or off\n"), "\(off)")
        let queries = (try fake.admin("GET", "requests") as? [[String: Any]] ?? []).compactMap { $0["query"] as? String }
        // One format=raw get per message and no format=full: the quota of hydration is unchanged.
        #expect(queries.filter { $0.contains("format=raw") }.count == messages.count)
        #expect(!queries.contains { $0.contains("format=full") })
        let id = try #require(messages.sorted().first)
        let stored = try f.run("hd-show", "--raw", "--no-fetch", "message:\(id)")
        #expect(stored.status == 0, "\(stored)")
        let server = try #require(try fake.admin("GET", "message/\(id)") as? [String: Any])
        let raw = try #require(server["raw"] as? String)
        let expected = Data(base64Encoded: raw.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"))
        #expect(expected.map { String(decoding: $0, as: UTF8.self) } == stored.stdout)

        fake.stop()  // offline from here
        let out = f.dir.path("Mail")
        let export = try f.run("hd-export", out)
        #expect(export.status == 0, "\(export)")
        #expect(export.stdout == "demo@hudson.test: \(messages.count) written, 0 relabelled, 0 removed, 0 deleted at Gmail and kept, 0 fetched from Gmail\n")
        #expect(maildir(out).count == messages.count)
        let tags = try String(contentsOfFile: out + "/notmuch-tags", encoding: .utf8)
        #expect(!tags.isEmpty)
        let again = try f.run("hd-export", out)
        #expect(again.stdout.hasPrefix("demo@hudson.test: 0 written, 0 relabelled"), "\(again)")
        // Nothing changed: nothing appended, and the lines not yet applied are still there.
        #expect(try String(contentsOfFile: out + "/notmuch-tags", encoding: .utf8) == tags)
    }

    @Test("a body hd-show fetches on demand for an account that keeps sources comes with its source")
    func onDemandKeepsSource() throws {
        let f = CLIFixture()
        let fake = try fixedFake()
        defer { withExtendedLifetime(fake) {} }
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-auth", "set", fake.email, "keep-raw", "on").status == 0)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
        let message = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "older_than:30d").lines.first)
        let before = try f.run("hd-show", "--raw", "--no-fetch", message)
        #expect(before.status == 2 && before.stderr.contains("source not stored"), "\(before)")
        #expect(try f.run("hd-show", message).status == 0)
        let after = try f.run("hd-show", "--raw", "--no-fetch", message)
        #expect(after.status == 0 && (after.stdout.contains("Message-ID:") || after.stdout.contains("Message-Id:")), "\(after)")
    }

    @Test("without kept sources the export fetches them; a rerun writes only changes: flags, deletions kept, --mirror removes")
    func incremental() throws {
        let (f, fake) = try synced(keepRaw: false)
        defer { withExtendedLifetime(fake) {} }
        let ids = try stored(f)
        let messages = try fake.messages().filter { ids.contains($0.key) }
        #expect(messages.count == ids.count)
        let out = f.dir.path("Mail")
        let first = try f.run("hd-export", out)
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.hasSuffix(", \(messages.count) fetched from Gmail\n"), "\(first)")
        let before = maildir(out)
        #expect(before.count == messages.count)
        let firstTags = try String(contentsOfFile: out + "/notmuch-tags", encoding: .utf8)
        // Flags follow the labels: S without UNREAD, F with STARRED.
        for (id, message) in messages {
            let flags = String(try #require(before[id]).split(separator: ",").last ?? "")
            #expect(flags.contains("S") == !message.labels.contains("UNREAD"), "\(id) \(flags)")
            #expect(flags.contains("F") == message.labels.contains("STARRED"), "\(id) \(flags)")
        }

        // Two changes here (queued), one elsewhere (synced), one deletion at Gmail.
        let unread = try #require(messages.first { $0.value.labels.contains("UNREAD") && !$0.value.labels.contains("STARRED") }?.key)
        #expect(try f.run("hd-mark", "read", "star", "message:\(unread)").status == 0)
        let gone = try #require(messages.keys.sorted().first { $0 != unread })
        try fake.admin("POST", "delete", ["id": gone])
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        try fake.clearRequests()
        let second = try f.run("hd-export", out)
        #expect(second.stdout == "demo@hudson.test: 0 written, 1 relabelled, 0 removed, 1 deleted at Gmail and kept, 0 fetched from Gmail\n",
                "\(second)")
        #expect(try fake.requests().isEmpty, "a relabel needs no fetch")
        let after = maildir(out)
        #expect(after.count == messages.count, "the deleted message is kept")
        #expect(try #require(after[unread]).hasSuffix(":2,FS"))
        let keywords = try String(contentsOfFile: out + "/cur/" + after[unread]!, encoding: .utf8)
        #expect(keywords.hasPrefix("X-Keywords: ") && keywords.split(separator: "\n")[0].contains("flagged"))
        #expect(!keywords.dropFirst().contains("X-Keywords:"), "one X-Keywords header, not one per run")
        // The second run's line is appended after the first run's, which nobody applied yet.
        let tags = try String(contentsOfFile: out + "/notmuch-tags", encoding: .utf8)
        #expect(tags.hasPrefix(firstTags), "\(tags)")
        let added = tags.dropFirst(firstTags.count)
        #expect(added.split(separator: "\n").count == 1 && added.contains("+flagged") && added.contains("-unread"), "\(added)")

        let mirror = try f.run("hd-export", "--mirror", out)
        #expect(mirror.stdout.hasPrefix("demo@hudson.test: 0 written, 0 relabelled, 1 removed"), "\(mirror)")
        #expect(maildir(out)[gone] == nil && maildir(out).count == messages.count - 1)
    }

    @Test("a source Gmail never serves: the rest are exported, it is named, exit 2, and the next run tries it again")
    func oneSourceFailsForever() throws {
        let (f, fake) = try synced(keepRaw: false)
        defer { withExtendedLifetime(fake) {} }
        let messages = try stored(f)
        let bad = try #require(messages.sorted().last)
        try fake.faults([["path": "messages/\(bad)", "status": 500, "times": -1]])
        let out = f.dir.path("Mail")
        let first = try f.run("hd-export", out)
        #expect(first.status == 2, "\(first)")
        #expect(first.stdout.hasSuffix(", 1 failed\n") && first.stderr.contains("message:\(bad): not exported: "), "\(first)")
        #expect(maildir(out).count == messages.count - 1)
        let still = try f.run("hd-export", out)
        #expect(still.status == 2 && still.stdout.hasPrefix("demo@hudson.test: 0 written"), "\(still)")
        try fake.admin("DELETE", "faults")
        let last = try f.run("hd-export", out)
        #expect(last.status == 0 && last.stdout.hasPrefix("demo@hudson.test: 1 written"), "\(last)")
        #expect(maildir(out).count == messages.count)
    }

    @Test("killed mid-export (kill -9), a rerun completes it: one file a message, nothing half-written")
    func killedMidRun() throws {
        let (f, fake) = try synced(keepRaw: false)
        defer { withExtendedLifetime(fake) {} }
        let messages = try stored(f)
        try fake.admin("POST", "set", ["latency_ms": 150])  // an export of a second or so, to be killed in
        let out = f.dir.path("Mail")
        // Killed at some point of the run (before, during or after its batches: each must resume).
        for delay in ["0.2", "0.5"] {
            _ = try f.shell("(hd-export '\(out)' >/dev/null 2>&1 & pid=$!; sleep \(delay); kill -9 $pid; wait $pid) || true")
        }
        let rerun = try f.run("hd-export", out)
        #expect(rerun.status == 0, "\(rerun)")
        #expect(maildir(out).count == messages.count)
        #expect(files(out + "/tmp").isEmpty)
        #expect(files(out + "/new").isEmpty)
        // Every tag line an unbroken export writes is in the file, whatever batch the kill fell in.
        let clean = f.dir.path("Clean")
        #expect(try f.run("hd-export", clean).status == 0)
        let wanted = Set(try String(contentsOfFile: clean + "/notmuch-tags", encoding: .utf8).split(separator: "\n"))
        let have = Set(try String(contentsOfFile: out + "/notmuch-tags", encoding: .utf8).split(separator: "\n"))
        #expect(!wanted.isEmpty && wanted.isSubset(of: have), "\(wanted.subtracting(have))")
    }

    @Test("after a killed run, a Maildir file it left under an older name is removed when its message is written again")
    func strayAfterKill() throws {
        let (f, fake) = try synced(keepRaw: true)
        defer { withExtendedLifetime(fake) {} }
        let out = f.dir.path("Mail")
        #expect(try f.run("hd-export", out).status == 0)
        let files = maildir(out)
        let (id, name) = try #require(files.sorted { $0.key < $1.key }.first)
        // What a run killed between writing a file and saving the state leaves: the file under
        // the new name, the state naming the old one, and the marker of a run that never ended.
        let unique = String(name.split(separator: ":")[0])
        let stray = out + "/cur/" + unique + ":2,T"
        try FileManager.default.copyItem(atPath: out + "/cur/" + name, toPath: stray)
        _ = FileManager.default.createFile(atPath: out + "/.hudson-export.running", contents: Data())
        #expect(try f.run("hd-mark", "star", "message:\(id)").status == 0)
        let rerun = try f.run("hd-export", out)
        #expect(rerun.status == 0 && rerun.stdout.contains(" 1 relabelled"), "\(rerun)")
        #expect(!FileManager.default.fileExists(atPath: stray))
        #expect(self.files(out + "/cur").filter { $0.hasPrefix(unique + ":") }.count == 1)
        #expect(!FileManager.default.fileExists(atPath: out + "/.hudson-export.running"))
    }

    @Test("killed after a relabel renamed a file but before the state was saved: the file under its new name is used, not dropped",
          arguments: [false, true])
    func renamedBeforeSave(markerLeft: Bool) throws {
        let (f, fake) = try synced(keepRaw: true)
        defer { withExtendedLifetime(fake) {} }
        let out = f.dir.path("Mail")
        #expect(try f.run("hd-export", out).status == 0)
        let before = maildir(out)
        let (id, name) = try #require(before.sorted { $0.key < $1.key }.first)
        // The relabel wrote the new name and removed the old one; the state still names the old.
        let unique = String(name.split(separator: ":")[0])
        try FileManager.default.moveItem(atPath: out + "/cur/" + name, toPath: out + "/cur/" + unique + ":2,T")
        if markerLeft { _ = FileManager.default.createFile(atPath: out + "/.hudson-export.running", contents: Data()) }
        #expect(try f.run("hd-mark", "star", "message:\(id)").status == 0)
        let rerun = try f.run("hd-export", out)
        #expect(rerun.status == 0 && rerun.stdout.contains(" 1 relabelled") && !rerun.stdout.contains("failed"), "\(rerun)")
        let after = maildir(out)
        #expect(after.count == before.count, "none lost, none twice")
        #expect(try #require(after[id]).hasSuffix(":2,F") || after[id]!.hasSuffix(":2,FS"), "\(after[id] ?? "")")
        #expect(self.files(out + "/cur").filter { $0.hasPrefix(unique + ":") }.count == 1)
    }

    @Test("hd-export needing a source with a revoked grant exits 77 through the exit table, not 2 per message")
    func revokedExits77() throws {
        let (f, fake) = try synced(keepRaw: false)
        defer { withExtendedLifetime(fake) {} }
        try fake.admin("POST", "revoke", ["refresh_token": fake.refreshToken])
        let export = try f.run("hd-export", f.dir.path("Mail"))
        #expect(export.status == 77 && !export.stderr.contains("not exported"), "\(export)")
    }

    @Test("a 403 that is not a rate limit (domain policy, missing scope: 77; the daily quota: 75) stops hd-export, not 2 per message; the next run exports everything",
          arguments: ["domainPolicy", "dailyLimitExceeded", "insufficientPermissions"])
    func accountWideRefusalStops(reason: String) throws {
        let (f, fake) = try synced(keepRaw: false)
        defer { withExtendedLifetime(fake) {} }
        let messages = try stored(f)
        try fake.faults([["path": "/messages/[0-9a-f]+$", "status": 403, "reason": reason, "times": -1]])
        let out = f.dir.path("Mail")
        let export = try f.run("hd-export", out)
        #expect(export.status == (reason == "dailyLimitExceeded" ? 75 : 77) && !export.stderr.contains("not exported"), "\(export)")
        let advice = reason == "insufficientPermissions" ? "hd-auth login" : reason
        #expect(export.stderr.split(separator: "\n").count == 1 && export.stderr.contains(advice), "\(export.stderr)")
        try fake.admin("DELETE", "faults")
        let last = try f.run("hd-export", out)
        #expect(last.status == 0, "\(last)")
        #expect(maildir(out).count == messages.count)
    }

    @Test("hd-export needing sources with the network down exits 75 (temporary), not 2 per message")
    func networkDownExits75() throws {
        let (f, fake) = try synced(keepRaw: false)
        fake.stop()
        let export = try f.run("hd-export", f.dir.path("Mail"))
        #expect(export.status == 75 && !export.stderr.contains("not exported"), "\(export)")
    }

    @Test("mboxrd and .eml: every message once, a rerun appends only new ones; bad targets refused")
    func mboxAndEml() throws {
        let (f, fake) = try synced(keepRaw: true)
        defer { withExtendedLifetime(fake) {} }
        let count = try stored(f).count
        let mbox = f.dir.path("all.mbox")
        #expect(try f.run("hd-export", "--format", "mbox", mbox).status == 0)
        func froms() throws -> Int {
            try String(contentsOfFile: mbox, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .filter { $0.hasPrefix("From ") }.count
        }
        #expect(try froms() == count)
        try fake.admin("POST", "insert", ["raw": "From: x@example.org\r\nTo: demo@hudson.test\r\nSubject: new\r\nMessage-ID: <new.1@example.org>\r\n\r\nFrom here on\r\n",
                                          "labelIds": ["INBOX", "UNREAD"]])
        #expect(try f.run("hd-sync", "--prefetch-days", "0").status == 0)
        let again = try f.run("hd-export", "--format", "mbox", mbox)
        #expect(again.stdout.hasPrefix("demo@hudson.test: 1 written"), "\(again)")
        #expect(try froms() == count + 1)
        #expect(try String(contentsOfFile: mbox, encoding: .utf8).contains("\n>From here on\n"), "mboxrd quoting")

        let eml = f.dir.path("eml")
        #expect(try f.run("hd-export", "--format", "eml", eml).status == 0)
        let tree = FileManager.default.enumerator(atPath: eml)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".eml") } ?? []
        #expect(tree.count == count + 1)

        let wrong = try f.run("hd-export", "--format", "maildir", eml)
        #expect(wrong.status == 64 && wrong.stderr.contains("holds a eml export, not maildir"), "\(wrong)")
        let mirror = try f.run("hd-export", "--format", "mbox", "--mirror", mbox)
        #expect(mirror.status == 64, "\(mirror)")
        try "not mail\n".write(toFile: f.dir.path("other"), atomically: true, encoding: .utf8)
        let foreign = try f.run("hd-export", "--format", "mbox", f.dir.path("other"))
        #expect(foreign.status == 64 && foreign.stderr.contains("no hd-export wrote"), "\(foreign)")
        #expect(try String(contentsOfFile: f.dir.path("other"), encoding: .utf8) == "not mail\n")
    }

    @Test("the real notmuch and mu index the Maildir: notmuch new plus the tag file gives Hudson's counts; mu finds the same messages",
          .enabled(if: (MailIndexers.notmuch != nil && MailIndexers.mu != nil) || MailClients.isCI,
                   "skipped: notmuch or mu is not installed (apt-get install notmuch maildir-utils; scripts/test installs them)"))
    func notmuchAndMu() throws {
        let notmuch = try #require(MailIndexers.notmuch, "notmuch is required under CI=true")
        let mu = try #require(MailIndexers.mu, "mu (maildir-utils) is required under CI=true")
        let (f, fake) = try synced(keepRaw: true)
        defer { withExtendedLifetime(fake) {} }
        // A change queued here must be in the export as Hudson shows it.
        let first = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "in:inbox").lines.first)
        #expect(try f.run("hd-mark", "archive", "star", first).status == 0)
        let out = f.dir.path("Mail")
        #expect(try f.run("hd-export", out).status == 0)
        let config = f.dir.path("notmuch-config")
        try """
            [database]
            path=\(out)
            [new]
            tags=unread;inbox;
            ignore=notmuch-tags;.hudson-export;.hudson-export.lock;.hudson-export-journal
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let setup = try f.shell("""
            export NOTMUCH_CONFIG='\(config)'
            '\(notmuch)' new --quiet && '\(notmuch)' tag --batch --input='\(out)/notmuch-tags'
            """)
        #expect(setup.status == 0 && !setup.stderr.contains("Ignoring"), "\(setup)")
        func hudson(_ query: String) throws -> Int {
            try f.run("hd-search", "--messages", "--ids", "-n", "100000", query).lines.count
        }
        func notmuchCount(_ query: String) throws -> Int {
            Int(try f.shell("NOTMUCH_CONFIG='\(config)' '\(notmuch)' count '\(query)'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        for (tag, query) in [("tag:inbox", "in:inbox"), ("tag:unread", "is:unread in:anywhere"), ("tag:flagged", "is:starred in:anywhere"),
                             ("tag:sent", "in:sent"), ("tag:Work", "label:Work in:anywhere"), ("tag:Travel/2026", "label:Travel/2026 in:anywhere"),
                             ("*", "in:anywhere"), ("tag:inbox and tag:unread", "in:inbox is:unread")] {
            #expect(try notmuchCount(tag) == (try hudson(query)), "\(tag) / \(query)")
        }
        #expect(try notmuchCount("tag:inbox") > 0 && (try notmuchCount("tag:flagged")) > 0)

        let home = f.dir.path("mu")
        let index = try f.shell("'\(mu)' init --muhome='\(home)' --maildir='\(out)' >/dev/null && '\(mu)' index --muhome='\(home)' --quiet")
        #expect(index.status == 0, "\(index)")
        func muCount(_ query: String) throws -> Int {
            try f.shell("'\(mu)' find --muhome='\(home)' --fields=i '\(query)' 2>/dev/null").lines.count
        }
        #expect(try muCount("") == (try hudson("in:anywhere")))
        #expect(try muCount("flag:flagged") == (try hudson("is:starred in:anywhere")))
        #expect(try muCount("flag:unread") == (try hudson("is:unread in:anywhere")))
        #expect(try muCount("tag:Work") == (try hudson("label:Work in:anywhere")))
    }
}
