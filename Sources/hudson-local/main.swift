// The multi-call binary of the local commands: scripts/install links each of their
// names to it, and it runs the one it was started as (HudsonCLI/MultiCall.swift).
import HudsonCLI
import HudsonCommands

guard let command = localCommands[MultiCall.name] else { MultiCall.unknown(localCommands.keys) }
command()
