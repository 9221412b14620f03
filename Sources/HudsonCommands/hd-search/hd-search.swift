// hd-search: Gmail's query language over the local store.
import HudsonCLI
import HudsonOutput
import HudsonQuery
import HudsonStore

private let spec = CommandSpec(
    name: "hd-search",
    abstract: "Search the local store with Gmail's query language.",
    discussion: """
        Prints matching threads (or messages with --messages), newest first: a thread is
        placed by its most recent matching message (with --sort oldest, oldest first, by
        its oldest). Spam and trash are left out unless the
        query names them, as Gmail does. Exits 1 when nothing matches, 65 when the query
        does not parse. See hudson-query(7).
        """,
    options: [
        .flag("messages", short: "m", help: "Print messages instead of threads."),
        .value("sort", name: "ORDER", kind: .choice(["newest", "oldest", "relevance"]),
               help: "newest, oldest (a series in the order it was written), or relevance (bm25).", default: "newest"),
        .value("limit", short: "n", name: "N", kind: .integer, help: "Show at most N results; 0 for all.", default: "0"),
        .value("before", name: "REF", kind: .reference, help: "Continue after this result (the last one of the previous page)."),
        .flag("count", short: "c", help: "Print only the number of matching threads (or messages)."),
        .flag("explain", help: "Print the parsed query, the SQL and full-text expression it became, and the query plan."),
    ] + OutputOptions.all,
    operands: [OperandSpec("QUERY", kind: .query, arity: .oneOrMore, help: "A Gmail search query; several words are joined.")],
    access: .readOnly,
    dashOperands: true,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-search's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdSearch() -> Never { Main.run(spec) { cli in
    let query = try SearchInput.query(cli.arguments.operands)
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let sort = cli.arguments.string("sort").flatMap(SearchOptions.Sort.init(rawValue:)) ?? .newest
    let options = SearchInput.options(accountID: account?.id, sort: sort)
    let messages = cli.arguments.flag("messages")

    if cli.arguments.flag("explain") {
        let compiled = try store.compileSearch(query, options: options)
        var text = "query: \(query.simplified())\n\(compiled)\nplan:\n"
        for line in try store.searchPlan(query, options: options) { text += "  \(line)\n" }
        if cli.arguments.flag("count") {
            text += "count plan:\n"
            for line in try store.countPlan(query, options: options, threads: !messages) { text += "  \(line)\n" }
        }
        for note in try SearchNotes.notes(query, store: store, options: options) { text += "note: \(note)\n" }
        // The query's own characters are shown as escapes: an explanation must show what
        // was parsed, and a query's ESC or U+202E must not act on the terminal.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            TerminalSafety.quoted(String($0), limit: .max)
        }
        try cli.stdout.write(lines.joined(separator: "\n"))
        return .success
    }
    let notes = try SearchNotes.notes(query, store: store, options: options)
    if cli.arguments.flag("count") {
        let count = try store.countSearch(query, options: options, threads: !messages)
        try cli.stdout.write("\(count)\n")
        for note in notes { cli.warn(note) }
        return count == 0 ? .noMatch : .success
    }

    let limit = try SearchInput.limit(cli)
    let before = try SearchInput.reference(cli.arguments.string("before"))
    let names = try LabelNames(store: store)
    let sink = cli.makeSink()
    var found = 0
    // Each result is written as it is found: a pipe's reader has the first line at once.
    if messages {
        // Text and ids print no recipient or snippet: they are not read.
        let listing = cli.outputFormat != .json
        try store.forEachMessage(matching: query, options: options, limit: limit, before: before, listing: listing) { message in
            try sink.emit(MessageLine(message, labels: names))
            found += 1
        }
    } else {
        try store.forEachThread(matching: query, options: options, limit: limit, after: before) { thread in
            try sink.emit(Records.thread(thread, labels: names))
            found += 1
        }
    }
    try sink.finish()
    for note in notes { cli.warn(note) }
    return found == 0 ? .noMatch : .success
}}
