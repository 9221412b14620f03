/*!
 hd-mcp's server: the Model Context Protocol over standard input and output (JSON-RPC 2.0,
 one message per line; the MCP specification's stdio transport), in either of MCP's eras
 (ModernEnvelope.swift), the client's first request deciding which, as the official SDK's
 server does. Handshake era: `initialize` (the client's revision when Hudson speaks it,
 else the newest it speaks), `notifications/initialized`, then `tools/list` and
 `tools/call`; `ping` at any time. Modern era (2026-07-28): `server/discover`, `tools/list`
 and `tools/call`, each carrying its protocol version in `params._meta`; every result says
 `resultType` and names the server in its `_meta`. The tools are the same in both.
 Nothing but protocol messages goes to standard output. A line that is not JSON, too long,
 not a request, or names an unknown method gets a JSON-RPC error and the server reads on;
 it ends when its input closes. Starting reads nothing: the store is opened per call.
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

public struct MCPConfiguration: Sendable {
    /// The server's own policy (`--policy`); the account's ceiling may lower it.
    public var policy: AgentPolicy
    /// The size bound of an answer when the call does not set one (`--max-chars`).
    public var defaultMaxChars: Int
    /// The bound a call may ask for at most.
    public var maxCharsCeiling: Int
    /// The longest message line read; a longer one is refused, unread.
    public var maximumLineBytes: Int

    public static let standardMaxChars = 20_000
    public static let standardCeiling = 200_000
    public static let minimumMaxChars = 1_000

    public init(policy: AgentPolicy = .hold, defaultMaxChars: Int = standardMaxChars, maxCharsCeiling: Int = standardCeiling,
                maximumLineBytes: Int = 4 << 20) {
        self.policy = policy
        self.defaultMaxChars = defaultMaxChars
        self.maxCharsCeiling = maxCharsCeiling
        self.maximumLineBytes = maximumLineBytes
    }
}

public final class MCPServer {
    /// The handshake revisions Hudson speaks, newest first (the official SDKs' handshake
    /// revisions, reached through `initialize`).
    public static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    /// The modern revisions Hudson speaks, reached with a protocol version on every request;
    /// `server/discover` names these (as the SDK's server does: the handshake revisions are
    /// not reachable by the modern path).
    public static let modernProtocolVersions = ["2026-07-28"]

    private let tools: MCPTools
    private var initialized = false
    /// Set by the client's first request, and kept.
    private(set) var era: ProtocolEra?

    public init(invocation: Invocation, configuration: MCPConfiguration) {
        tools = MCPTools(invocation: invocation, configuration: configuration)
    }

    /// Serves until standard input closes.
    public func serve(input fd: Int32 = 0, output: OutputStream) throws {
        let reader = MCPLineReader(fd: fd, maximumLineBytes: tools.configuration.maximumLineBytes)
        while let item = reader.next() {
            let answer: JSONValue?
            switch item {
            case .oversized:
                answer = JSONRPC.error(id: .null, code: JSONRPC.invalidRequest,
                                       "message longer than \(tools.configuration.maximumLineBytes) bytes; not read")
            case .line(let bytes):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                answer = handle(line: bytes)
            }
            if let answer {
                try output.write(answer.encoded + "\n")
                try output.flush()
            }
        }
    }

    /// The answer to one line, or nil for a notification.
    func handle(line: [UInt8]) -> JSONValue? {
        guard let text = String(validating: line, as: UTF8.self) else {
            return JSONRPC.error(id: .null, code: JSONRPC.parseError, "message is not UTF-8")
        }
        let message: JSONValue
        do { message = try JSONValue.parse(text) } catch {
            return JSONRPC.error(id: .null, code: JSONRPC.parseError, "message is not JSON: \(error)")
        }
        if case .array = message {
            return JSONRPC.error(id: .null, code: JSONRPC.invalidRequest, "batches are not supported")
        }
        guard message.objectMembers != nil else {
            return JSONRPC.error(id: .null, code: JSONRPC.invalidRequest, "message is not a JSON object")
        }
        let id = message["id"]
        if let id {
            switch id {
            case .string, .int: break
            default: return JSONRPC.error(id: .null, code: JSONRPC.invalidRequest, "id must be a string or an integer")
            }
        }
        guard message["jsonrpc"] == .string("2.0") else {
            return id == nil ? nil : JSONRPC.error(id: id ?? .null, code: JSONRPC.invalidRequest, "jsonrpc must be \"2.0\"")
        }
        guard let method = message["method"]?.stringValue else {
            // A response from the client (Hudson sends no requests), or nonsense.
            if id != nil && (message["result"] != nil || message["error"] != nil) { return nil }
            return JSONRPC.error(id: id ?? .null, code: JSONRPC.invalidRequest, "no method")
        }
        let params = message["params"] ?? .object([])
        guard id != nil else {
            // Notifications get no answer (notifications/initialized, notifications/cancelled …).
            if method == "notifications/initialized" { initialized = true }
            return nil
        }
        guard params.objectMembers != nil else {
            return JSONRPC.error(id: id!, code: JSONRPC.invalidParams, "params must be an object")
        }
        // `initialize` belongs to the handshake even when a client stamps the envelope on it.
        let claimsModern = method != "initialize" && ModernEnvelope.isClaimed(by: params)
        let era = self.era ?? (claimsModern ? .modern : .handshake)
        self.era = era
        do {
            switch era {
            case .handshake:
                if claimsModern {
                    throw RPCFault(code: JSONRPC.invalidRequest, message: "this connection speaks the initialize handshake "
                                   + "(MCP \(Self.protocolVersions.last!) to \(Self.protocolVersions[0])); a request "
                                   + "carrying the 2026-07-28 envelope in params._meta is not accepted on it")
                }
                return JSONRPC.result(id: id!, try handshakeAnswer(method: method, params: params))
            case .modern:
                return JSONRPC.result(id: id!, try modernAnswer(method: method, params: params))
            }
        } catch let fault as RPCFault {
            return JSONRPC.error(id: id!, code: fault.code, fault.message, data: fault.data)
        } catch {
            return JSONRPC.error(id: id!, code: JSONRPC.internalError, MCPTools.oneLine(error))
        }
    }

    // MARK: - The two eras' answers, over one set of tools

    private func handshakeAnswer(method: String, params: JSONValue) throws -> JSONValue {
        switch method {
        case "initialize":
            let requested = try Arguments(params).string("protocolVersion")
            let version = requested.flatMap { Self.protocolVersions.contains($0) ? $0 : nil } ?? Self.protocolVersions[0]
            return .object([
                ("protocolVersion", .string(version)),
                ("capabilities", Self.capabilities),
                ("serverInfo", Self.serverInfo),
                ("instructions", .string(MCPTools.instructions)),
            ])
        case "ping":
            return .object([])
        case "tools/list":
            return toolList()
        case "tools/call":
            return try tools.call(params)
        default:
            throw unknown(method)
        }
    }

    /// A 2026-07-28 request: its envelope checked first (ModernEnvelope), then its method.
    /// `initialize` and `ping` were removed from the protocol in this revision.
    private func modernAnswer(method: String, params: JSONValue) throws -> JSONValue {
        if method == "initialize" {
            // As the SDK's server answers a handshake on a modern connection: -32022, naming
            // the revisions this connection speaks.
            throw ModernEnvelope.unsupported(
                try? Arguments(params).string("protocolVersion"), supported: Self.modernProtocolVersions,
                message: "this connection speaks MCP \(Self.modernProtocolVersions.joined(separator: ", ")), begun without "
                    + "the initialize handshake; initialize is not accepted on it")
        }
        _ = try ModernEnvelope(params: params, supported: Self.modernProtocolVersions)
        var result: JSONValue
        switch method {
        case "server/discover":
            result = .object([
                ("supportedVersions", .array(Self.modernProtocolVersions.map { .string($0) })),
                ("capabilities", Self.capabilities),
                ("instructions", .string(MCPTools.instructions)),
            ] + Self.cacheHint)
        case "tools/list":
            result = toolList(Self.cacheHint)
        case "tools/call":
            result = try tools.call(params)
        case "ping":
            throw RPCFault(code: JSONRPC.methodNotFound, message: "ping is not part of MCP 2026-07-28")
        default:
            throw unknown(method)
        }
        // 2026-07-28 "Result": servers MUST include resultType, and SHOULD name themselves in
        // every result's _meta.
        guard case .object(var members) = result else { return result }
        if !members.contains(where: { $0.0 == "resultType" }) { members.append(("resultType", .string("complete"))) }
        members.removeAll { $0.0 == "_meta" }
        members.append(("_meta", .object([(ModernEnvelope.serverInfoKey, Self.serverInfo)])))
        return .object(members)
    }

    private func toolList(_ extra: [(String, JSONValue)] = []) -> JSONValue {
        .object([("tools", .array(MCPTools.definitions))] + extra)
    }

    private func unknown(_ method: String) -> RPCFault {
        RPCFault(code: JSONRPC.methodNotFound, message: "unknown method \(TerminalSafety.quoted(method, limit: 60))")
    }

    static let capabilities: JSONValue = .object([("tools", .object([("listChanged", .bool(false))]))])
    static let serverInfo: JSONValue = .object([("name", .string("hudson")), ("title", .string("Hudson (local Gmail)")),
                                                ("version", .string(hudsonVersion))])
    /// 2026-07-28 cacheable results (discover, tools/list) say how long a client may keep
    /// them: as the SDK's server by default, not at all, and not shared.
    static let cacheHint: [(String, JSONValue)] = [("ttlMs", .int(0)), ("cacheScope", .string("private"))]
}
