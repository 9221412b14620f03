// hd-drafts: Gmail drafts, listed, shown, sent once and deleted.
// Its body is Sources/HudsonNetworkCommands/hd-drafts/hd-drafts.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdDrafts()
