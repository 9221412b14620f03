// hd-senders: who sends the mail. Its body is Sources/HudsonCommands/hd-senders/hd-senders.swift.
import HudsonCommands

hdSenders()
