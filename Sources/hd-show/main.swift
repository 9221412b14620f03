// hd-show: read a thread or a message.
// Its body is Sources/HudsonCommands/hd-show/hd-show.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdShow()
