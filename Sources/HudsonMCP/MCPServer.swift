/*!
 hd-mcp's server: the Model Context Protocol over standard input and output (JSON-RPC 2.0,
 one message per line; the MCP specification's "Lifecycle" and stdio transport). The lifecycle is
 `initialize` (the client's revision when Hudson speaks it, else the newest Hudson speaks),
 `notifications/initialized`, then `tools/list` and `tools/call`; `ping` at any time.
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
    /// revisions; 2026-07-28's `server/discover` is not served, and a client falls back).
    public static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

    private let tools: MCPTools
    private var initialized = false

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
        do {
            return JSONRPC.result(id: id!, try answer(method: method, params: params))
        } catch let fault as RPCFault {
            return JSONRPC.error(id: id!, code: fault.code, fault.message)
        } catch {
            return JSONRPC.error(id: id!, code: JSONRPC.internalError, MCPTools.oneLine(error))
        }
    }

    private func answer(method: String, params: JSONValue) throws -> JSONValue {
        switch method {
        case "initialize":
            let requested = try Arguments(params).string("protocolVersion")
            let version = requested.flatMap { Self.protocolVersions.contains($0) ? $0 : nil } ?? Self.protocolVersions[0]
            return .object([
                ("protocolVersion", .string(version)),
                ("capabilities", .object([("tools", .object([("listChanged", .bool(false))]))])),
                ("serverInfo", .object([("name", .string("hudson")), ("title", .string("Hudson (local Gmail)")),
                                        ("version", .string(hudsonVersion))])),
                ("instructions", .string(MCPTools.instructions)),
            ])
        case "ping":
            return .object([])
        case "tools/list":
            return .object([("tools", .array(MCPTools.definitions))])
        case "tools/call":
            return try tools.call(params)
        default:
            throw RPCFault(code: JSONRPC.methodNotFound, message: "unknown method \(TerminalSafety.quoted(method, limit: 60))")
        }
    }
}
