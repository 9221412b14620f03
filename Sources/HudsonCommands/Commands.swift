/// The local commands by name, for the multi-call binary (Sources/hudson-local).
public let localCommands: [String: @Sendable () -> Never] = [
    "hd-ls": hdLs, "hd-search": hdSearch, "hd-show": hdShow, "hd-labels": hdLabels,
    "hd-pending": hdPending, "hd-mark": hdMark, "hd-undo": hdUndo, "hd-mcp": hdMcp,
    "hd-snooze": hdSnooze,
    "hd-address": hdAddress, "hd-senders": hdSenders,
]
