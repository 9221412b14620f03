import Foundation
import HudsonTestSupport
import Testing

/// The 2026-07-28 per-request envelope, as the official Python SDK's client sends it.
private let envelope = #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#
private let discover = #"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{\#(envelope)}}"#

@Suite("hd-mcp's two eras: MCP 2026-07-28 (server/discover, a protocol version on every request) beside the initialize handshake, as the official SDK's server answers them")
struct MCPModernEraTests {
    /// Runs hd-mcp over `lines` (then end of input); its answers, parsed, in order.
    func exchange(_ lines: [String], _ f: CLIFixture = CLIFixture(), environment: [String: String] = [:]) throws -> (answers: [[String: Any]], result: CommandResult) {
        let result = try CommandRunner.run(BuiltProducts.executable("hd-mcp"), [], environment: f.environment.merging(environment) { $1 },
                                           stdin: lines.joined(separator: "\n") + "\n", timeout: 60)
        var answers: [[String: Any]] = []
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["jsonrpc"] as? String == "2.0")
            answers.append(object)
        }
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        return (answers, result)
    }

    func modern(_ id: Int, _ method: String, _ params: String = "") -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{\#(params.isEmpty ? "" : params + ",")\#(envelope)}}"#
    }

    func result(_ answer: [String: Any]) -> [String: Any]? { answer["result"] as? [String: Any] }
    func error(_ answer: [String: Any]) -> [String: Any]? { answer["error"] as? [String: Any] }
    func code(_ answer: [String: Any]) -> Int? { error(answer)?["code"] as? Int }
    func serverName(_ result: [String: Any]?) -> String? {
        ((result?["_meta"] as? [String: Any])?["io.modelcontextprotocol/serverInfo"] as? [String: Any])?["name"] as? String
    }

    @Test("server/discover names 2026-07-28, the tools capability and the instructions, marks the result complete and uncached, names the server; and reads no store")
    func discoverAnswer() throws {
        let f = CLIFixture()
        let (answers, _) = try exchange([discover, modern(2, "tools/list"), modern(3, "tools/call", #""name":"labels","arguments":{}"#)], f,
                                        environment: ["HUDSON_DB": f.dir.path("nowhere/hudson.db")])
        #expect(answers.count == 3)
        let discovered = try #require(result(answers[0]), "\(answers[0])")
        #expect(answers[0]["id"] as? String == "d")
        #expect(discovered["supportedVersions"] as? [String] == ["2026-07-28"])
        #expect((discovered["capabilities"] as? [String: Any])?["tools"] as? [String: Bool] == ["listChanged": false])
        #expect((discovered["instructions"] as? String)?.contains("untrusted-mail-content") == true)
        #expect(discovered["resultType"] as? String == "complete")
        #expect(discovered["ttlMs"] as? Int == 0 && discovered["cacheScope"] as? String == "private")
        #expect(serverName(discovered) == "hudson")
        #expect(discovered["protocolVersion"] == nil && discovered["serverInfo"] == nil)

        let listed = try #require(result(answers[1]), "\(answers[1])")
        #expect((listed["tools"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            == ["search", "show", "labels", "pending", "undo", "mark", "drafts", "send", "filters_dry_run"])
        #expect(listed["resultType"] as? String == "complete" && listed["ttlMs"] as? Int == 0 && listed["cacheScope"] as? String == "private")
        #expect(serverName(listed) == "hudson")
        // A tool's failure is still an isError result, in the modern shape.
        let called = try #require(result(answers[2]), "\(answers[2])")
        #expect(called["isError"] as? Bool == true && called["resultType"] as? String == "complete" && serverName(called) == "hudson")
        #expect(!FileManager.default.fileExists(atPath: f.dir.path("nowhere")))
    }

    @Test("a modern tools/call runs the same tool as a handshake one: the same content, cursor and isError, plus resultType and _meta")
    func sameToolsInBothEras() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let call = #""name":"search","arguments":{"query":"in:anywhere","limit":1,"max_chars":1000}"#
        let (legacy, _) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{\#(call)}}"#,
        ], f)
        let (modernAnswers, _) = try exchange([modern(2, "tools/call", call)], f)
        let handshake = try #require(result(legacy[1]), "\(legacy)")
        var modernResult = try #require(result(modernAnswers[0]), "\(modernAnswers)")
        #expect(handshake["resultType"] == nil && handshake["_meta"] == nil)
        #expect(modernResult.removeValue(forKey: "resultType") as? String == "complete")
        #expect(serverName(modernResult) == "hudson")
        modernResult["_meta"] = nil
        #expect(Set(handshake.keys) == Set(modernResult.keys) && handshake.keys.contains("structuredContent"))
        #expect(handshake["isError"] as? Bool == false && modernResult["isError"] as? Bool == false)
        // The fence's nonce differs per call; the rest is the same text.
        func text(_ result: [String: Any]) -> String {
            let text = ((result["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
            return text.replacingOccurrences(of: #"nonce="[a-z0-9]+""#, with: "nonce", options: .regularExpression)
        }
        #expect(text(handshake) == text(modernResult) && text(handshake).contains("thread:"))
        #expect((handshake["structuredContent"] as? [String: Any])?["nextCursor"] as? String
            == (modernResult["structuredContent"] as? [String: Any])?["nextCursor"] as? String)
    }

    @Test("a protocol version Hudson does not speak: -32022 naming 2026-07-28 as supported and the version asked for; the next request is answered")
    func unsupportedVersion() throws {
        func meta(_ version: String) -> String {
            #""_meta":{"io.modelcontextprotocol/protocolVersion":\#(version),"io.modelcontextprotocol/clientCapabilities":{}}"#
        }
        let (answers, run) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{\#(meta("\"2099-01-01\""))}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{\#(meta("\"2025-11-25\""))}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"labels",\#(meta("\"\\u001b[2J\\u202e" + String(repeating: "9", count: 5000) + "\""))}}"#,
            modern(4, "tools/list"),
        ])
        #expect(answers.count == 4)
        for (answer, requested) in zip(answers.prefix(3), ["2099-01-01", "2025-11-25", nil]) {
            #expect(code(answer) == -32022, "\(answer)")
            let data = try #require(error(answer)?["data"] as? [String: Any], "\(answer)")
            #expect(data["supported"] as? [String] == ["2026-07-28"])
            if let requested { #expect(data["requested"] as? String == requested) }
            #expect((data["requested"] as? String).map { $0.count <= 100 } == true)
            let message = try #require(error(answer)?["message"] as? String)
            #expect(!message.contains("\n") && !message.contains("\u{1B}") && !message.contains("\u{202E}") && message.count < 300, "\(message)")
        }
        #expect(!run.stdout.contains("\u{1B}"))
        #expect(result(answers[3])?["tools"] != nil)
    }

    @Test("a modern request with _meta missing, garbled, half-built or mistyped: -32602 saying what is wrong; the next request is answered")
    func missingOrGarbledMeta() throws {
        let version = #""io.modelcontextprotocol/protocolVersion":"2026-07-28""#
        let capabilities = #""io.modelcontextprotocol/clientCapabilities":{}"#
        let cases = [
            #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":"garbled"}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":[1,2]}}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{\#(version)}}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{\#(capabilities)}}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5,\#(capabilities)}}}"#,
            #"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null,\#(capabilities)}}}"#,
            #"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{\#(version),"io.modelcontextprotocol/clientCapabilities":"x"}}}"#,
            #"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"labels","_meta":{\#(version),\#(capabilities),"io.modelcontextprotocol/clientInfo":"x"}}}"#,
            #"{"jsonrpc":"2.0","id":11,"method":"server/discover","params":{"_meta":{\#(version),\#(capabilities),"io.modelcontextprotocol/clientInfo":{"name":1}}}}"#,
        ]
        let (answers, _) = try exchange([discover] + cases + [modern(12, "tools/list")])
        #expect(answers.count == cases.count + 2)
        for answer in answers.dropFirst().dropLast() {
            #expect(code(answer) == -32602, "\(answer)")
            let message = error(answer)?["message"] as? String ?? ""
            #expect(!message.contains("\n") && !message.isEmpty, "\(message)")
        }
        #expect((error(answers[1])?["message"] as? String)?.contains("io.modelcontextprotocol/protocolVersion") == true)
        #expect((error(answers[5])?["message"] as? String)?.contains("lacks io.modelcontextprotocol/clientCapabilities") == true)
        #expect(result(answers.last!)?["tools"] != nil)
        // A client info of null reads as absent (it is optional).
        let (optional, _) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{\#(version),\#(capabilities),"io.modelcontextprotocol/clientInfo":null}}}"#,
        ])
        #expect(result(optional[0])?["tools"] != nil, "\(optional)")
    }

    @Test("a client mixing eras: initialize on a modern connection is -32022 naming 2026-07-28; an enveloped request on a handshake connection is -32600; ping is gone in 2026-07-28")
    func mixingEras() throws {
        let (modernFirst, _) = try exchange([
            discover,
            #"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2026-07-28",\#(envelope)}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
            modern(6, "ping"),
            modern(7, "resources/list"),
            modern(8, "tools/list"),
        ])
        #expect(modernFirst.count == 8)
        #expect(result(modernFirst[0])?["supportedVersions"] != nil)
        for (answer, requested) in zip(modernFirst[1...3], ["2025-11-25", nil, "2026-07-28"]) {
            #expect(code(answer) == -32022, "\(answer)")
            let data = error(answer)?["data"] as? [String: Any]
            #expect(data?["supported"] as? [String] == ["2026-07-28"], "\(answer)")
            #expect(data?["requested"] as? String == requested, "\(answer)")
        }
        #expect(code(modernFirst[4]) == -32602, "a ping without the envelope fails the envelope's check first: \(modernFirst[4])")
        #expect(code(modernFirst[5]) == -32601 && code(modernFirst[6]) == -32601, "\(modernFirst[5...6])")
        #expect(result(modernFirst[7])?["tools"] != nil && result(modernFirst[7])?["resultType"] as? String == "complete")

        let (handshakeFirst, _) = try exchange([
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            modern(2, "tools/list"),
            discover,
            #"{"jsonrpc":"2.0","id":3,"method":"server/discover"}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"bogus"}}}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
        ])
        #expect(handshakeFirst.count == 7)
        #expect(result(handshakeFirst[0])?["protocolVersion"] as? String == "2025-06-18")
        #expect(code(handshakeFirst[1]) == -32600 && code(handshakeFirst[2]) == -32600, "\(handshakeFirst[1...2])")
        #expect(code(handshakeFirst[3]) == -32601, "\(handshakeFirst[3])")
        #expect(code(handshakeFirst[4]) == -32600, "\(handshakeFirst[4])")
        let listed = try #require(result(handshakeFirst[5]), "a bare _meta is no claim: \(handshakeFirst[5])")
        #expect(listed["tools"] != nil && listed["resultType"] == nil && listed["ttlMs"] == nil && listed["_meta"] == nil)
        #expect(result(handshakeFirst[6])?.isEmpty == true)
    }

    @Test("initialize asking 2026-07-28 (with or without the envelope on it) is a handshake, answered with 2025-11-25, the newest handshake revision")
    func initializeAskingModern() throws {
        for params in [#""protocolVersion":"2026-07-28""#, #""protocolVersion":"2026-07-28",\#(envelope)"#] {
            let (answers, _) = try exchange([
                #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{\#(params),"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
                #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            ])
            let initialized = try #require(result(answers[0]), "\(answers)")
            #expect(initialized["protocolVersion"] as? String == "2025-11-25")
            #expect((initialized["serverInfo"] as? [String: Any])?["name"] as? String == "hudson")
            #expect(initialized["resultType"] == nil && initialized["_meta"] == nil)
            #expect(result(answers[1])?["tools"] != nil)
        }
    }

    @Test("only a request decides the era: notifications, bad lines and malformed requests before it do not")
    func firstRequestDecides() throws {
        let (answers, _) = try exchange([
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{\#(envelope)}}"#,
            "not json",
            #"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}"#,
            #"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#,
            discover,
            #"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        ])
        #expect(answers.map { code($0) } == [-32700, -32602, -32600, nil, -32602], "\(answers)")
        #expect(result(answers[3])?["supportedVersions"] != nil)
    }

    @Test("generated envelopes: random values for each _meta key on every method; an answer of the modern shape or -32602/-32022/-32601, one line")
    func generatedEnvelopes() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let values = ["null", "true", "0", "-1", "1.5", #""""#, #""2026-07-28""#, #""2025-11-25""#, #""2026-07-28 ""#, #""\u001b]0;x\u0007""#,
                      "[]", #"["2026-07-28"]"#, "{}", #"{"name":"a","version":"1"}"#, #"{"name":5}"#, #"{"tools":{}}"#]
        let keys = ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
                    "io.modelcontextprotocol/clientInfo", "progressToken", "io.modelcontextprotocol/logLevel"]
        let methods = ["server/discover", "tools/list", "tools/call", "ping", "initialize", "resources/list", "server/Discover"]
        var lines = [discover]
        for id in 0..<300 {
            var members: [String] = []
            for key in keys where random.next() % 4 != 0 {
                members.append("\"\(key)\":\(values[Int(random.next() % UInt64(values.count))])")
            }
            let meta = random.next() % 10 == 0 ? values[Int(random.next() % UInt64(values.count))] : "{" + members.joined(separator: ",") + "}"
            let method = methods[Int(random.next() % UInt64(methods.count))]
            let extra = method == "tools/call" ? #""name":"labels","arguments":{},"# : ""
            lines.append(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{\#(extra)"_meta":\#(meta)}}"#)
        }
        let (answers, run) = try exchange(lines)
        #expect(answers.count == lines.count, "seed \(seed)")
        #expect(!run.stdout.contains("\u{1B}"), "seed \(seed)")
        for answer in answers {
            if let error = error(answer) {
                #expect([-32602, -32022, -32601].contains(error["code"] as? Int ?? 0), "seed \(seed): \(answer)")
                let message = error["message"] as? String ?? ""
                #expect(!message.isEmpty && !message.contains("\n") && message.count < 400, "seed \(seed): \(message)")
            } else {
                let answered = try #require(result(answer), "seed \(seed): \(answer)")
                #expect(answered["resultType"] as? String == "complete" && serverName(answered) == "hudson", "seed \(seed): \(answer)")
            }
        }
    }
}
