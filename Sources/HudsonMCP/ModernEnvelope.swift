/*!
 MCP's two eras on one stdio connection. Through 2025-11-25 a client opens with the
 `initialize` handshake; from 2026-07-28 there is no handshake: a client may probe
 `server/discover`, and every request carries its protocol version, client capabilities
 and (optionally) client info in `params._meta` (MCP 2026-07-28, "Per-request protocol
 fields"). As the official SDK's server does (mcp/server/runner.py serve_dual_era_loop),
 the client's first request decides the connection's era, once; a later request of the
 other era is refused. The checks of a modern request's envelope, and their order and
 codes, are the SDK's ladder (mcp/shared/inbound.py classify_inbound_request, then the
 2026-07-28 request schema).
 */
import HudsonCLI
import HudsonOutput

enum ProtocolEra {
    /// `initialize` first; revisions 2024-11-05 to 2025-11-25.
    case handshake
    /// A protocol version on every request; revision 2026-07-28.
    case modern
}

/// A modern request's `params._meta`, checked.
struct ModernEnvelope {
    static let protocolVersionKey = "io.modelcontextprotocol/protocolVersion"
    static let clientInfoKey = "io.modelcontextprotocol/clientInfo"
    static let clientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
    /// The result `_meta` key naming the server (2026-07-28: servers SHOULD stamp every result).
    static let serverInfoKey = "io.modelcontextprotocol/serverInfo"

    let protocolVersion: String

    /// Whether a request claims the modern era: its `params._meta` is an object holding the
    /// protocol-version key. That prefix is reserved, so handshake-era traffic never has it;
    /// a bare `_meta` is no evidence (handshake requests carry `progressToken` there). The
    /// key alone is the claim, so a half-built envelope is modern and told what it lacks.
    static func isClaimed(by params: JSONValue) -> Bool {
        params["_meta"]?[protocolVersionKey] != nil
    }

    /// The envelope of `params`, or the fault the SDK's ladder answers, first failure first:
    /// `_meta` not an object, or missing the version or the capabilities (-32602); a version
    /// that is not a string (-32602); one Hudson does not speak (-32022, naming those it
    /// does); then capabilities that are not an object, or client info that is not a
    /// name and a version (-32602, as the request schema refuses them).
    init(params: JSONValue, supported: [String]) throws {
        let required = "\(Self.protocolVersionKey) and \(Self.clientCapabilitiesKey)"
        guard let meta = params["_meta"], meta.objectMembers != nil else {
            throw RPCFault.invalidParams("params._meta must be an object carrying \(required) (MCP 2026-07-28)")
        }
        let missing = [Self.protocolVersionKey, Self.clientCapabilitiesKey].filter { meta[$0] == nil }
        guard missing.isEmpty else {
            throw RPCFault.invalidParams("params._meta lacks \(missing.joined(separator: " and ")) (MCP 2026-07-28)")
        }
        guard case .string(let version) = meta[Self.protocolVersionKey] else {
            throw RPCFault.invalidParams("params._meta \(Self.protocolVersionKey) must be a string")
        }
        guard supported.contains(version) else { throw Self.unsupported(version, supported: supported) }
        guard meta[Self.clientCapabilitiesKey]?.objectMembers != nil else {
            throw RPCFault.invalidParams("params._meta \(Self.clientCapabilitiesKey) must be an object")
        }
        if let info = meta[Self.clientInfoKey], info != .null {
            guard info["name"]?.stringValue != nil, info["version"]?.stringValue != nil else {
                throw RPCFault.invalidParams("params._meta \(Self.clientInfoKey) must be an object with a name and a version")
            }
        }
        protocolVersion = version
    }

    /// -32022 for `requested`: `data` names the revisions served (`supported`) and echoes
    /// the one asked for (`requested`, cut short: it is the client's text, and answers are
    /// bounded).
    static func unsupported(_ requested: String?, supported: [String], message: String? = nil) -> RPCFault {
        var data: [(String, JSONValue)] = [("supported", .array(supported.map { .string($0) }))]
        if let requested {
            let scalars = requested.unicodeScalars
            data.append(("requested", .string(scalars.count > 100 ? String(String.UnicodeScalarView(scalars.prefix(100))) : requested)))
        }
        let shown = requested.map { " " + TerminalSafety.quoted($0, limit: 40) } ?? ""
        return RPCFault(code: JSONRPC.unsupportedProtocolVersion,
                        message: message ?? "unsupported protocol version\(shown); this server speaks \(supported.joined(separator: ", "))",
                        data: .object(data))
    }
}
