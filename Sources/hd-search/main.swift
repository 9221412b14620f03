// hd-search: Gmail's query language over the local store.
// Its body is Sources/HudsonCommands/hd-search/hd-search.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdSearch()
