// hd-export: write the mail to a Maildir, an mbox or .eml files, incrementally.
// Its body is Sources/HudsonNetworkCommands/hd-export/hd-export.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdExport()
