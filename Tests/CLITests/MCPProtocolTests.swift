import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-mcp's JSON-RPC: every bad message gets an error and the server reads on; nothing else reaches standard output")
struct MCPProtocolTests {
    /// Runs hd-mcp over `lines` (then end of input) and returns its answers, parsed.
    func exchange(_ lines: [String], _ f: CLIFixture = CLIFixture(), arguments: [String] = []) throws -> (answers: [[String: Any]], result: CommandResult) {
        let result = try CommandRunner.run(BuiltProducts.executable("hd-mcp"), arguments, environment: f.environment,
                                           stdin: lines.joined(separator: "\n") + "\n", timeout: 60)
        var answers: [[String: Any]] = []
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["jsonrpc"] as? String == "2.0")
            answers.append(object)
        }
        return (answers, result)
    }

    func code(_ answer: [String: Any]) -> Int? { (answer["error"] as? [String: Any])?["code"] as? Int }

    @Test("initialize answers the client's revision when spoken, else the newest; ping; notifications get no answer")
    func lifecycle() throws {
        let (answers, result) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","id":"two","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
        ])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(answers.count == 4)
        #expect((answers[0]["result"] as? [String: Any])?["protocolVersion"] as? String == "2025-06-18")
        #expect(answers[1]["id"] as? String == "two")
        #expect((answers[1]["result"] as? [String: Any])?["protocolVersion"] as? String == "2025-11-25")
        #expect((answers[2]["result"] as? [String: Any])?.isEmpty == true)
        let tools = ((answers[3]["result"] as? [String: Any])?["tools"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(tools == ["search", "show", "labels", "pending", "undo", "mark", "drafts", "send", "filters_dry_run"])
    }

    @Test("starting, initialize and tools/list read no store: they answer with no store at all")
    func constantStart() throws {
        let f = CLIFixture()
        var environment = f.environment
        environment["HUDSON_DB"] = f.dir.path("nowhere/hudson.db")
        let result = try CommandRunner.run(BuiltProducts.executable("hd-mcp"), [], environment: environment, stdin: """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
            {"jsonrpc":"2.0","id":2,"method":"tools/list"}
            {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"labels","arguments":{}}}

            """, timeout: 60)
        let lines = result.stdout.split(separator: "\n")
        #expect(result.status == 0 && lines.count == 3, "\(result)")
        #expect(lines[2].contains(#""isError":true"#), "\(lines[2])")
        #expect(!FileManager.default.fileExists(atPath: f.dir.path("nowhere")))
    }

    /// The text of a tools/call answer and its isError.
    func toolText(_ answer: [String: Any]) -> (text: String, isError: Bool?)? {
        guard let result = answer["result"] as? [String: Any] else { return nil }
        let text = ((result["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
        return (text, result["isError"] as? Bool)
    }

    @Test("bad JSON, an oversized line, unknown methods and tools, requests of the wrong shape and bad ids: JSON-RPC errors; arguments a tool cannot take: the tool's one-line error (SEP-1303); the next request is answered")
    func errors() throws {
        let toolError = 1  // an isError result, not a JSON-RPC error
        let huge = #"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":""# + String(repeating: "x", count: 5 << 20) + #""}}"#
        let cases: [(String, Int?)] = [
            ("not json", -32700),
            (#"{"jsonrpc":"2.0","id":1,"method":"#, -32700),
            (huge, -32600),
            ("[1, 2]", -32600),
            (String(repeating: "[", count: 200_000), -32700),
            (#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","cursor":"thread:"}}}"#, toolError),
            ("42", -32600),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
            (#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, -32600),
            (#"{"jsonrpc":"2.0","id":3}"#, -32600),
            (#"{"jsonrpc":"2.0","id":4,"method":"resources/list"}"#, -32601),
            (#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}"#, -32602),
            (#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}"#, -32602),
            (#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":5}}}"#, toolError),
            (#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":1e9}}}"#, toolError),
            (#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"show","arguments":{"ref":"thread:a","bogus":1}}}"#, toolError),
            (#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"mark","arguments":{"actions":[1],"refs":["thread:a"]}}}"#, toolError),
            (#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"show","arguments":{"ref":"thread:a","max_chars":10}}}"#, toolError),
            (#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"search","arguments":"x"}}"#, -32602),
            (#"{"jsonrpc":"2.0","id":14,"method":"ping"}"#, nil),
        ]
        let (answers, result) = try exchange(cases.map(\.0))
        #expect(result.status == 0, "\(result)")
        #expect(answers.count == cases.count, "\(result.stdout.prefix(2000))")
        for (answer, expected) in zip(answers, cases.map(\.1)) {
            if expected == toolError {
                let tool = toolText(answer)
                #expect(tool?.isError == true && tool?.text.hasPrefix("invalid arguments: ") == true, "\(answer)")
                #expect(tool.map { !$0.text.contains("\n") && $0.text.count < 400 } == true, "\(answer)")
                continue
            }
            #expect(code(answer) == expected, "\(answer)")
            if let message = (answer["error"] as? [String: Any])?["message"] as? String {
                #expect(!message.contains("\n") && message.count < 400, "\(message)")
            }
        }
    }

    @Test("generated input: random and mutated messages never crash or hang the server; every answer is JSON-RPC")
    func generatedInput() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let valid = [
            #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"in:inbox"}}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mark","arguments":{"actions":["archive"],"refs":["thread:a"]}}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"show","arguments":{"ref":"message:abc","cursor":"offset:5"}}}"#,
            // MCP 2026-07-28's per-request envelope.
            #"{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ]
        var lines: [String] = []
        for _ in 0..<300 {
            var bytes = Array(valid[Int(random.next() % UInt64(valid.count))].utf8)
            for _ in 0..<Int(random.next() % 6) {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: position)
                default: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                }
            }
            lines.append(String(decoding: bytes.filter { $0 != 0x0A }, as: UTF8.self))
        }
        // The first request decides the era (handshake or 2026-07-28): once each.
        for opening in [valid[2], valid[4]] {
            let (answers, result) = try exchange([opening] + lines)
            #expect(result.status == 0, "seed \(seed): \(result.stderr)")
            #expect(answers.count <= lines.count + 1, "seed \(seed)")
            for answer in answers {
                #expect(answer["result"] != nil || answer["error"] != nil, "seed \(seed): \(answer)")
            }
        }
    }

    @Test("generated tool arguments: every tool, every member with values of every type; a result, one line when isError")
    func generatedToolArguments() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let tools: [String: [String]] = [
            "search": ["query", "limit", "cursor", "max_chars"], "show": ["ref", "cursor", "max_chars"],
            "labels": ["cursor", "max_chars"], "pending": ["held", "cursor", "max_chars"], "undo": ["action"],
            "mark": ["actions", "refs"], "drafts": ["action", "draft", "to", "cc", "bcc", "subject", "body", "cursor", "max_chars"],
            "send": ["to", "cc", "bcc", "subject", "body"], "filters_dry_run": ["query", "cursor", "max_chars"],
        ]
        let texts = ["", "thread:abc", "message:1a2b", "offset:5", "offset:-1", "action:1", "outbox:1", "draft:x", "archive",
                     "+Label", "in:inbox", "from:(", "\u{1B}[2Jx", "a@example.com", "list", "create", String(repeating: "z", count: 3000)]
        func value(_ depth: Int = 0) -> String {
            switch random.next() % 8 {
            case 0: return "null"
            case 1: return random.next() % 2 == 0 ? "true" : "false"
            case 2: return String(Int64(bitPattern: random.next()) >> Int64(random.next() % 63))
            case 3: return "1.5e300"
            case 4 where depth < 2: return "[" + (0..<Int(random.next() % 3)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            case 5 where depth < 2: return #"{"k":"# + value(depth + 1) + "}"
            default:
                let text = texts[Int(random.next() % UInt64(texts.count))]
                let data = try! JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed])
                return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
            }
        }
        var lines: [String] = []
        for id in 0..<400 {
            let (name, keys) = tools.randomElement(using: &random)!
            var members: [String] = []
            for key in keys + ["extra"] where random.next() % 3 != 0 { members.append("\"\(key)\":\(value())") }
            lines.append(#"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"\#(name)","arguments":{\#(members.joined(separator: ","))}}}"#)
        }
        let (answers, result) = try exchange(lines, CLIFixture(), arguments: ["--policy", "read-only"])
        #expect(result.status == 0, "seed \(seed): \(result.stderr.prefix(500))")
        #expect(answers.count == lines.count, "seed \(seed)")
        for answer in answers {
            do {
                #expect(answer["error"] == nil, "seed \(seed): arguments are the tool's error, not the protocol's: \(answer)")
                let result = try #require(answer["result"] as? [String: Any], "seed \(seed): \(answer)")
                let text = ((result["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
                if result["isError"] as? Bool == true { #expect(!text.contains("\n") && !text.isEmpty, "seed \(seed): \(text)") }
            }
        }
    }

    @Test("search answers each thread with the line hd-search prints and its snippet, says what was searched, and cuts a line longer than the bound")
    func searchLines() throws {
        let f = CLIFixture()
        let fake = try demoFake([])
        let subject = "Huge " + String(repeating: "subject ", count: 4000)
        let raw = "From: Huge <huge@example.com>\r\nTo: demo@hudson.test\r\nSubject: \(subject)\r\nMessage-ID: <huge@example.com>\r\n\r\nBody.\r\n"
        _ = try fake.admin("POST", "insert", ["raw_b64": Data(raw.utf8).base64EncodedString()])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let call = { (id: Int, arguments: String) in
            #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"search","arguments":\#(arguments)}}"#
        }
        let (answers, result) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            call(2, #"{"query":"in:anywhere -from:huge@example.com","limit":4}"#),
            call(3, #"{"query":"from:huge@example.com","max_chars":1000}"#),
        ], f)
        #expect(result.status == 0 && answers.count == 3, "\(result)")
        let search = try #require(toolText(answers[1]))
        #expect(search.isError == false, "\(search.text)")
        #expect(search.text.contains("searched: threads in every account of the local store"), "\(search.text)")
        #expect(search.text.contains("4 thread(s): id, date, messages, participants, subject, labels, snippet"), "\(search.text)")
        let json = try f.run("hd-search", "--json", "-n", "4", "in:anywhere", "-from:huge@example.com")
        let records = json.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(records.count == 4, "\(json)")
        let lines = search.text.split(separator: "\n").map(String.init)
        for record in records {
            let id = try #require(record["id"] as? String), snippet = try #require(record["snippet"] as? String)
            #expect(!snippet.isEmpty)
            let line = try #require(lines.first { $0.hasPrefix(id + "\t") }, "\(id): \(search.text)")
            #expect(line.hasSuffix("\t" + snippet), "\(line)")
        }
        let huge = try #require(toolText(answers[2]))
        #expect(huge.isError == false && huge.text.unicodeScalars.count <= 1000, "\(huge.text.unicodeScalars.count)")
        #expect(huge.text.contains("1 thread(s)") && huge.text.contains("Huge subject subject") && huge.text.contains("…"), "\(huge.text)")
    }

    @Test("mark with many unknown references: one line naming the first few, within the bound")
    func markUnknownReferences() throws {
        let f = CLIFixture()
        try f.connect(try demoFake([]))
        let refs = (0..<500).map { String(format: "\"thread:%016x\"", 0x1000 + $0) }.joined(separator: ",")
        let (answers, result) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mark","arguments":{"actions":["archive"],"refs":[\#(refs)]}}}"#,
        ], f, arguments: ["--policy", "direct"])
        #expect(result.status == 0 && answers.count == 2, "\(result)")
        let mark = try #require(toolText(answers[1]))
        #expect(mark.isError == true && !mark.text.contains("\n") && mark.text.count < 400, "\(mark.text)")
        #expect(mark.text.contains("thread:0000000000001000") && mark.text.contains("and 495 more"), "\(mark.text)")
    }

    @Test("the changing tools' answers: filters_dry_run lists what the rules would change and changes nothing; drafts update replaces a saved draft; direct sends at once to someone the account wrote to")
    func changingTools() throws {
        let f = CLIFixture()
        let fake = try demoFake([])
        try f.connect(fake)
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#
        func call(_ name: String, _ arguments: String, policy: String = "hold") throws -> (text: String, isError: Bool?) {
            let (answers, result) = try exchange([
                initialize, #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"\#(name)","arguments":\#(arguments)}}"#,
            ], f, arguments: ["--policy", policy])
            #expect(result.status == 0 && answers.count == 2, "\(result)")
            return try #require(answers.count == 2 ? toolText(answers[1]) : nil)
        }

        // filters_dry_run: the rules' changes as hd-filters' dry run counts them, nothing queued.
        try "[att] has:attachment => +Work star\n".write(toFile: f.dir.path("config/rules"), atomically: true, encoding: .utf8)
        let planned = try f.run("hd-filters", "rules", "apply", "--dry-run")
        #expect(planned.status == 0 && !planned.lines.isEmpty, "\(planned)")
        let dryRun = try call("filters_dry_run", "{}")
        #expect(dryRun.isError == false, "\(dryRun.text)")
        #expect(dryRun.text.hasPrefix("\(planned.lines.count) change(s) the rules would make; nothing was changed"), "\(dryRun.text)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")

        // drafts: create, saved by hd-sync, then updated in place.
        let created = try call("drafts", #"{"action":"create","to":["ada@example.com"],"subject":"First idea","body":"Later."}"#)
        #expect(created.isError == false && created.text.contains("draft queued"), "\(created.text)")
        #expect(try f.run("hd-sync").status == 0)
        let list = try call("drafts", #"{"action":"list"}"#)
        let draftID = try #require(list.text.split(separator: "\n").first { $0.contains("First idea") }?
            .split(separator: "\t").first.map(String.init), "\(list.text)")
        #expect(draftID.hasPrefix("draft:"), "\(list.text)")
        try fake.clearRequests()
        let updated = try call("drafts", #"{"action":"update","draft":"\#(draftID)","to":["ada@example.com"],"subject":"Second idea","body":"Sooner."}"#)
        #expect(updated.isError == false && updated.text.contains("draft queued"), "\(updated.text)")
        #expect(try f.run("hd-sync").status == 0)
        let id = String(draftID.dropFirst("draft:".count))
        let requests = try fake.requests()
        #expect(requests.contains { $0.method == "PUT" && $0.path.hasSuffix("/drafts/" + id) && $0.status == 200 }, "\(requests)")
        let drafts = try f.run("hd-drafts", "list")
        #expect(drafts.stdout.contains("Second idea") && !drafts.stdout.contains("First idea"), "\(drafts)")

        // send under a direct ceiling, to someone the account has written to: not held, sent once.
        #expect(try f.run("hd-auth", "set", "demo@hudson.test", "agent-policy", "direct").status == 0)
        let book = try f.run("hd-address", "--json")
        let known = try #require(book.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { ($0["sent"] as? Int ?? 0) > 0 }?["id"] as? String, "\(book)")
        try fake.clearRequests()
        let sent = try call("send", #"{"to":["\#(known)"],"subject":"Hello again","body":"Hi."}"#, policy: "direct")
        #expect(sent.isError == false && sent.text.contains("queued; the next hd-sync sends it"), "\(sent.text)")
        #expect(try f.run("hd-pending", "--held").lines.isEmpty)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try fake.requests().filter { $0.method == "POST" && $0.path.hasSuffix("/messages/send") }.count == 1)
    }

    @Test("generated command lines: hd-mcp exits 0 (input closed) or 64 with one diagnostic line first; nothing on standard output but JSON")
    func generatedCommandLines() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let words = ["--policy", "read-only", "hold", "direct", "drafts", "everything", "--max-chars", "999", "1000", "200000", "200001",
                     "-1", "x", "--db", "/nonexistent/db", "--account", "nobody@example.com", "--bogus", "-", "--", "\u{1B}]0;t\u{07}"]
        let f = CLIFixture()
        for _ in 0..<25 {
            let arguments = (0..<Int(random.next() % 5)).map { _ in words[Int(random.next() % UInt64(words.count))] }
            let result = try CommandRunner.run(BuiltProducts.executable("hd-mcp"), arguments, environment: f.environment,
                                               stdin: #"{"jsonrpc":"2.0","id":1,"method":"ping"}"# + "\n", timeout: 60)
            #expect([0, 64].contains(result.status), "seed \(seed): \(arguments): \(result)")
            if result.status == 64 {
                #expect(result.stderr.hasPrefix("hd-mcp: ") && result.stdout.isEmpty, "seed \(seed): \(arguments): \(result)")
                #expect(!result.stderr.contains("\u{1B}"), "seed \(seed): \(arguments)")
            } else {
                #expect(result.stdout == #"{"jsonrpc":"2.0","id":1,"result":{}}"# + "\n", "seed \(seed): \(arguments): \(result)")
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
