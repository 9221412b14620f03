/// The commands that talk to Gmail by name, for the multi-call binary (Sources/hudson-network).
public let networkCommands: [String: @MainActor () async -> Never] = [
    "hd-auth": hdAuth, "hd-sync": hdSync, "hd-send": hdSend, "hd-drafts": hdDrafts, "hd-filters": hdFilters, "hd-export": hdExport,
    "hd-import": hdImport, "hd-unsubscribe": hdUnsubscribe,
]
