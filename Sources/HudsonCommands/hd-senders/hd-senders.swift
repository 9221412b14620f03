// hd-senders: who fills the mailbox, what is done with their mail, and how to leave their lists.
import HudsonCLI
import HudsonOutput
import HudsonQuery
import HudsonStore

private let spec = CommandSpec(
    name: "hd-senders",
    abstract: "Who sends the mail a query selects, and what you do with it.",
    discussion: """
        One record per list (by List-Id) or, for mail of no list, per sender address, for
        the mail QUERY selects (default: newer_than:90d): messages, threads, the share
        read, the share left unread out of the inbox, the share starred or replied to,
        the date of the newest, and the unsubscribe methods offered (one-click, https,
        mailto, none; unknown when the headers of its mail were stored before Hudson kept
        them). Mail you sent is not counted. Each record's id is the query term for its
        mail (from:ADDRESS or list:ID), for hd-search, hd-mark and hd-unsubscribe.
        --after-unsubscribe lists instead the senders that mailed again after an
        unsubscribe hd-unsubscribe recorded. Reads the local store only. Exits 1 when
        nothing matches.
        """,
    options: [
        .value("sort", name: "ORDER", kind: .choice(SenderSort.allCases.map(\.rawValue)),
               help: "volume (most first), read (least read first) or last-seen (newest first).", default: "volume"),
        .value("limit", short: "n", name: "N", kind: .integer, help: "Show at most N senders; 0 for all.", default: "50"),
        .flag("after-unsubscribe", help: "List the senders whose mail kept coming after an unsubscribe."),
    ] + OutputOptions.all,
    operands: [OperandSpec("QUERY", kind: .query, arity: .many, help: "The mail to count (default: newer_than:90d).")],
    access: .readOnly,
    dashOperands: true,
    exitStatuses: [.noMatch, .usage, .dataError, .temporaryFailure, .configuration])

/// hd-senders's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdSenders() -> Never { Main.run(spec) { cli in
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let limit = try SearchInput.limit(cli)
    let senders: [SenderSummary]
    if cli.arguments.flag("after-unsubscribe") {
        if !cli.arguments.operands.isEmpty { throw UsageError("--after-unsubscribe takes no QUERY") }
        senders = try store.sendersAfterUnsubscribe(accountID: account?.id, limit: limit)
    } else {
        let operands = cli.arguments.operands
        let query = try SearchInput.query(operands.isEmpty ? ["newer_than:90d"] : operands)
        let sort = cli.arguments.string("sort").flatMap(SenderSort.init(rawValue:)) ?? .volume
        senders = try store.senders(matching: query, options: SearchInput.options(accountID: account?.id), sort: sort, limit: limit)
    }
    let sink = cli.makeSink()
    sink.heading(["SENDER", "MESSAGES", "THREADS", "READ", "ARCHIVED UNREAD", "STARRED/REPLIED", "LAST SEEN", "UNSUBSCRIBE", "NAME"])
    for sender in senders { try sink.emit(Records.sender(sender)) }
    try sink.finish()
    // Said to a person only: a script reads the `unknown` method of each record.
    let unknown = senders.reduce(0) { $0 + $1.headersUnknown }
    if unknown > 0 {
        cli.noteForTerminal("\(unknown) message(s) were stored before Hudson kept List-Unsubscribe and have no stored source: their senders' methods may be unknown")
    }
    return senders.isEmpty ? .noMatch : .success
}}
