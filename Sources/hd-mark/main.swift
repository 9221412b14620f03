// hd-mark: triage — archive, read, star, label — instantly and offline-safe.
// Its body is Sources/HudsonCommands/hd-mark/hd-mark.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdMark()
