// hd-send: send mail through a durable outbox that never sends a message twice.
// Its body is Sources/HudsonNetworkCommands/hd-send/hd-send.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdSend()
