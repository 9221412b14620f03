// hd-unsubscribe: leave a list, once, by the safest method it offers.
// Its body is Sources/HudsonNetworkCommands/hd-unsubscribe/hd-unsubscribe.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdUnsubscribe()
