// hd-ls: the inbox (or a label), newest first, from thread_rollup and each thread's newest message.
// Its body is Sources/HudsonCommands/hd-ls/hd-ls.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdLs()
