import HudsonOutput

/// JSON-RPC 2.0 as MCP's stdio transport carries it: the error codes the specification
/// names, and the shapes of a response.
enum JSONRPC {
    static let parseError = -32700
    static let invalidRequest = -32600
    static let methodNotFound = -32601
    static let invalidParams = -32602
    static let internalError = -32603
    /// MCP 2026-07-28: the request's protocol version is not one the server speaks; the
    /// error's data names the ones it does (`supported`) and the one asked for (`requested`).
    static let unsupportedProtocolVersion = -32022

    static func result(id: JSONValue, _ result: JSONValue) -> JSONValue {
        .object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)])
    }

    /// An error answer. `message` is Hudson's own text: never mail, and one line.
    static func error(id: JSONValue, code: Int, _ message: String, data: JSONValue? = nil) -> JSONValue {
        var error: [(String, JSONValue)] = [("code", .int(Int64(code))), ("message", .string(message))]
        if let data { error.append(("data", data)) }
        return .object([("jsonrpc", .string("2.0")), ("id", id), ("error", .object(error))])
    }
}

/// A protocol fault, answered as a JSON-RPC error rather than a tool result.
struct RPCFault: Error {
    var code: Int
    var message: String
    /// The error's `data` member, when the specification gives the code one.
    var data: JSONValue? = nil

    static func invalidParams(_ message: String) -> RPCFault { RPCFault(code: JSONRPC.invalidParams, message: message) }
}

/// A tool's own failure (refused by policy, no such message): an `isError` result of one line.
struct ToolFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension JSONValue {
    var objectMembers: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
