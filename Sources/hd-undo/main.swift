// hd-undo: undo the last hd-mark (or a given action) by queueing its inverse, or cancel a
// queued hd-send.
// Its body is Sources/HudsonCommands/hd-undo/hd-undo.swift, which the multi-call binary shares (Sources/hudson-*).
import HudsonCommands

hdUndo()
