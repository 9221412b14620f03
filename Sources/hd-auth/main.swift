// hd-auth: connect Gmail accounts (OAuth for installed apps), list and remove them.
// Its body is Sources/HudsonNetworkCommands/hd-auth/hd-auth.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdAuth()
