// hd-labels: every label with its counts, from effective labels.
// Its body is Sources/HudsonCommands/hd-labels/hd-labels.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdLabels()
