// hd-import: mail from an mbox, a Maildir or .eml files into Gmail, with its labels, once.
// Its body is Sources/HudsonNetworkCommands/hd-import/hd-import.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdImport()
