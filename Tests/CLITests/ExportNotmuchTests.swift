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

    func setUp() throws -> Setup {
        let f = CLIFixture()
        let fake = try fixedFake()
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
            ignore=.hudson-export;.hudson-export.lock;.hudson-export.running;.hudson-export.tmp
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
}
