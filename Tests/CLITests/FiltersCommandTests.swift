// hd-filters against the fake Gmail: Gmail's filters listed as queries and hd-mark
// actions, replayed with --dry-run, as one action, undone, flushed in batches; the rules
// file checked with line and column; hd-sync running the rules on new mail exactly once
// across kill -9 and a history expiry.
import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-filters: Gmail's filters and the rules file, applied locally", .serialized)
struct FiltersCommandTests {
    /// A synced demo mailbox and its fake.
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try demoFake()
        try f.connect(fake, lookbackDays: 0)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func seedFilters(_ fake: FakeGmail, _ filters: [[String: Any]]) throws {
        try fake.admin("POST", "filters", ["filter": filters])
    }

    func insert(_ fake: FakeGmail, from: String, subject: String, id: String) throws -> String {
        let raw = "From: \(from)\r\nTo: demo@hudson.test\r\nSubject: \(subject)\r\nMessage-ID: <\(id)@example.org>\r\n\r\nhello\r\n"
        let answer = try fake.admin("POST", "insert", ["raw": raw, "labelIds": ["INBOX", "UNREAD"],
                                                       "internalDate": Int64(Date().timeIntervalSince1970 * 1000) + 60_000])
        return try #require((answer as? [String: Any])?["id"] as? String)
    }

    func ruleActions(_ f: CLIFixture) throws -> [[String: Any]] {
        try f.run("hd-undo", "--list", "--json").lines.compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["description"] as? String == "hd-sync rules" }
    }

    @Test("list shows each filter as a query and hd-mark actions, and says what is not replayed")
    func list() throws {
        let (f, fake) = try synced()
        #expect(try f.run("hd-filters", "list").status == 1)
        try seedFilters(fake, [
            ["id": "news", "criteria": ["from": "newsletter", "subject": "weekly  digest"],
             "action": ["removeLabelIds": ["INBOX", "UNREAD"], "addLabelIds": ["Label_5", "IMPORTANT"]]],
            ["id": "big", "criteria": ["to": "demo@hudson.test", "hasAttachment": true, "size": 2000, "sizeComparison": "larger",
                                       "negatedQuery": "from:me"],
             "action": ["addLabelIds": ["STARRED"], "forward": "copy@example.net"]],
            ["id": "nospam", "criteria": ["query": "list:(forum)"], "action": ["removeLabelIds": ["SPAM"]]],
        ])
        let listed = try f.run("hd-filters", "list")
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.lines == [
            "filter:news\tfrom:(newsletter) subject:\"weekly digest\"\t+Newsletters important archive read",
            "filter:big\t{to:(demo@hudson.test) cc:(demo@hudson.test) bcc:(demo@hudson.test)} -(from:me) has:attachment larger:2000\tstar"
                + "\t# forward to copy@example.net: Gmail forwards arriving mail only; Hudson does not send mail for a filter",
            "filter:nospam\t(list:(forum))\t(no action)\t# never send to spam: Gmail decides it on arrival; nothing to replay",
        ], "\(listed)")
        let json = try f.run("hd-filters", "list", "--json")
        let line = try #require(json.lines.first)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(first["type"] as? String == "filter" && first["id"] as? String == "filter:news")
        #expect(first["actions"] as? [String] == ["+Newsletters", "important", "archive", "read"])
        #expect(first["applicable"] as? Bool == true)
        // Text from Gmail never drives the terminal.
        try seedFilters(fake, [["id": "evil", "criteria": ["subject": "x\u{1B}[2J"],
                                "action": ["addLabelIds": ["STARRED"], "forward": "a\u{1B}]52;c;ZXZpbA==\u{07}@example.net"]]])
        for run in [try f.run("hd-filters", "list"), try f.run("hd-filters", "apply", "--dry-run")] {
            #expect(run.status == 0 && !(run.stdout + run.stderr).contains("\u{1B}") && !run.stderr.contains("\u{07}"), "\(run)")
        }
        // Gmail failing: a temporary failure, nothing printed as if there were no filters.
        try fake.faults([["path": "/settings/filters$", "status": 503, "times": -1]])
        let failed = try f.run("hd-filters", "list")
        #expect(failed.status == 75 && failed.stdout.isEmpty, "\(failed)")
    }

    @Test("a filter whose size criterion cannot be a term, or whose id is not of Gmail's shape, is not replayed, and said")
    func malformedFiltersNotWidened() throws {
        let (f, fake) = try synced()
        _ = try insert(fake, from: "d@x.example", subject: "from d", id: "d1")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-search", "--messages", "--count", "from:d@x.example -is:starred").stdout == "1\n")
        try seedFilters(fake, [
            ["id": "negative", "criteria": ["from": "d@x.example", "size": -5, "sizeComparison": "larger"],
             "action": ["addLabelIds": ["STARRED"]]],
            ["id": "nocomparison", "criteria": ["from": "d@x.example", "size": 5000], "action": ["addLabelIds": ["STARRED"]]],
            ["id": "unspecified", "criteria": ["from": "d@x.example", "size": 5000, "sizeComparison": "unspecified"],
             "action": ["addLabelIds": ["STARRED"]]],
            ["id": "../bad", "criteria": ["from": "d@x.example"], "action": ["addLabelIds": ["STARRED"]]],
        ])
        let listed = try f.run("hd-filters", "list")
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.lines == [
            "filter:negative\t(no query)\tstar\t# size criterion -5 is not a message size: not replayed (it would select more)",
            "filter:nocomparison\t(no query)\tstar\t# size criterion 5000 with no comparison: not replayed (it would select more)",
            "filter:unspecified\t(no query)\tstar\t# size criterion 5000 with no comparison: not replayed (it would select more)",
        ], "\(listed)")
        #expect(listed.stderr.split(separator: "\n").count == 1 && listed.stderr.contains("filter:../bad: Gmail's answer names a filter by an id"),
                "\(listed)")
        let json = try f.run("hd-filters", "list", "--json")
        #expect(json.lines.count == 3 && !json.stdout.contains("\"applicable\":true"), "\(json)")
        for arguments in [["apply", "--dry-run"], ["apply", "--dry-run", "filter:negative"], ["apply", "--no-flush"]] {
            let run = try CommandRunner.run(BuiltProducts.executable("hd-filters"), arguments, environment: f.environment)
            #expect(run.status == 0 && !run.stdout.contains("+STARRED"), "\(arguments): \(run)")
            #expect(run.stderr.contains("filter:negative: not replayed: size criterion -5"), "\(arguments): \(run)")
        }
        #expect(try f.run("hd-search", "--messages", "--count", "from:d@x.example -is:starred").stdout == "1\n")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("apply --dry-run prints every change and queues none; apply is one action that hd-undo takes back")
    func applyDryRunAndUndo() throws {
        let (f, fake) = try synced()
        try seedFilters(fake, [
            ["id": "stars", "criteria": ["from": "a"], "action": ["addLabelIds": ["STARRED"]]],
            ["id": "work", "criteria": ["query": "has:attachment"], "action": ["addLabelIds": ["Label_1"], "forward": "x@example.net"]],
        ])
        let unstarred = try f.run("hd-search", "--messages", "--count", "from:a -is:starred").stdout
        let unlabelled = try f.run("hd-search", "--messages", "--count", "has:attachment -label:Work").stdout
        let expected = Int(unstarred.dropLast())! + Int(unlabelled.dropLast())!
        #expect(expected > 0)
        let dry = try f.run("hd-filters", "apply", "--dry-run")
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.lines.count == expected, "\(dry)")
        #expect(dry.lines.allSatisfy { $0.contains("\t+STARRED\t") || $0.contains("\t+Work\t") })
        #expect(dry.stderr.contains("filter:work: not replayed: forward to x@example.net"))
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-undo", "--list").stdout.isEmpty)

        // Only the filter named, and only within --query.
        let one = try f.run("hd-filters", "apply", "--no-flush", "filter:stars", "--query", "is:unread")
        #expect(one.status == 0, "\(one)")
        #expect(try f.run("hd-search", "--messages", "--count", "from:a is:unread -is:starred").stdout == "0\n")
        #expect(try f.run("hd-search", "--messages", "--count", "has:attachment -label:Work").stdout == unlabelled)
        #expect(try f.run("hd-undo", "--no-flush").status == 0)
        #expect(try f.run("hd-search", "--messages", "--count", "from:a -is:starred").stdout == unstarred)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")

        // All of them: one action, pushed to Gmail; undone, Gmail has what it had.
        let before = try fake.messages()
        let applied = try f.run("hd-filters", "apply")
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stderr.contains("action "), "\(applied)")
        #expect(try f.run("hd-undo", "--list").lines.count == 3)
        #expect(try f.run("hd-search", "--messages", "--count", "from:a -is:starred").stdout == "0\n")
        #expect(try f.run("hd-sync").status == 0)
        let after = try fake.messages()
        #expect(after.filter { $0.value.labels.contains("STARRED") }.count > before.filter { $0.value.labels.contains("STARRED") }.count)
        #expect(try f.run("hd-undo").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try fake.messages().mapValues(\.labels) == before.mapValues(\.labels))
        // A filter Gmail does not have: said, and the rest applied (exit 2).
        let unknown = try f.run("hd-filters", "apply", "--dry-run", "filter:nope")
        #expect(unknown.status == 2 && unknown.stderr.contains("filter:nope: Gmail has no such filter"), "\(unknown)")
    }

    @Test("the flush sends one batchModify per label set for hundreds of messages")
    func flushBatches() throws {
        let (f, fake) = try synced()
        try seedFilters(fake, [["id": "all", "criteria": ["query": "in:anywhere"], "action": ["addLabelIds": ["Label_1"]]]])
        let count = Int(try f.run("hd-search", "--messages", "--count", "-label:Work").stdout.dropLast())!
        #expect(count > 100 && count < 1000)
        try fake.clearRequests()
        #expect(try f.run("hd-filters", "apply", "--no-flush").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        let writes = try fake.requests().filter { $0.method == "POST" && $0.path.contains("/messages/") }
        #expect(writes.count == 1 && writes[0].path.hasSuffix("/messages/batchModify"), "\(writes)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("the rules' changes reach Gmail once through lost answers, 5xx and 429, with nothing treated as unsent")
    func flushThroughFaults() throws {
        let (f, fake) = try synced()
        try FileManager.default.createDirectory(atPath: f.dir.path("config"), withIntermediateDirectories: true)
        try "[att] has:attachment => +Work star\n".write(toFile: f.dir.path("config/rules"), atomically: true, encoding: .utf8)
        let selected = try f.run("hd-search", "--messages", "--ids", "has:attachment").lines.map { String($0.dropFirst("message:".count)) }
        #expect(!selected.isEmpty)
        #expect(try f.run("hd-filters", "rules", "apply", "--no-flush").status == 0)
        try fake.faults([
            ["path": "/messages/(batchModify|[^/]+/modify)$", "mode": "apply_then_drop", "times": 1],
            ["path": "/messages/(batchModify|[^/]+/modify)$", "status": 503, "times": 1],
            ["path": "/messages/(batchModify|[^/]+/modify)$", "status": 429, "retry_after": 1, "times": 1],
        ])
        for _ in 0..<4 where try f.run("hd-pending", "--count").stdout != "0\n" {
            _ = try f.run("hd-sync")
        }
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        let fired = ((try fake.admin("GET", "faults") as? [String: Any])?["rules"] as? [[String: Any]] ?? []).map { $0["fired"] as? Int }
        #expect(fired == [1, 1, 1], "\(fired)")
        let server = try fake.messages()
        for id in selected {
            #expect(server[id]?.labels.isSuperset(of: ["Label_1", "STARRED"]) == true, "message \(id): \(String(describing: server[id]?.labels))")
        }
        #expect(try f.run("hd-search", "--messages", "--count", "has:attachment -label:Work").stdout == "0\n")
    }

    @Test("a rules file that does not parse fails with its line and column, in check and in hd-sync")
    func rulesErrors() throws {
        let (f, _) = try synced()
        try FileManager.default.createDirectory(atPath: f.dir.path("config"), withIntermediateDirectories: true)
        let path = f.dir.path("config/rules")
        let cases: [(String, String)] = [
            ("# fine\n[a] from:x => star\nfrom:(bob => archive\n", "rules:3:6: unclosed parenthesis"),
            ("from:bob archive\n", "rules:1:17: no => between the query and the actions"),
            ("from:bob => archive stir\n", "rules:1:21: not an action"),
            ("  => archive\n", "rules:1:3: no query before =>"),
            ("[a] x => star\n[A] y => star\n", "rules:2:2: a second rule named A"),
            ("from:bob =>\n", "rules:1:12: no action after =>"),
            ("from:bob => star +NoSuchLabel\n", "rules:1:18: no label named NoSuchLabel"),
        ]
        for (text, message) in cases {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let check = try f.run("hd-filters", "rules", "check")
            #expect(check.status == 78 && check.stderr.contains(message), "\(text) \(check)")
            let sync = try f.run("hd-sync")
            #expect(sync.status == 78 && sync.stderr.contains(message), "\(text) \(sync)")
        }
        try "# mine\n[boss] from:boss@example.org => star +Work\n\nsubject:\"weekly report\" => archive read\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let check = try f.run("hd-filters", "rules", "check")
        #expect(check.lines == ["boss\tfrom:boss@example.org\t=> star +Work", "line 4\tsubject:\"weekly report\"\t=> archive read"],
                "\(check)")
    }

    @Test("hd-sync applies the rules to new mail once and only once, across kill -9 mid-pass and a history expiry")
    func rulesOnNewMail() throws {
        let (f, fake) = try synced()
        let path = f.dir.path("config/rules")
        try "[boss] from:boss@example.org => star +Work\n".write(toFile: path, atomically: true, encoding: .utf8)
        // The pass that first sees the rules touches nothing already stored.
        let starred = try f.run("hd-search", "--messages", "--count", "is:starred").stdout
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-search", "--messages", "--count", "is:starred").stdout == starred)
        #expect(try ruleActions(f).isEmpty)

        let first = try insert(fake, from: "Boss <boss@example.org>", subject: "Plan", id: "boss1")
        _ = try insert(fake, from: "Other <other@example.org>", subject: "Other", id: "other1")
        // kill -9 after each commit of the pass in turn, then a whole pass.
        var killed = 0
        for commit in 1...6 {
            let run = try f.run("hd-sync", environment: ["HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)])
            if run.status == SIGKILL || run.status == 137 { killed += 1 }
        }
        #expect(killed >= 3)
        let pass = try f.run("hd-sync", "--json")
        #expect(pass.status == 0, "\(pass)")
        #expect(try f.run("hd-search", "--messages", "--ids", "is:starred label:Work from:boss").lines == ["message:\(first)"])
        #expect(try ruleActions(f).count == 1)
        #expect(try fake.messages()[first]?.labels.isSuperset(of: ["STARRED", "Label_1"]) == true)

        // The user takes the star off: no later pass puts it back, not even a re-list.
        #expect(try f.run("hd-mark", "unstar", "message:\(first)").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        try fake.admin("POST", "expire-history", [String: Any]())
        let second = try insert(fake, from: "boss@example.org", subject: "Again", id: "boss2")
        for _ in 0..<3 { #expect(try f.run("hd-sync").status == 0) }
        #expect(try f.run("hd-search", "--messages", "--ids", "is:starred from:boss").lines == ["message:\(second)"])
        let actions = try ruleActions(f)
        #expect(actions.count == 2, "\(actions)")
        // hd-undo takes a rule's work back.
        let id = try #require((actions.first?["id"] as? String)?.dropFirst("action:".count))
        #expect(try f.run("hd-undo", String(id)).status == 0)
        #expect(try f.run("hd-search", "--messages", "--count", "is:starred from:boss").stdout == "0\n")
    }

    @Test("rules test prints which rule matches each message; rules apply runs them over the store as one action")
    func rulesTestAndApply() throws {
        let (f, _) = try synced()
        let path = f.dir.path("config/rules")
        try "[attach] has:attachment => +Work\n[a] from:a => star\n".write(toFile: path, atomically: true, encoding: .utf8)
        let withAttachment = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "has:attachment").lines.first)
        let tested = try f.run("hd-filters", "rules", "test", withAttachment)
        #expect(tested.status == 0 && tested.stdout.hasPrefix("\(withAttachment)\tattach"), "\(tested)")
        let none = try #require(try f.run("hd-search", "--messages", "--ids", "-n", "1", "-has:attachment -from:a").lines.first)
        #expect(try f.run("hd-filters", "rules", "test", none).stdout == "\(none)\t(no rule)\n")
        // .eml files are judged as arriving mail by the same translator; a missing message is said.
        try "From: =?UTF-8?Q?Ada?= <a@example.org>\r\nSubject: x\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\nJVBERi0=\r\n--b--\r\n"
            .write(toFile: f.dir.path("a.eml"), atomically: true, encoding: .utf8)
        try "From: z@example.org\r\nSubject: y\r\n\r\nhi\r\n".write(toFile: f.dir.path("z.eml"), atomically: true, encoding: .utf8)
        let files = try f.run("hd-filters", "rules", "test", f.dir.path("a.eml"), f.dir.path("z.eml"), "message:nope")
        #expect(files.status == 2 && files.stderr.contains("message:nope: no such message"), "\(files)")
        #expect(files.lines == ["\(f.dir.path("a.eml"))\tattach, a", "\(f.dir.path("z.eml"))\t(no rule)"], "\(files)")
        let dry = try f.run("hd-filters", "rules", "apply", "--dry-run", "--json")
        #expect(dry.status == 0 && !dry.lines.isEmpty && dry.lines.allSatisfy { $0.contains("\"type\":\"planned_change\"") }, "\(dry)")
        let applied = try f.run("hd-filters", "rules", "apply", "--no-flush")
        #expect(applied.status == 0 && applied.lines.count == 2, "\(applied)")
        #expect(try f.run("hd-pending", "--count").stdout == "\(dry.lines.count)\n")
        #expect(try f.run("hd-undo", "--list").lines.count == 1)
    }

    @Test("a rules file that is a FIFO with no writer, a directory or a device is refused at once (78), in check, apply, test and hd-sync")
    func rulesFileNotAFile() throws {
        let (f, _) = try synced()
        try FileManager.default.createDirectory(atPath: f.dir.path("config"), withIntermediateDirectories: true)
        let path = f.dir.path("config/rules")
        #expect(mkfifo(path, 0o600) == 0)
        for arguments in [["hd-filters", "rules", "check"], ["hd-filters", "rules", "apply", "--dry-run"], ["hd-sync"]] {
            // A FIFO with no writer: the open used to wait for one for ever (the timeout fails the test).
            let result = try CommandRunner.run(BuiltProducts.executable(arguments[0]), Array(arguments.dropFirst()),
                                               environment: f.environment, timeout: 30)
            #expect(result.status == 78 && result.stderr == "\(arguments[0]): \(path): a FIFO, not a regular file\n", "\(result)")
        }
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let directory = try f.run("hd-filters", "rules", "check")
        #expect(directory.status == 78 && directory.stderr.contains("a directory, not a regular file"), "\(directory)")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
        let device = try CommandRunner.run(BuiltProducts.executable("hd-filters"), ["rules", "check"], environment: f.environment, timeout: 30)
        #expect(device.status == 78 && device.stderr.contains("a character device, not a regular file"), "\(device)")
        try FileManager.default.removeItem(atPath: path)
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: UInt8(ascii: "#"), count: (4 << 20) + 1))
        let large = try f.run("hd-filters", "rules", "check")
        #expect(large.status == 78 && large.stderr.contains("larger than 4 MiB"), "\(large)")
    }

    @Test("rules test: an .eml that is a FIFO or a device is refused with one line each, never waited on; the others are judged")
    func rulesTestFiles() throws {
        let (f, _) = try synced()
        try "from:z => star\n".write(toFile: f.dir.path("config/rules"), atomically: true, encoding: .utf8)
        #expect(mkfifo(f.dir.path("fifo.eml"), 0o600) == 0)
        try "From: z@example.org\r\nSubject: y\r\n\r\nhi\r\n".write(toFile: f.dir.path("z.eml"), atomically: true, encoding: .utf8)
        let result = try CommandRunner.run(BuiltProducts.executable("hd-filters"),
                                           ["rules", "test", f.dir.path("fifo.eml"), "/dev/zero", f.dir.path("z.eml")],
                                           environment: f.environment, timeout: 30)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr == "hd-filters: \(f.dir.path("fifo.eml")): a FIFO, not a regular file\nhd-filters: /dev/zero: a character device, not a regular file\n",
                "\(result)")
        #expect(result.lines == ["\(f.dir.path("z.eml"))\tline 1"], "\(result)")
    }

    @Test("label names: a rule's label with a control or bidi character is refused at its column; names with blanks or commas stay one action, one field")
    func rulesLabelNames() throws {
        let (f, fake) = try synced()
        let path = f.dir.path("config/rules")
        for (text, message) in [("from:x => +Flip\u{202E}txt\n", "rules:1:16: a control character or bidirectional mark (\\u{202E})"),
                                ("from:x => +\"Bad\u{7F}\"\n", "rules:1:16: a control character or bidirectional mark (\\u{7F})"),
                                ("from:x => +\"Zero\u{200E}width\"\n", "rules:1:17: a control character or bidirectional mark (\\u{200E})")] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let check = try f.run("hd-filters", "rules", "check")
            #expect(check.status == 78 && check.stderr.contains(message) && check.stderr.split(separator: "\n").count == 1
                    && !check.stderr.unicodeScalars.contains { TerminalSafetyProbe.unsafe($0) && $0 != "\n" }, "\(check)")
        }
        try FileManager.default.removeItem(atPath: path)
        try fake.admin("POST", "create-label", ["name": "Work, Projects"])
        try fake.admin("POST", "create-label", ["name": "Travel 2026"])
        #expect(try f.run("hd-sync").status == 0)
        try "[a, b] from:x => +\"Work, Projects\" +\"Travel 2026\" archive\n".write(toFile: path, atomically: true, encoding: .utf8)
        let check = try f.run("hd-filters", "rules", "check")
        #expect(check.lines == ["a, b\tfrom:x\t=> +\"Work, Projects\" +\"Travel 2026\" archive"], "\(check)")
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        let ids = Dictionary(uniqueKeysWithValues: (state["labels"] as? [[String: Any]] ?? []).compactMap { label in
            (label["name"] as? String).map { ($0, label["id"] as? String ?? "") }
        })
        try seedFilters(fake, [["id": "f1", "criteria": ["from": "x"],
                                "action": ["addLabelIds": [try #require(ids["Work, Projects"]), try #require(ids["Travel 2026"])]]]])
        let listed = try f.run("hd-filters", "list")
        #expect(listed.lines == ["filter:f1\tfrom:(x)\t+\"Work, Projects\" +\"Travel 2026\""], "\(listed)")
        // rules test: two rules named with commas are two fields.
        try "[a, b] from:z => star\n[c] from:z => archive\n".write(toFile: path, atomically: true, encoding: .utf8)
        try "From: z@example.org\r\nSubject: y\r\n\r\nhi\r\n".write(toFile: f.dir.path("z.eml"), atomically: true, encoding: .utf8)
        let tested = try f.run("hd-filters", "rules", "test", f.dir.path("z.eml"))
        #expect(tested.lines == ["\(f.dir.path("z.eml"))\t\"a, b\", c"], "\(tested)")
    }
}
