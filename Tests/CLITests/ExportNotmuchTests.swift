// hd-export --notmuch (issue 39) with the real notmuch: the export keeps the database on
// its Maildir in step (indexed, tagged with Gmail's labels) and reads back the tags
// clients change, to the project's fake Gmail and back.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-export --notmuch with the real notmuch against the fake Gmail", .serialized)
struct ExportNotmuchTests {
    struct Setup {
        let f: CLIFixture
        let fake: FakeGmail
        let out: String
        let env: [String: String]
        /// Message-ID (without <>) by Gmail id, from the fake.
        let messageIDs: [String: String]

        func notmuch(_ arguments: String...) throws -> CommandResult {
            try CommandRunner.run(URL(fileURLWithPath: try #require(MailIndexers.notmuch)), arguments, environment: f.environment.merging(env) { $1 })
        }

        func tags(_ gmailID: String) throws -> Set<String> {
            Set(try notmuch("search", "--output=tags", "id:\(messageIDs[gmailID]!)").lines)
        }

        func export(_ option: String? = nil) throws -> CommandResult {
            if let option { return try f.run("hd-export", option, out, environment: env) }
            return try f.run("hd-export", out, environment: env)
        }
    }

    func setUp(before: (FakeGmail) throws -> Void = { _ in }) throws -> Setup {
        let f = CLIFixture()
        let fake = try fixedFake()
        try before(fake)
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-auth", "set", fake.email, "keep-raw", "on").status == 0)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let out = f.dir.path("Mail")
        let config = f.dir.path("notmuch-config")
        try """
            [database]
            path=\(out)
            [new]
            tags=new
            ignore=.hudson-export;.hudson-export.lock;.hudson-export.running;.hudson-export.tmp;.hudson-export-journal
            [maildir]
            synchronize_flags=true
            """.write(toFile: config, atomically: true, encoding: .utf8)
        var ids: [String: String] = [:]
        let state = try fake.admin("GET", "state") as? [String: Any]
        for message in state?["messages"] as? [[String: Any]] ?? [] {
            if let id = message["id"] as? String, let header = message["messageId"] as? String {
                ids[id] = header.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
            }
        }
        let setup = Setup(f: f, fake: fake, out: out, env: ["NOTMUCH_CONFIG": config], messageIDs: ids)
        let first = try setup.export("--notmuch")
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        return setup
    }

    /// Gmail ids the store holds, with the fake's labels.
    func stored(_ s: Setup) throws -> [String: Set<String>] {
        let ids = Set(try s.f.run("hd-search", "--messages", "--ids", "-n", "100000", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) })
        return try s.fake.messages().filter { ids.contains($0.key) }.mapValues(\.labels)
    }

    @Test("the export tags notmuch itself; tags changed with notmuch tag reach Gmail; Gmail's changes reach the tags; no flip-flop")
    func roundTrip() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try stored(s)
        #expect(!FileManager.default.fileExists(atPath: s.out + "/notmuch-tags"), "no tag file is left for the user")
        let candidates = gmail.keys.sorted().filter {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && s.messageIDs[$0] != nil
        }
        #expect(candidates.count >= 3)
        let (archived, labelled, read) = (candidates[0], candidates[1], candidates[2])
        // Tags as lieer names them, from Gmail's labels; notmuch's own "new" tag is not one of them.
        let archivedTags = try s.tags(archived)
        #expect(archivedTags.isSuperset(of: ["inbox", "unread"]), "\(archivedTags)")
        #expect(try s.notmuch("tag", "-inbox", "--", "id:\(s.messageIDs[archived]!)").status == 0)
        #expect(try s.notmuch("tag", "+Work", "+attachment-seen", "--", "id:\(s.messageIDs[labelled]!)").status == 0)
        #expect(try s.notmuch("tag", "-unread", "--", "id:\(s.messageIDs[read]!)").status == 0)

        let second = try s.export()
        #expect(second.status == 0 && second.stderr.hasPrefix("hd-export: action "), "\(second)")
        #expect(try s.f.run("hd-sync").status == 0)
        let after = try s.fake.messages()
        let labels = try #require(try s.fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
        let work = try #require(labels.first { $0["name"] as? String == "Work" }?["id"] as? String)
        #expect(!after[archived]!.labels.contains("INBOX"))
        #expect(after[labelled]!.labels.contains(work))
        #expect(after[labelled]!.labels.subtracting([work]) == gmail[labelled]!, "a tag with no Gmail meaning changes nothing")
        #expect(!after[read]!.labels.contains("UNREAD"))
        for _ in 0..<2 {
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "nothing read back twice, nothing flips: \(again)")
        }
        #expect(try s.tags(labelled).contains("attachment-seen"), "a tag without Gmail meaning is left alone")

        // Gmail's side: a label changed on another device reaches notmuch's tags.
        try s.fake.modify(archived, add: ["STARRED", "INBOX"])
        #expect(try s.f.run("hd-sync").status == 0)
        let third = try s.export()
        #expect(third.status == 0 && third.stderr.isEmpty, "\(third)")
        let gmailTags = try s.tags(archived)
        #expect(gmailTags.isSuperset(of: ["inbox", "flagged"]), "\(gmailTags)")
        let fourth = try s.export()
        #expect(fourth.stderr.isEmpty && fourth.stdout.contains(" 0 relabelled"), "\(fourth)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[archived]!.labels.contains("INBOX"))
    }

    @Test("a message without Message-ID is tagged by its notmuch-sha1 id; two Gmail messages sharing one are one notmuch message with the union of tags, and a tag removed there is removed from both")
    func idsNotmuchDerives() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        var inserted: [String: String] = [:]
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let s = try setUp { fake in
            let labels = try #require(try fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
            let work = try #require(labels.first { $0["name"] as? String == "Work" }?["id"] as? String)
            func insert(_ name: String, _ raw: String, _ labelIDs: [String]) throws {
                let answer = try #require(try fake.admin("POST", "insert", ["raw": raw, "labelIds": labelIDs, "internalDate": "\(now)"]) as? [String: Any])
                inserted[name] = try #require(answer["id"] as? String)
            }
            try insert("anonymous", "From: a@example.com\r\nTo: demo@hudson.test\r\nSubject: no id here\r\n\r\nbody\r\n", ["INBOX", "UNREAD"])
            let shared = "From: demo@hudson.test\r\nTo: demo@hudson.test\r\nSubject: to myself\r\nMessage-ID: <self-1@hudson.test>\r\n\r\nhello\r\n"
            try insert("sent", shared, ["SENT", work])
            try insert("received", shared, ["INBOX", "UNREAD", work])
        }
        defer { withExtendedLifetime(s.fake) {} }
        let anonymous = try #require(inserted["anonymous"]), sent = try #require(inserted["sent"]), received = try #require(inserted["received"])
        let found = try s.notmuch("search", "--output=messages", "subject:\"no id here\"")
        let anonymousID = try #require(found.lines.first)
        #expect(anonymousID.hasPrefix("id:notmuch-sha1-"), "\(found)")
        let anonymousTags = Set(try s.notmuch("search", "--output=tags", anonymousID).lines)
        #expect(anonymousTags.isSuperset(of: ["inbox", "unread"]), "\(anonymousTags)")
        let sharedTags = Set(try s.notmuch("search", "--output=tags", "id:self-1@hudson.test").lines)
        #expect(sharedTags.isSuperset(of: ["inbox", "unread", "sent", "Work"]), "the union: \(sharedTags)")

        #expect(try s.notmuch("tag", "-Work", "--", "id:self-1@hudson.test").status == 0)
        #expect(try s.notmuch("tag", "+Receipts", "+todo", "--", anonymousID).status == 0)
        // Starred at Gmail: its file gets a new name (F), which notmuch indexes as a new message.
        try s.fake.modify(anonymous, add: ["STARRED"])
        #expect(try s.f.run("hd-sync").status == 0)
        let second = try s.export()
        #expect(second.status == 0 && second.stderr.hasPrefix("hd-export: action "), "\(second)")
        // -Work on both copies, +Receipts: the sent copy's file, whose S notmuch removed when
        // the export tagged the union (unread), is not read back as the client's.
        #expect(second.stderr.contains(" 3 change(s) read back"), "\(second)")
        #expect(try s.f.run("hd-sync").status == 0)
        let after = try s.fake.messages()
        let labels = try #require(try s.fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
        let work = try #require(labels.first { $0["name"] as? String == "Work" }?["id"] as? String)
        let receipts = try #require(labels.first { $0["name"] as? String == "Receipts" }?["id"] as? String)
        #expect(!after[sent]!.labels.contains(work) && !after[received]!.labels.contains(work), "removed from both")
        #expect(after[sent]!.labels == ["SENT"], "the sent copy stays read: \(after[sent]!.labels)")
        #expect(after[received]!.labels == ["INBOX", "UNREAD"], "\(after[received]!.labels)")
        #expect(after[anonymous]!.labels.contains(receipts))
        for _ in 0..<2 {
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
            #expect(try s.f.run("hd-sync").status == 0)
            #expect(try s.fake.messages()[sent]!.labels == ["SENT"], "nothing flips across runs")
        }
        // Rewritten under its new labels, the message without Message-ID has a new notmuch id, tagged.
        let renamed = try #require(try s.notmuch("search", "--output=messages", "subject:\"no id here\"").lines.first)
        let renamedTags = Set(try s.notmuch("search", "--output=tags", renamed).lines)
        #expect(renamed != anonymousID, "\(renamed)")
        #expect(renamedTags.isSuperset(of: ["inbox", "unread", "Receipts", "flagged"]), "\(renamedTags)")
        #expect(renamedTags.contains("todo"), "a tag with no Gmail meaning moves to the new id: \(renamedTags)")
    }

    @Test("a file a client renames without notmuch (S added) is read back once, through notmuch's tags")
    func plainRenameReadBack() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try stored(s)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && s.messageIDs[$0] != nil })
        let files = try FileManager.default.contentsOfDirectory(atPath: s.out + "/cur")
        let name = try #require(files.first { $0.contains(".hudson-" + id + ":") })
        let flags = name.components(separatedBy: ":2,")[1]
        // As mutt marks it read on the Maildir itself: S added to its name, notmuch not told.
        try FileManager.default.moveItem(atPath: s.out + "/cur/" + name,
                                         toPath: s.out + "/cur/" + name.components(separatedBy: ":2,")[0] + ":2," + String(Set(flags + "S").sorted()))
        let run = try s.export()
        #expect(run.status == 0 && run.stderr.contains(" 1 change(s) read back"), "\(run)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[id]?.labels.contains("UNREAD") == false, "read at Gmail")
        #expect(try !s.tags(id).contains("unread"))
        for _ in 0..<2 {
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
        }
    }

    @Test("a Message-ID with a comment before it is named as notmuch names it: tagged, and its tags read back")
    func messageIDAsNotmuchReadsIt() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        var gmailID = ""
        let s = try setUp { fake in
            let raw = "From: a@example.com\r\nTo: demo@hudson.test\r\nSubject: through a gateway\r\nMessage-ID: (gateway) <cmt-1@host>\r\n\r\nbody\r\n"
            let answer = try #require(try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"]]) as? [String: Any])
            gmailID = try #require(answer["id"] as? String)
        }
        defer { withExtendedLifetime(s.fake) {} }
        let found = try s.notmuch("search", "--output=messages", "subject:gateway").lines
        #expect(found == ["id:cmt-1@host"], "\(found)")
        let tags = Set(try s.notmuch("search", "--output=tags", "id:cmt-1@host").lines)
        #expect(tags.isSuperset(of: ["inbox", "unread"]), "tagged by the export: \(tags)")
        #expect(try s.notmuch("tag", "-inbox", "--", "id:cmt-1@host").status == 0)
        let second = try s.export()
        #expect(second.status == 0 && second.stderr.contains("1 change(s) read back"), "\(second)")
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[gmailID]?.labels.contains("INBOX") == false, "archived at Gmail")
        let again = try s.export()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    @Test("mu reads the flags Gmail's changes give the files")
    func muSeesFlags() throws {
        let mu = try #require(MailIndexers.mu, "mu is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try stored(s)
        let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("STARRED") && s.messageIDs[$0] != nil })
        try s.fake.modify(id, add: ["STARRED"], remove: ["UNREAD"])
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.export().status == 0)
        let home = s.f.dir.path("mu")
        let environment = s.f.environment
        #expect(try CommandRunner.run(URL(fileURLWithPath: mu), ["init", "--muhome=\(home)", "--maildir=\(s.out)"], environment: environment).status == 0)
        #expect(try CommandRunner.run(URL(fileURLWithPath: mu), ["index", "--muhome=\(home)"], environment: environment).status == 0)
        let flags = try CommandRunner.run(URL(fileURLWithPath: mu), ["find", "--muhome=\(home)", "--fields=g", "msgid:\(s.messageIDs[id]!)"], environment: environment)
        #expect(flags.stdout.contains("F") && flags.stdout.contains("S") && !flags.stdout.contains("u"), "\(flags)")
        let tags = Set(try s.tags(id))
        #expect(tags.contains("flagged") && !tags.contains("unread"), "\(tags)")
    }

    static let closingDescriptors = "for fd in $(ls /proc/$$/fd); do if [ \"$fd\" -gt 2 ]; then eval \"exec $fd>&-\" 2>/dev/null; fi; done; "

    /// Runs neomutt on a notmuch query in a detached tmux session (its terminal), the keys
    /// given by `push` (typed as if at the keyboard once it starts), until it quits.
    func neomutt(_ s: Setup, query: String, keys: String) throws -> (quit: Bool, screen: String) {
        let neomutt = try #require(ManPages.tool("neomutt"), "neomutt is not installed (scripts/lib.sh ensure_mail_indexers)")
        let tmux = try #require(ManPages.tool("tmux"), "tmux is not installed (scripts/lib.sh ensure_mail_indexers)")
        let rc = s.f.dir.path("neomuttrc")
        try """
            set nm_default_url = "notmuch://\(s.out)"
            set folder = "\(s.out)"
            set spoolfile = "\(s.out)"
            set record = /dev/null
            set mbox_type = Maildir
            set header_cache = ""
            set wait_key = no
            set quit = yes
            set mark_old = no
            set confirmappend = no
            """.write(toFile: rc, atomically: true, encoding: .utf8)
        let socket = s.f.dir.path("tmux.sock")
        let command = "exec \(neomutt) -n -F \(rc) -f 'notmuch://\(s.out)?query=\(query)' -e 'push \"\(keys)\"' 2>\(s.f.dir.path("neomutt.err"))"
        var environment = s.f.environment.merging(s.env) { $1 }
        environment["TERM"] = "xterm"
        // The tmux server must not keep the runner's pipes open: its output goes nowhere.
        // and no descriptor the runner watches (tmux's server keeps what it inherits).
        let started = try CommandRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", Self.closingDescriptors + "exec \"$0\" -S \"$1\" new-session -d -x 160 -y 40 \"$2\" </dev/null >/dev/null 2>&1", tmux, socket, command], environment: environment)
        #expect(started.status == 0, "\(started)")
        // Bounded: neomutt quits by itself once the pushed keys are done.
        var screen = ""
        for _ in 0..<200 {
            let alive = try CommandRunner.run(URL(fileURLWithPath: tmux), ["-S", socket, "has-session"], environment: environment)
            if alive.status != 0 { return (true, screen) }
            screen = try CommandRunner.run(URL(fileURLWithPath: tmux), ["-S", socket, "capture-pane", "-p"], environment: environment).stdout
            usleep(100_000)
        }
        _ = try CommandRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", Self.closingDescriptors + "exec \"$0\" -S \"$1\" kill-server </dev/null >/dev/null 2>&1", tmux, socket], environment: environment)
        return (false, screen + "\n" + ((try? String(contentsOfFile: s.f.dir.path("neomutt.err"), encoding: .utf8)) ?? ""))
    }

    @Test("neomutt, driven in tmux on the notmuch database, archives one message and reads another; both reach Gmail")
    func neomuttEndToEnd() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try stored(s)
        let candidates = gmail.keys.sorted().filter {
            gmail[$0]!.contains("INBOX") && gmail[$0]!.contains("UNREAD") && !gmail[$0]!.contains("TRASH") && s.messageIDs[$0] != nil
        }
        let (archived, read) = (candidates[0], candidates[1])
        let archive = try neomutt(s, query: "id:\(s.messageIDs[archived]!)", keys: "<modify-tags>-inbox<enter><sync-mailbox><quit>")
        #expect(archive.quit, "neomutt did not quit: \(archive.screen)")
        let reading = try neomutt(s, query: "id:\(s.messageIDs[read]!)", keys: "<clear-flag>N<sync-mailbox><quit>")
        #expect(reading.quit, "neomutt did not quit: \(reading.screen)")
        let archivedTags = try s.tags(archived), readTags = try s.tags(read)
        #expect(!archivedTags.contains("inbox"), "\(archivedTags)")
        #expect(!readTags.contains("unread"), "\(readTags)")

        let export = try s.export()
        #expect(export.status == 0 && export.stderr.hasPrefix("hd-export: action "), "\(export)")
        #expect(try s.f.run("hd-sync").status == 0)
        let after = try s.fake.messages()
        #expect(!after[archived]!.labels.contains("INBOX"), "archived in neomutt, archived at Gmail")
        #expect(!after[read]!.labels.contains("UNREAD"), "read in neomutt, read at Gmail")
        let again = try s.export()
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    @Test("kill -9 while a notmuch read-back is queued: the tag change is queued exactly once")
    func killedReadBack() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        for point in ["read-back-saved", "read-back-queued"] {
            let s = try setUp()
            defer { withExtendedLifetime(s.fake) {} }
            let gmail = try stored(s)
            let id = try #require(gmail.keys.sorted().first { gmail[$0]!.contains("INBOX") && s.messageIDs[$0] != nil })
            #expect(try s.notmuch("tag", "+Receipts", "--", "id:\(s.messageIDs[id]!)").status == 0)
            let crashed = try s.f.run("hd-export", s.out, environment: s.env.merging(["HUDSON_TEST_CRASH_AT": point]) { $1 })
            #expect(crashed.status == 137 || crashed.status == 9, "\(point): \(crashed)")
            // Once it is queued, the user takes the label off again: queueing the tag
            // change a second time would put it back.
            let committed = point == "read-back-queued"
            if committed { #expect(try s.f.run("hd-mark", "-Receipts", "message:\(id)").status == 0) }
            let rerun = try s.export()
            #expect(rerun.status == 0, "\(point): \(rerun)")
            #expect(rerun.stderr.contains("read back") != committed, "\(point): \(rerun)")
            let again = try s.export()
            #expect(again.status == 0 && again.stderr.isEmpty, "\(point): \(again)")
            #expect(try s.f.run("hd-sync").status == 0)
            let labels = try #require(try s.fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
            let receipts = try #require(labels.first { $0["name"] as? String == "Receipts" }?["id"] as? String)
            #expect(try s.fake.messages()[id]!.labels.contains(receipts) == !committed, "\(point)")
            #expect(try s.tags(id).contains("Receipts") == !committed, "\(point): notmuch follows")
        }
    }

    @Test("--notmuch refuses a database that is not the Maildir's, and a missing notmuch, with one line and 78, the export left one-way")
    func refusals() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let w = try ExportWorkspace()
        let target = w.path("out")
        #expect(try w.export("--no-fetch", target).status == 0)
        let config = w.path("notmuch-config")
        try "[database]\npath=\(w.path("elsewhere"))\n".write(toFile: config, atomically: true, encoding: .utf8)
        let state = try exportStateText(target + "/.hudson-export")
        var environment = w.f.environment
        environment["NOTMUCH_CONFIG"] = config
        let other = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--notmuch", "--no-fetch", target], environment: environment)
        #expect(other.status == 78 && other.stderr.hasPrefix("hd-export: ") && other.stderr.split(separator: "\n").count == 1, "\(other)")
        #expect(other.stderr.contains("database.path"), "\(other)")
        environment["PATH"] = w.path("no-such-bin")
        let missing = try CommandRunner.run(BuiltProducts.executable("hd-export"), ["--notmuch", "--no-fetch", target], environment: environment)
        #expect(missing.status == 78 && missing.stderr.contains("notmuch program") && missing.stderr.split(separator: "\n").count == 1, "\(missing)")
        #expect(try exportStateText(target + "/.hudson-export") == state, "the export stays as it was")
        let usage = try w.export("--notmuch", "--one-way", target)
        #expect(usage.status == 64, "\(usage)")
    }

    @Test("a tag a client changes in notmuch while a run tags a message Gmail changed too is kept, read back by the next run, and wins")
    func clientEditDuringRun() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        // The client's `notmuch tag -inbox` made just before the export's first tagging (after
        // its read-back and its notmuch new), or just before that notmuch new (after the
        // export looked for changes since its read-back), on a message Gmail starred (a new
        // file name) or labelled Work (the same name).
        for (command, label, tag) in [("tag", "STARRED", "flagged"), ("new", "Work", "Work")] {
            let s = try setUp()
            defer { withExtendedLifetime(s.fake) {} }
            let gmail = try stored(s)
            let labels = try #require(try s.fake.admin("GET", "state") as? [String: Any])["labels"] as? [[String: Any]] ?? []
            let labelID = label == "STARRED" ? label : try #require(labels.first { $0["name"] as? String == label }?["id"] as? String)
            let id = try #require(gmail.keys.sorted().first {
                gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains(labelID) && s.messageIDs[$0] != nil
            })
            let wrappers = s.f.dir.path("wrappers")
            try FileManager.default.createDirectory(atPath: wrappers, withIntermediateDirectories: true)
            let edited = s.f.dir.path("edited")
            try """
                #!/bin/sh
                if [ "$1" = \(command) ] && [ ! -e \(edited) ]; then
                    touch \(edited)
                    /usr/bin/notmuch tag -inbox -- 'id:"\(s.messageIDs[id]!)"' || exit 1
                fi
                exec /usr/bin/notmuch "$@"
                """.write(toFile: wrappers + "/notmuch", atomically: true, encoding: .utf8)
            #expect(chmod(wrappers + "/notmuch", 0o755) == 0)
            try s.fake.modify(id, add: [labelID])
            #expect(try s.f.run("hd-sync").status == 0)
            let run = try s.f.run("hd-export", s.out, environment: s.env.merging(["PATH": wrappers + ":/usr/bin:/bin"]) { $1 })
            #expect(run.status == 0 && run.stderr.isEmpty, "\(command): \(run)")
            #expect(FileManager.default.fileExists(atPath: edited), "\(command): the client's edit was made")
            #expect(try !s.tags(id).contains("inbox"), "\(command): the client's edit is not overwritten")

            let next = try s.export()
            #expect(next.status == 0 && next.stderr.contains(" 1 change(s) read back"), "\(command): \(next)")
            #expect(try s.f.run("hd-sync").status == 0)
            let after = try #require(try s.fake.messages()[id]?.labels)
            #expect(!after.contains("INBOX") && after.contains(labelID), "\(command): the client's archive and Gmail's label: \(after)")
            let tags = try s.tags(id)
            #expect(!tags.contains("inbox") && tags.contains(tag), "\(command): \(tags)")
            for _ in 0..<2 {
                let again = try s.export()
                #expect(again.status == 0 && again.stderr.isEmpty, "\(command): \(again)")
            }
            #expect(try s.f.run("hd-sync").status == 0)
            #expect(try s.fake.messages()[id]?.labels.contains("INBOX") == false, "\(command)")
        }
    }

    @Test("a tag change read back is not tagged again (its tags already say it); a Gmail change in the same run is")
    func readBackNotTaggedAgain() throws {
        try #require(MailIndexers.notmuch != nil, "notmuch is not installed (scripts/lib.sh ensure_mail_indexers)")
        let s = try setUp()
        defer { withExtendedLifetime(s.fake) {} }
        let gmail = try stored(s)
        let candidates = gmail.keys.sorted().filter {
            gmail[$0]!.contains("INBOX") && !gmail[$0]!.contains("STARRED") && s.messageIDs[$0] != nil
        }
        try #require(candidates.count >= 2 && s.messageIDs[candidates[0]] != s.messageIDs[candidates[1]])
        let (client, server) = (candidates[0], candidates[1])
        // notmuch as the export runs it, each command and the tag batch's lines logged.
        let wrappers = s.f.dir.path("wrappers")
        try FileManager.default.createDirectory(atPath: wrappers, withIntermediateDirectories: true)
        let log = s.f.dir.path("notmuch.log")
        try """
            #!/bin/sh
            echo "$1" >> \(log)
            if [ "$1" = tag ]; then echo "$*" >> \(log).tag; tee -a \(log).batch | /usr/bin/notmuch "$@"; exit $?; fi
            exec /usr/bin/notmuch "$@"
            """.write(toFile: wrappers + "/notmuch", atomically: true, encoding: .utf8)
        #expect(chmod(wrappers + "/notmuch", 0o755) == 0)
        let env = s.env.merging(["PATH": wrappers + ":/usr/bin:/bin"]) { $1 }

        #expect(try s.notmuch("tag", "+flagged", "--", "id:\(s.messageIDs[client]!)").status == 0)
        try s.fake.modify(server, add: ["STARRED"])
        #expect(try s.f.run("hd-sync").status == 0)
        let run = try s.f.run("hd-export", s.out, environment: env)
        #expect(run.status == 0 && run.stderr.hasPrefix("hd-export: action "), "\(run)")
        // The store was closed at the exit (its state is kept to the exit, the store is not).
        #expect(!FileManager.default.fileExists(atPath: s.f.storePath + "-wal"))
        let commands = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(commands.contains("new") && commands.contains("tag"), "\(commands)")
        // One tagging, the server's change: the client's message already has the tags it would set.
        // (A message notmuch had is tagged by a query, not a batch line: only if unchanged since.)
        let tagged = try String(contentsOfFile: log + ".tag", encoding: .utf8).split(separator: "\n")
        #expect(tagged.count == 1 && tagged.first?.hasSuffix("and ( id:\"\(s.messageIDs[server]!)\" )") == true, "\(tagged)")
        #expect(try s.tags(client).contains("flagged") && s.tags(server).contains("flagged"))
        let files = try FileManager.default.contentsOfDirectory(atPath: s.out + "/cur")
        for id in [client, server] {
            let name = try #require(files.first { $0.contains(".hudson-" + id) })
            #expect(name.hasSuffix("F") || name.split(separator: ",").last?.contains("F") == true, "\(name)")
        }
        #expect(try s.f.run("hd-sync").status == 0)
        #expect(try s.fake.messages()[client]!.labels.contains("STARRED"))
        let again = try s.export()
        #expect(again.status == 0 && again.stderr.isEmpty, "nothing read back twice: \(again)")
        #expect(try s.tags(client).contains("flagged"))
    }
}
