// hd-mcp: Hudson for agents, a Model Context Protocol server on standard input and output.
// Its body is Sources/HudsonCommands/hd-mcp/hd-mcp.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdMcp()
