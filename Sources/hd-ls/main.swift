// hd-ls: the inbox (or a label), newest first, from thread_rollup alone.
// Its body is Sources/HudsonCommands/hd-ls.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdLs()
