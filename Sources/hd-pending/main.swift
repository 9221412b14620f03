// hd-pending: every change queued and not yet confirmed by Gmail, and the outbox.
// Its body is Sources/HudsonCommands/hd-pending/hd-pending.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdPending()
