// hd-filters: Gmail's own filters, and a rules file of your own, applied to the mail you have.
// Its body is Sources/HudsonNetworkCommands/hd-filters/hd-filters.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonNetworkCommands

await hdFilters()
