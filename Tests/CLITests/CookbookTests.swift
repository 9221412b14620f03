// Every pipeline in docs/scripting.md, run exactly as written against the fake Gmail's
// demo mailbox and checked by its output or by its effect on the server (issue 8: "Every
// cookbook pipeline in docs/scripting.md runs in CI against the fake server and checks
// its output"). A recipe is a ```sh block whose fence names it (```sh recipe=NAME);
// every ```sh block must be one, each name has one check below, and a block without a
// check or a check without a block fails the suite, so the page and the tests cannot
// drift apart.
import Foundation
import HudsonTestSupport
import Testing

/// One ```sh recipe=NAME block of the cookbook.
struct Recipe: Sendable, CustomTestStringConvertible {
    var name: String
    var script: String
    /// The line of the opening fence, for messages.
    var line: Int

    var testDescription: String { "\(name) (docs/scripting.md:\(line))" }
}

enum Cookbook {
    static var url: URL { FakeGmail.repositoryRoot.appendingPathComponent("docs/scripting.md") }

    /// Every fenced block whose info string starts with `sh`: its info string, text and line.
    static func shellBlocks() throws -> [(info: String, script: String, line: Int)] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var blocks: [(info: String, script: String, line: Int)] = []
        var open: (info: String, lines: [String], line: Int)?
        var fenced = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if fenced {
                    if let block = open { blocks.append((block.info, block.lines.joined(separator: "\n") + "\n", block.line)) }
                    open = nil
                    fenced = false
                } else {
                    fenced = true
                    let info = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                    if info == "sh" || info.hasPrefix("sh ") { open = (info, [], index + 1) }
                }
                continue
            }
            if fenced { open?.lines.append(String(line)) }
        }
        return blocks
    }

    /// The named recipes (for the parameterised test; empty when the page cannot be read,
    /// which the coverage test reports).
    static func recipes() -> [Recipe] {
        ((try? shellBlocks()) ?? []).compactMap { block in
            name(of: block.info).map { Recipe(name: $0, script: block.script, line: block.line) }
        }
    }

    /// `sh recipe=digest` → `digest`.
    static func name(of info: String) -> String? {
        info.split(separator: " ").first { $0.hasPrefix("recipe=") }.map { String($0.dropFirst("recipe=".count)) }
    }

    /// The recipes this file checks; the coverage test compares them with the page.
    static let checked: Set<String> = [
        "digest", "newsletters", "vip", "unread-per-label", "incremental", "mbox", "relabel", "trash-promotions",
        "draft-summary", "replay-filters", "rules", "maildir-backup", "import-mbox", "git-am",
        "neomutt-notmuch", "aerc-notmuch", "mu4e", "timing", "cleanup",
    ]
}

/// A synced demo account, a home directory and a working directory to run recipes in.
final class Kitchen {
    let f = CLIFixture()
    let fake: FakeGmail

    init() throws {
        fake = try demoFake()
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        for directory in ["home/.config/hudson", "work"] {
            try FileManager.default.createDirectory(atPath: f.dir.path(directory), withIntermediateDirectories: true)
        }
    }

    var work: String { f.dir.path("work") }
    var home: String { f.dir.path("home") }

    /// Runs a recipe the way the cookbook promises: bash with `set -euo pipefail`, the
    /// built commands on PATH, in the working directory.
    func cook(_ recipe: Recipe) throws -> CommandResult {
        try f.shell("set -euo pipefail\ncd '\(work)'\n" + recipe.script)
    }

    /// New mail arriving at Gmail ("another device"); `hd-sync` brings it in.
    @discardableResult
    func deliver(from: String, subject: String, labels: [String] = ["INBOX", "UNREAD"],
                 daysAgo: Double = 0) throws -> (id: String, thread: String) {
        let raw = """
            From: \(from)\r
            To: Robin Hudson <demo@hudson.test>\r
            Subject: \(subject)\r
            Date: Wed, 02 Dec 2026 09:00:00 +0000\r
            Message-ID: <\(UUID().uuidString.lowercased())@cookbook.hudson.test>\r
            MIME-Version: 1.0\r
            Content-Type: text/plain; charset=utf-8\r
            \r
            \(subject), as the cookbook test wrote it.\r

            """
        var body: [String: Any] = ["raw": raw, "labelIds": labels]
        if daysAgo > 0 {
            body["internalDate"] = Int64((Date().timeIntervalSince1970 - daysAgo * 86_400) * 1000)
        }
        let answer = try #require(try fake.admin("POST", "insert", body) as? [String: Any])
        return (try #require(answer["id"] as? String), try #require(answer["threadId"] as? String))
    }

    func sync() throws {
        let result = try f.run("hd-sync")
        #expect(result.status == 0, "\(result)")
    }

    /// A command's output lines, after checking its exit status.
    func lines(_ command: String, _ arguments: String..., stdin: String? = nil, status: Int32 = 0) throws -> [String] {
        let result = try CommandRunner.run(BuiltProducts.executable(command), arguments, environment: f.environment, stdin: stdin)
        #expect(result.status == status, "\(command) \(arguments): \(result)")
        return result.lines
    }

    /// The Gmail ids of every message in the store (the window), spam and trash included.
    func storedMessages() throws -> Set<String> {
        Set(try lines("hd-search", "--messages", "--ids", "in:anywhere").map { String($0.dropFirst("message:".count)) })
    }
}

@Suite("docs/scripting.md: every recipe runs against the fake Gmail and does what the page says", .serialized)
struct CookbookTests {
    @Test("every ```sh block of the cookbook is a named recipe with a check, and every check has its recipe")
    func everyRecipeIsChecked() throws {
        let blocks = try Cookbook.shellBlocks()
        #expect(!blocks.isEmpty, "no ```sh blocks in docs/scripting.md")
        for block in blocks where Cookbook.name(of: block.info) == nil {
            Issue.record("docs/scripting.md:\(block.line): a ```sh block without recipe=NAME is not tested; name it and add a check")
        }
        let names = blocks.compactMap { Cookbook.name(of: $0.info) }
        #expect(Set(names).count == names.count, "recipe names repeat: \(names)")
        #expect(Set(names) == Cookbook.checked,
                "documented but unchecked: \(Set(names).subtracting(Cookbook.checked).sorted()); checked but not documented: \(Cookbook.checked.subtracting(names).sorted())")
    }

    @Test("the recipe runs with set -euo pipefail and does what the page says", arguments: Cookbook.recipes())
    func recipe(_ recipe: Recipe) throws {
        let kitchen = try Kitchen()
        switch recipe.name {
        case "digest": try digest(recipe, kitchen)
        case "newsletters": try newsletters(recipe, kitchen)
        case "vip": try vip(recipe, kitchen)
        case "unread-per-label": try unreadPerLabel(recipe, kitchen)
        case "incremental": try incremental(recipe, kitchen)
        case "mbox": try mbox(recipe, kitchen)
        case "relabel": try relabel(recipe, kitchen)
        case "trash-promotions": try trashPromotions(recipe, kitchen)
        case "draft-summary": try draftSummary(recipe, kitchen)
        case "replay-filters": try replayFilters(recipe, kitchen)
        case "rules": try rules(recipe, kitchen)
        case "maildir-backup": try maildirBackup(recipe, kitchen)
        case "import-mbox": try importMbox(recipe, kitchen)
        case "git-am": try gitAm(recipe, kitchen)
        case "neomutt-notmuch", "aerc-notmuch", "mu4e": try twoWay(recipe, kitchen)
        case "timing": try timing(recipe, kitchen)
        case "cleanup": try cleanup(recipe, kitchen)
        default: Issue.record("docs/scripting.md:\(recipe.line): no check for recipe \(recipe.name)")
        }
    }

    // MARK: - The checks, one per recipe

    /// Mail from the travel agent snoozed until Monday: out of the inbox, labelled Snoozed at
    /// Gmail, listed with its wake time; the unanswered sent mail found.
    func timing(_ recipe: Recipe, _ k: Kitchen) throws {
        let trip = try k.deliver(from: "Travel <travel@example.com>", subject: "Your itinerary")
        try k.sync()
        let result = try k.cook(recipe)
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.first?.hasPrefix("thread:\(trip.thread)\t") == true && result.lines.first?.contains("\tsnooze\t") == true,
                "\(result)")
        #expect(result.lines.count > 1, "awaiting replies listed: \(result)")
        let message = try #require(try k.fake.messages()[trip.id])
        #expect(!message.labels.contains("INBOX"), "\(message.labels)")
        #expect(try k.lines("hd-search", "--ids", "is:snoozed") == ["thread:\(trip.thread)"])
        // Sent later: saved as a Gmail draft now, listed with its time.
        #expect(result.lines.contains { $0.hasPrefix("draft:") }, "\(result)")
        #expect(result.lines.contains { $0.hasPrefix("outbox:") && $0.contains("\tscheduled\t") && $0.contains("Arrival") }, "\(result)")
    }

    /// Gmail's filters listed, previewed with counts, then applied and sent to Gmail.
    func replayFilters(_ recipe: Recipe, _ k: Kitchen) throws {
        let booked = try k.deliver(from: "Booking.com <noreply@booking.com>", subject: "Your trip to Osaka")
        try k.sync()
        try k.fake.admin("POST", "filters", ["filter": [
            ["id": "trips", "criteria": ["from": "booking.com"], "action": ["addLabelIds": ["Label_3"], "removeLabelIds": ["INBOX"]]],
        ]])
        let result = try k.cook(recipe)
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.first == "filter:trips\tfrom:(booking.com)\t+Travel/2026 archive", "\(result)")
        #expect(result.lines.contains { $0.hasSuffix(" -INBOX") }, "\(result)")
        #expect(result.lines.last?.hasPrefix("filter:trips\t") == true && result.stderr.contains("action "), "\(result)")
        try k.sync()
        let message = try #require(try k.fake.messages()[booked.id])
        #expect(message.labels.contains("Label_3") && !message.labels.contains("INBOX"), "\(message.labels)")
        #expect(try k.lines("hd-pending", "--count") == ["0"])
    }

    /// A rule appended to the rules file; new mail from the bot is handled by hd-sync, once.
    func rules(_ recipe: Recipe, _ k: Kitchen) throws {
        let before = try k.deliver(from: "CI <ci@builds.example>", subject: "Build 1 passed")
        try k.sync()
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.lines.first == "ci\tfrom:ci@builds.example\t=> read archive +Work", "\(result)")
        let after = try k.deliver(from: "CI <ci@builds.example>", subject: "Build 2 passed")
        try k.sync()
        let server = try k.fake.messages()
        let handled = try #require(server[after.id])
        #expect(handled.labels.contains("Label_1") && handled.labels.isDisjoint(with: ["INBOX", "UNREAD"]), "\(handled.labels)")
        // Mail stored before the rule: left as it was.
        #expect(try #require(server[before.id]).labels.isSuperset(of: ["INBOX", "UNREAD"]))
    }

    /// An old mbox into Gmail under a label: each message once, labelled, archived; again: nothing.
    func importMbox(_ recipe: Recipe, _ k: Kitchen) throws {
        let messages = (1...3).map { n in
            "From old@server.example Mon Jan  1 00:00:00 2009\nFrom: Old Friend <friend@server.example>\n"
                + "To: demo@hudson.test\nSubject: From the old days \(n)\nDate: Thu, 01 Jan 2009 10:0\(n):00 +0000\n"
                + "Message-ID: <old-\(n)@server.example>\n\nLetter \(n).\n>From the garden.\n\n"
        }
        try messages.joined().write(toFile: k.work + "/old.mbox", atomically: true, encoding: .utf8)
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("would import 3") && result.stderr.contains("would create labels: Old server")
                && result.stderr.contains("3 read: imported 3"), "\(result)")
        let state = try #require(try k.fake.admin("GET", "state") as? [String: Any])
        let label = try #require((state["labels"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "Old server" }?["id"] as? String)
        let imported = (state["messages"] as? [[String: Any]] ?? []).filter { ($0["messageId"] as? String ?? "").hasPrefix("<old-") }
        #expect(imported.count == 3 && imported.allSatisfy { $0["labelIds"] as? [String] == [label] }, "\(imported)")
        let again = try k.cook(recipe)
        #expect(again.status == 0 && again.stderr.contains("already imported 3"), "\(again)")
        let after = try #require(try k.fake.admin("GET", "state") as? [String: Any])
        #expect((after["messages"] as? [[String: Any]] ?? []).filter { ($0["messageId"] as? String ?? "").hasPrefix("<old-") }.count == 3)
    }

    /// The unread messages of the week, one line each, in a Gmail draft to the team.
    func draftSummary(_ recipe: Recipe, _ k: Kitchen) throws {
        try k.deliver(from: "Ada Lovelace <ada@analytical.example>", subject: "Engine notes")
        try k.sync()
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty && result.lines.count == 2
                && result.lines[1].hasPrefix("draft:"), "\(result)")
        let drafts = try #require(try k.fake.admin("GET", "drafts") as? [String: Any])["drafts"] as? [[String: Any]] ?? []
        #expect(drafts.map { $0["id"] as? String } == [String(result.lines[1].dropFirst("draft:".count))])
        let messageID = try #require(drafts.first?["messageId"] as? String)
        let message = try #require(try k.fake.admin("GET", "message/\(messageID)") as? [String: Any])
        let body = try #require(message["snippet"] as? String)
        #expect(body.hasPrefix("Unread this week:") && body.contains("Engine notes"), "\(message)")
    }

    /// Yesterday's unread mail, grouped by sender with one subject per line.
    func digest(_ recipe: Recipe, _ k: Kitchen) throws {
        try k.deliver(from: "Ada Lovelace <ada@analytical.example>", subject: "Migration plan")
        try k.deliver(from: "Ada Lovelace <ada@analytical.example>", subject: "Re: Migration plan")
        try k.deliver(from: "Mum <mum@hudson-family.example>", subject: "Sunday lunch")
        try k.deliver(from: "Ken Thompson <ken@bell-labs.example>", subject: "Already read", labels: ["INBOX"])
        try k.deliver(from: "Ken Thompson <ken@bell-labs.example>", subject: "Last week", daysAgo: 3)
        try k.sync()
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        var senders: [String] = []
        var subjects: [String: [String]] = [:]
        for line in result.lines {
            if line.hasPrefix("    "), let sender = senders.last {
                subjects[sender, default: []].append(String(line.dropFirst(4)))
            } else {
                senders.append(line)
            }
        }
        #expect(Set(senders).count == senders.count, "a sender appears twice: \(result.stdout)")
        #expect(subjects["Ada Lovelace"] == ["Migration plan", "Re: Migration plan"], "\(result.stdout)")
        #expect(subjects["Mum"] == ["Sunday lunch"], "\(result.stdout)")
        #expect(subjects["Ken Thompson"] == nil, "read or older mail is in the digest: \(result.stdout)")
        let unread = try k.lines("hd-search", "--messages", "--count", "is:unread newer_than:1d")
        #expect(subjects.values.map(\.count).reduce(0, +) == Int(unread.first ?? ""), "\(result.stdout)")
    }

    /// Newsletters in the inbox older than a week are archived at Gmail; newer ones and
    /// everything else keep their inbox label.
    func newsletters(_ recipe: Recipe, _ k: Kitchen) throws {
        let old = try k.deliver(from: "The Morning Brief <crew@morningbrief.example>", subject: "Weekly digest #901",
                                labels: ["INBOX", "Label_5"], daysAgo: 10)
        let older = try k.deliver(from: "This Week in Rust <newsletter@this-week-in-rust.org>", subject: "This Week in Rust 600",
                                  labels: ["INBOX", "UNREAD", "Label_5"], daysAgo: 30)
        let recent = try k.deliver(from: "The Morning Brief <crew@morningbrief.example>", subject: "Weekly digest #902",
                                   labels: ["INBOX", "Label_5"], daysAgo: 2)
        try k.sync()
        let targets = Set(try k.lines("hd-search", "--ids", "label:Newsletters in:inbox older_than:7d")
            .map { String($0.dropFirst("thread:".count)) })
        #expect(targets.isSuperset(of: [old.thread, older.thread]) && !targets.contains(recent.thread), "\(targets)")
        let stored = try k.storedMessages()
        let before = try k.fake.messages()

        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        try k.sync()
        let after = try k.fake.messages()
        for (id, message) in after where stored.contains(id) {
            if targets.contains(message.thread) {
                #expect(!message.labels.contains("INBOX"), "message \(id) of a newsletter thread is still in the inbox")
            } else {
                #expect(message.labels.contains("INBOX") == before[id]?.labels.contains("INBOX"), "message \(id) changed")
            }
        }
        #expect(after[recent.id]?.labels.contains("INBOX") == true)
        _ = try k.lines("hd-search", "--ids", "label:Newsletters in:inbox older_than:7d", status: 1)
    }

    /// Every inbox message from an address in the VIP file gets a star at Gmail, and no
    /// other message does.
    func vip(_ recipe: Recipe, _ k: Kitchen) throws {
        try """
            # people whose mail matters
            ada@analytical.example

              grace.hopper@navy.example
            """.write(toFile: k.home + "/.config/hudson/vip", atomically: true, encoding: .utf8)
        let grace = try k.deliver(from: "Grace Hopper <grace.hopper@navy.example>", subject: "COBOL review")
        let other = try k.deliver(from: "Ken Thompson <ken@bell-labs.example>", subject: "Not a VIP")
        try k.sync()
        let wanted = Set(try k.lines("hd-search", "--messages", "--ids",
                                     "in:inbox {from:ada@analytical.example from:grace.hopper@navy.example}")
            .map { String($0.dropFirst("message:".count)) })
        #expect(wanted.contains(grace.id) && wanted.count > 1, "\(wanted)")
        let before = try k.fake.messages()

        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let after = try k.fake.messages()
        for (id, message) in after {
            let expected = wanted.contains(id) || before[id]?.labels.contains("STARRED") == true
            #expect(message.labels.contains("STARRED") == expected, "message \(id): starred \(message.labels.contains("STARRED"))")
        }
        #expect(after[other.id]?.labels.contains("STARRED") == false)
        // Run again: everything is starred already, so the search is empty and that is fine.
        let again = try k.cook(recipe)
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    /// The counts are hd-labels' unread-thread counts, by name, largest first.
    func unreadPerLabel(_ recipe: Recipe, _ k: Kitchen) throws {
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        var expected: [String] = []
        for line in try k.lines("hd-labels", "--json") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let unread = try #require(object["unread_threads"] as? Int)
            let term = try #require(object["id"] as? String)
            if unread > 0 { expected.append("\(unread)  \(term.dropFirst("label:".count))") }
        }
        #expect(!expected.isEmpty)
        let printed = result.lines.map { $0.drop { $0 == " " } }.map(String.init)
        #expect(printed.sorted() == expected.sorted(), "\(result.stdout)")
        let counts = printed.compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(counts == counts.sorted(by: >), "not largest first: \(result.stdout)")
        #expect(printed.contains { $0.hasSuffix("  INBOX") })
    }

    /// The first run hands over every message; a second run nothing; after new mail and
    /// a change on another device, exactly those two messages.
    func incremental(_ recipe: Recipe, _ k: Kitchen) throws {
        let output = k.work + "/new-mail.ndjson"
        let point = k.home + "/.local/state/hudson/point"
        func handed() throws -> [String] {
            try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["type"] as? String == "message")
                return try #require(object["id"] as? String)
            }
        }
        func savedPoint() throws -> Int { try #require(Int(try String(contentsOfFile: point, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))) }

        let first = try k.cook(recipe)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        let stored = try k.storedMessages()
        #expect(Set(try handed()) == Set(stored.map { "message:\($0)" }))
        #expect(try handed().count == stored.count)
        let firstPoint = try savedPoint()
        #expect(firstPoint > 0)

        let second = try k.cook(recipe)
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second)")
        #expect(try handed().count == stored.count, "a run with no changes handed messages over")
        #expect(try savedPoint() == firstPoint)

        let arrived = try k.deliver(from: "Ada Lovelace <ada@analytical.example>", subject: "Fresh news")
        let touched = try #require(try k.lines("hd-search", "--messages", "--ids", "-n", "1", "in:inbox").first)
        try k.fake.modify(String(touched.dropFirst("message:".count)), add: ["STARRED"])
        try k.sync()
        let third = try k.cook(recipe)
        #expect(third.status == 0 && third.stderr.isEmpty, "\(third)")
        #expect(Set(try handed().dropFirst(stored.count)) == ["message:\(arrived.id)", touched])
        #expect(try handed().count == stored.count + 2)
        #expect(try savedPoint() > firstPoint)
    }

    /// Two nights: after each, notmuch's counts are Hudson's; the second writes only the changes.
    func maildirBackup(_ recipe: Recipe, _ k: Kitchen) throws {
        guard let notmuch = MailIndexers.notmuch else {
            #expect(!MailClients.isCI, "notmuch is required under CI=true (scripts/lib.sh: ensure_mail_indexers)")
            return
        }
        func agree(_ night: String) throws {
            func count(_ query: String) throws -> Int {
                let result = try k.f.shell("'\(notmuch)' count '\(query)'")
                #expect(result.status == 0, "\(result)")
                return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            }
            for (tag, query) in [("tag:inbox", "in:inbox"), ("tag:unread", "is:unread in:anywhere"), ("*", "in:anywhere"),
                                 ("tag:flagged", "is:starred in:anywhere")] {
                let hudson = try k.f.run("hd-search", "--messages", "--ids", "-n", "100000", query)
                #expect(hudson.status == 0 || hudson.status == 1, "\(hudson)")  // 1: none match
                #expect(try count(tag) == hudson.lines.count, "\(night): \(tag) / \(query)")
            }
        }
        let first = try k.cook(recipe)
        #expect(first.status == 0, "\(first)")
        try agree("first night")
        #expect(try count(files: k.home + "/Mail/gmail/cur") == (try k.storedMessages()).count)
        // A day: new mail, one message read and starred here.
        let arrived = try k.deliver(from: "Ada <ada@analytical.example>", subject: "Notes for tonight")
        let read = try #require(try k.lines("hd-search", "--messages", "--ids", "-n", "1", "is:unread in:inbox").first)
        _ = try k.lines("hd-mark", "read", "star", read)
        let second = try k.cook(recipe)
        #expect(second.status == 0, "\(second)")
        try agree("second night")
        // Only the night's changes (one new, one relabelled), and their tag lines consumed once applied.
        #expect(second.stdout.contains(": 1 written, 1 relabelled, "), "\(second)")
        #expect(!FileManager.default.fileExists(atPath: k.home + "/Mail/gmail/notmuch-tags"))
        #expect(try count(files: k.home + "/Mail/gmail/cur") == (try k.storedMessages()).count)
        #expect(try k.storedMessages().contains(arrived.id))
    }

    func count(files directory: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: directory).count
    }

    /// The mbox holds every matching message once, each with its own Message-ID.
    func mbox(_ recipe: Recipe, _ k: Kitchen) throws {
        let wanted = try k.lines("hd-search", "--messages", "--ids", "from:ada@analytical.example")
        #expect(wanted.count > 1, "the demo needs several messages from Ada for an mbox: \(wanted)")
        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let mbox = try String(contentsOfFile: k.work + "/ada.mbox", encoding: .utf8)
        let separators = mbox.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("From ") }
        #expect(separators.count == wanted.count, "\(separators)")
        #expect(separators.allSatisfy { $0.hasPrefix("From ada@analytical.example ") }, "\(separators)")
        #expect(!mbox.contains("\r\n"), "mbox lines end in LF")
        for reference in wanted {
            let shown = try k.lines("hd-show", "--json", "--no-fetch", reference)
            let object = try #require(try JSONSerialization.jsonObject(with: Data((shown.first ?? "").utf8)) as? [String: Any])
            let header = try #require(object["rfc822_message_id"] as? String)
            #expect(mbox.contains("Message-ID: \(header)") || mbox.contains("Message-Id: \(header)"), "\(reference) \(header) missing")
        }
    }

    /// A three-patch series (one commit message with a line starting "From ") delivered to
    /// Gmail, newest first by id order would apply backwards; the recipe applies it in
    /// order, and the clone's history equals the original's, message bodies included.
    func gitAm(_ recipe: Recipe, _ k: Kitchen) throws {
        let origin = k.f.dir.path("origin")
        let made = try k.f.shell("""
            set -e
            git init -q '\(origin)' && cd '\(origin)'
            git config user.name 'Ada Lovelace' && git config user.email ada@analytical.example
            echo base >notes.txt && git add notes.txt && git commit -q -m base
            for n in 1 2 3; do
                echo "line $n" >>notes.txt
                git commit -q -am "Change number $n" -m "From the engine's point of view, step $n."
            done
            git format-patch -q -3 -o '\(k.f.dir.path("patches"))'
            git clone -q '\(origin)' '\(k.work)/clone-tmp'
            """)
        #expect(made.status == 0, "\(made)")
        let patches = try FileManager.default.contentsOfDirectory(atPath: k.f.dir.path("patches")).sorted()
        #expect(patches.count == 3, "\(patches)")
        // Delivered in order, each a minute after the one before (as a list delivers them).
        let start = Int64((Date().timeIntervalSince1970 - 3_600) * 1000)
        for (index, name) in patches.enumerated() {
            let raw = try String(contentsOfFile: k.f.dir.path("patches/" + name), encoding: .utf8)
            try k.fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX"],
                                                "internalDate": start + Int64(index) * 60_000] as [String: Any])
        }
        try k.sync()
        // The recipe runs in the clone, at the series' base.
        let reset = try k.f.shell("""
            set -e
            cd '\(k.work)' && shopt -s dotglob && mv clone-tmp/* . && rmdir clone-tmp
            git reset -q --hard HEAD~3
            git config user.name Applier && git config user.email applier@example.org
            """)
        #expect(reset.status == 0, "\(reset)")
        let result = try k.cook(recipe)
        #expect(result.status == 0, "\(result)")
        let format = "--format=%T %an <%ae>%n%B"
        let applied = try k.f.shell("git -C '\(k.work)' log -4 '\(format)'")
        let original = try k.f.shell("git -C '\(origin)' log -4 '\(format)'")
        #expect(applied.status == 0 && applied.stdout.contains("From the engine's point of view, step 3.")
                && applied.stdout == original.stdout, "applied:\n\(applied.stdout)\noriginal:\n\(original.stdout)")
    }

    /// Every message of every Travel/2026 thread ends up under Receipts and no longer
    /// under Travel/2026, at Gmail and in the store.
    func relabel(_ recipe: Recipe, _ k: Kitchen) throws {
        let booked = try k.deliver(from: "Booking.com <noreply@booking.com>", subject: "Your trip to Osaka",
                                   labels: ["INBOX", "Label_3"])
        try k.sync()
        let threads = Set(try k.lines("hd-search", "--ids", "label:Travel/2026").map { String($0.dropFirst("thread:".count)) })
        #expect(threads.contains(booked.thread) && threads.count > 1, "\(threads)")
        let stored = try k.storedMessages()

        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        try k.sync()
        let moved = try k.fake.messages().filter { stored.contains($0.key) && threads.contains($0.value.thread) }
        #expect(!moved.isEmpty)
        for (id, message) in moved {
            #expect(message.labels.contains("Label_2") && !message.labels.contains("Label_3"), "message \(id): \(message.labels)")
        }
        #expect(try k.lines("hd-pending", "--count") == ["0"])
        // The store agrees with Gmail once the echo is in: Gmail records `+Receipts
        // -Travel/2026` on a message as one history record with both labelsAdded and
        // labelsRemoved, and both halves must apply (see r8_ in HudsonStoreTests).
        let left = try k.f.run("hd-search", "--count", "label:Travel/2026")
        #expect(left.status == 1 && left.stdout == "0\n", "\(left)")
    }

    /// Promotions older than 30 days go to trash at Gmail, after a dry run that counts
    /// the messages it would change; newer promotions and other mail stay where they were.
    func trashPromotions(_ recipe: Recipe, _ k: Kitchen) throws {
        let old = try k.deliver(from: "Shop <deals@shop.example>", subject: "Winter sale", labels: ["INBOX", "CATEGORY_PROMOTIONS"],
                                daysAgo: 45)
        let recent = try k.deliver(from: "Shop <deals@shop.example>", subject: "New arrivals",
                                   labels: ["INBOX", "CATEGORY_PROMOTIONS"], daysAgo: 3)
        try k.sync()
        let targets = Set(try k.lines("hd-search", "--messages", "--ids", "category:promotions older_than:30d")
            .map { String($0.dropFirst("message:".count)) })
        #expect(targets.contains(old.id) && !targets.contains(recent.id), "\(targets)")
        let stored = try k.storedMessages()
        let before = try k.fake.messages()

        let result = try k.cook(recipe)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(result.lines.map { $0.trimmingCharacters(in: .whitespaces) } == ["\(targets.count)"], "\(result)")
        try k.sync()
        let after = try k.fake.messages()
        for (id, message) in after where stored.contains(id) {
            if targets.contains(id) {
                #expect(message.labels.contains("TRASH") && !message.labels.contains("INBOX"), "message \(id): \(message.labels)")
            } else {
                #expect(message.labels == before[id]?.labels, "message \(id) changed")
            }
        }
        #expect(try k.lines("hd-pending", "--count") == ["0"])
        _ = try k.lines("hd-search", "--messages", "--ids", "category:promotions older_than:30d", status: 1)
        #expect(Set(try k.lines("hd-search", "--messages", "--ids", "in:trash category:promotions older_than:30d")
            .map { String($0.dropFirst("message:".count)) }) == targets)
    }
}
