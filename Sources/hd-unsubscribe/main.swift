// hd-unsubscribe: leave a list, once, by the safest method it offers.
// Its body is Sources/HudsonNetworkCommands/hd-unsubscribe/, which the multi-call binary shares.
import HudsonNetworkCommands

await hdUnsubscribe()
