// hd-ls: the inbox (or a label), newest first, from thread_rollup and each thread's newest message.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-ls",
    abstract: "List the threads in the inbox, or under a label, newest first.",
    discussion: """
        Reads the local store only. With a QUERY, lists the threads of the inbox (or label)
        that also match it, and exits 1 when none do. --changed-since lists the messages
        changed after a point of the change sequence and prints the new point on standard
        error, so a script can process new mail incrementally. --follow then keeps
        printing each change as another process commits it (woken by the store's files
        changing), until interrupted or until the reader of its output goes away.
        """,
    options: [
        .value("label", short: "l", name: "NAME", kind: .label, help: "List the threads carrying this label instead of the inbox."),
        .value("limit", short: "n", name: "N", kind: .integer, help: "Show at most N threads; 0 for all.", default: "50"),
        .value("before", name: "REF", kind: .reference, help: "Continue after this thread (the last one of the previous page)."),
        .value("changed-since", name: "SEQ", kind: .integer,
               help: "List the messages changed after SEQ; print the newest SEQ on standard error."),
        .flag("follow", short: "f", help: "After the changes since SEQ (default: now), print each new change as it is committed."),
        .flag("snoozed", help: "List the snoozed threads with their wake times, soonest first (hd-snooze(1))."),
    ] + OutputOptions.all,
    operands: [OperandSpec("QUERY", kind: .query, arity: .many, help: "Only the threads that also match this query.")],
    access: .readOnly,
    dashOperands: true,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-ls's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdLs() -> Never { Main.run(spec) { cli in
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let sink = cli.makeSink()
    let limit = try SearchInput.limit(cli)

    let since = try cli.arguments.int("changed-since", range: 0...Int.max).map(Int64.init)
    if cli.arguments.flag("follow") {
        for other in ["limit", "label", "before"] where cli.arguments.isGiven(other) {
            throw UsageError("--follow and --\(other) cannot be combined")
        }
        if !cli.arguments.operands.isEmpty { throw UsageError("--follow takes no QUERY") }
        try ChangeFeed.follow(store: store, since: since, accountID: account?.id, sink: sink, output: cli.stdout)
        return .success
    }
    if cli.arguments.flag("snoozed") {
        for other in ["label", "before", "changed-since"] where cli.arguments.isGiven(other) {
            throw UsageError("--snoozed and --\(other) cannot be combined")
        }
        if !cli.arguments.operands.isEmpty { throw UsageError("--snoozed takes no QUERY (hd-search is:snoozed QUERY)") }
        let names = try LabelNames(store: store)
        for snooze in try store.snoozedThreads(accountID: account?.id).prefix(limit) {
            try sink.emit(Records.snoozed(snooze, labels: names))
        }
        try sink.finish()
        return .success
    }
    if let since {
        let next = try ChangeFeed.list(store: store, since: since, accountID: account?.id, limit: limit, sink: sink)
        writeError("\(next)\n")
        return .success
    }

    let names = try LabelNames(store: store)
    var labelIDs: [(accountID: Int64, id: String)] = []
    if let label = cli.arguments.string("label") {
        labelIDs = try store.labelIDs(named: label, accountID: account?.id)
        if labelIDs.isEmpty { throw StoreError.unknownLabel(label) }
    }

    if !cli.arguments.operands.isEmpty {
        // Inbox or label, narrowed by a query: the one search translator does it.
        var operands = cli.arguments.operands
        operands.append(cli.arguments.string("label").map { "label:\"\($0.replacingQuotes)\"" } ?? "in:inbox")
        let query = try SearchInput.query(operands)
        let options = SearchInput.options(accountID: account?.id)
        let threads = try store.searchThreads(
            query, options: options, limit: limit, after: try SearchInput.reference(cli.arguments.string("before")))
        for thread in threads { try sink.emit(Records.thread(thread, labels: names)) }
        try sink.finish()
        // What the answer could not read (words of body-less mail, guessed attachments), as hd-search says it.
        for note in try SearchNotes.notes(query, store: store, options: options) { cli.warn(note) }
        return threads.isEmpty ? .noMatch : .success
    }

    var cursor: ThreadPageCursor?
    if let before = try SearchInput.reference(cli.arguments.string("before")) {
        guard case .thread(let id) = before, let found = try store.pageCursor(threadID: id, accountID: account?.id) else {
            throw UsageError("--before: \(before): not a thread in the store")
        }
        cursor = found
    }
    let threads = labelIDs.isEmpty
        ? try store.inboxThreads(accountID: account?.id, limit: limit, after: cursor)
        : try store.threads(labels: labelIDs, limit: limit, after: cursor)
    for thread in threads { try sink.emit(Records.thread(thread, labels: names)) }
    try sink.finish()
    return .success
}}

fileprivate extension String {
    var replacingQuotes: String { split(separator: "\"", omittingEmptySubsequences: false).joined(separator: " ") }
}
