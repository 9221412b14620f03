// hd-mcp: an MCP server over standard input and output, so an agent reads and triages mail
// through Hudson, under the user's policy.
import HudsonCLI
import HudsonMCP
import HudsonStore

private let spec = CommandSpec(
    name: "hd-mcp",
    abstract: "Serve the store to an AI agent over the Model Context Protocol (standard input and output).",
    discussion: """
        Speaks MCP (JSON-RPC 2.0, one message per line) on standard input and output until
        its input closes; logs go to standard error. An MCP client starts it as a child
        process, and opens either with the initialize handshake (revisions 2024-11-05 to
        2025-11-25) or with MCP 2026-07-28's protocol version on every request
        (server/discover); the same tools answer in both. Its tools: search, show, labels, pending, undo, mark, drafts, send and
        filters_dry_run. Every answer stays within a size bound (--max-chars, and the
        client's max_chars up to a ceiling) and names a cursor to read on; text from mail
        comes inside fenced untrusted-content blocks with controls removed. What the agent
        may do is the lower of --policy and the account's agent-policy (hd-auth set EMAIL
        agent-policy, default hold): read-only reads; drafts also saves drafts; hold also
        changes labels and sends, each held for the user's approval (hd-pending --held,
        hd-pending --approve, hd-undo); direct changes labels as hd-mark does, but a
        message to a recipient the account never wrote to is still held. Everything the
        agent does is recorded as the agent's (hd-undo --list, hd-pending).
        """,
    options: [
        .value("policy", name: "POLICY", kind: .choice(AgentPolicy.names),
               help: "read-only, drafts, hold or direct; never above the account's agent-policy.", default: "hold"),
        .value("max-chars", name: "N", kind: .integer,
               help: "The size bound of an answer, in characters, when the client sets none.", default: "20000"),
    ],
    // The store is opened per tool call, and its errors are answers: only usage exits.
    access: .readOnly,
    exitStatuses: [.usage])

/// hd-mcp's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdMcp() -> Never { Main.run(spec) { cli in
    let policy = AgentPolicy(rawValue: cli.arguments.string("policy") ?? "hold") ?? .hold
    let maxChars = try cli.arguments.int("max-chars", range: MCPConfiguration.minimumMaxChars...MCPConfiguration.standardCeiling)
        ?? MCPConfiguration.standardMaxChars
    let server = MCPServer(invocation: cli, configuration: MCPConfiguration(policy: policy, defaultMaxChars: maxChars))
    try server.serve(output: cli.stdout)
    return .success
}}
