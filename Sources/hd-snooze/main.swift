// hd-snooze: snoozed threads and the wake check.
// Its body is Sources/HudsonCommands/hd-snooze/hd-snooze.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdSnooze()
