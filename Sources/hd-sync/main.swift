// hd-sync: keep the store current from Gmail, and send queued changes.
// Its body is Sources/HudsonNetworkCommands/hd-sync/hd-sync.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdSync()
