// The multi-call binary of the commands that talk to Gmail: scripts/install links each
// of their names to it, and it runs the one it was started as (HudsonCLI/MultiCall.swift).
import HudsonCLI
import HudsonNetworkCommands

guard let command = networkCommands[MultiCall.name] else { MultiCall.unknown(networkCommands.keys) }
await command()
