// hd-address: addresses by prefix. Its body is Sources/HudsonCommands/hd-address/hd-address.swift.
import HudsonCommands

hdAddress()
