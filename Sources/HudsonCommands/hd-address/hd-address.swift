// hd-address: addresses by prefix, ranked by mail sent to them, for completion and mail clients.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-address",
    abstract: "Addresses that start with PREFIX, those you write to first.",
    discussion: """
        Matches addresses, and words of the names given with them, that start with PREFIX
        (case-insensitively; every address with no PREFIX), ranked by how many messages
        you sent to each, then how many you received from it, then how recently it was
        on a message. Reads the local store only. --format mutt prints mutt's
        query_command format: a first line for mutt to show, then one
        address<TAB>name<TAB>info line per match. Exits 1 when nothing matches (with
        --format mutt too, after the first line).
        """,
    options: [
        .value("format", name: "FORMAT", kind: .choice(["text", "mutt"]),
               help: "text, or mutt for mutt's query_command.", default: "text"),
        .value("limit", short: "n", name: "N", kind: .integer, help: "Show at most N addresses; 0 for all.", default: "50"),
    ] + OutputOptions.all,
    operands: [OperandSpec("PREFIX", arity: .optional, help: "The start of an address, or of a word of a name.")],
    access: .readOnly,
    exitStatuses: [.noMatch, .usage, .temporaryFailure, .configuration])

/// hd-address's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdAddress() -> Never { Main.run(spec) { cli in
    let prefix = cli.arguments.operands.first ?? ""
    let mutt = cli.arguments.string("format") == "mutt"
    if mutt && (cli.arguments.flag("json") || cli.arguments.flag("ids")) {
        throw UsageError("--format mutt cannot be combined with --json or --ids")
    }
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let limit = try SearchInput.limit(cli)
    let entries = try store.addresses(prefix: prefix, accountID: account?.id, limit: limit)
    if mutt {
        try cli.stdout.write("hd-address: \(entries.count) match\(entries.count == 1 ? "" : "es")\n")
        for entry in entries { try cli.stdout.write(Records.muttQueryLine(entry)) }
        return entries.isEmpty ? .noMatch : .success
    }
    let sink = cli.makeSink()
    sink.heading(["ADDRESS", "NAME", "SENT", "RECEIVED", "LAST SEEN"])
    for entry in entries { try sink.emit(Records.address(entry)) }
    try sink.finish()
    return entries.isEmpty ? .noMatch : .success
}}
