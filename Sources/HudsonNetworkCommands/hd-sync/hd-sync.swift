// hd-sync: keep the store current from Gmail, and send queued changes.
import HudsonCLI

private let spec = CommandSpec(
    name: "hd-sync",
    abstract: "Send queued changes to Gmail and bring the store up to date.",
    discussion: """
        One bounded pass per account: send the queue, poll history, backfill up to
        --max-pages pages of the window fixed at consent, and fetch up to 25 bodies in the
        prefetch window. --catch-up repeats larger passes (pages of 500, 500 bodies) until
        the account is caught up, then compacts the full-text index after a large load;
        --watch keeps going (2 s between passes while catching up, 30 s after) until
        interrupted, then exits 0; what keeps an account from syncing (another hd-sync on
        it, credentials removed or refused) is said once and waited out, and the account
        syncs again by itself once it is gone. A second hd-sync on an account that is
        already syncing reports an empty pass at once; a watch takes the account over
        when the other ends. Prints one line per account (--json: an object). A message
        Gmail will not serve (an error every time, an answer that cannot be stored) is
        parked and the pass goes on; it is told once on standard error, counted in the
        report, fetched again with growing back-off (one minute, doubling, up to six
        hours), and listed by hd-pending --parked. --catch-up asks again at once for the
        parked messages and exits 75 if some still fail. --push only sends the queued
        label changes, in one short attempt (what hd-mark does after a change), and
        prints nothing; 75 when some are still queued.
        """,
    options: [
        .flag("catch-up", help: "Repeat passes until backfill is complete, bodies are stored and the queue is empty."),
        .flag("watch", help: "Keep syncing until interrupted."),
        .value("exec", name: "CMD",
               help: "With --watch: after a pass that stored new mail, run CMD (sh -c) with the new references on its standard input."),
        .flag("push", help: "Only send queued label changes, in one short attempt; no history, backfill or bodies."),
        .flag("retry-parked", help: "Fetch parked messages again now, without waiting for their back-off."),
        .value("lookback-days", name: "N", kind: .integer,
               help: "Widen the backfill window to N days before consent (0: the whole mailbox); only the older range is fetched."),
        .value("prefetch-days", name: "N", kind: .integer, help: "Store bodies of mail this recent; 0 for all.", default: "90"),
        .value("max-pages", name: "N", kind: .integer,
               help: "Backfill at most N pages per pass (100 messages a page; 500 with --catch-up).", default: "5"),
        .flag("verbose", short: "v", help: "Report progress on standard error even when it is not a terminal."),
        .flag("json", help: "Print the report as NDJSON (docs/json.md)."),
        .value("fetch", name: "ITEM", help: "What hd-show needs from Gmail (hd-sync/FetchService.swift).",
               repeatable: true, hidden: true),
    ],
    access: .readWrite,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-sync's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
@MainActor
public func hdSync() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    if cli.arguments.flag("catch-up") && cli.arguments.flag("watch") {
        throw UsageError("--catch-up and --watch cannot be combined")
    }
    if cli.arguments.isGiven("fetch") {
        return try await FetchService.serve(cli, items: cli.arguments.strings("fetch"))
    }
    if cli.arguments.isGiven("exec") && !cli.arguments.flag("watch") {
        throw UsageError("--exec needs --watch")
    }
    if cli.arguments.flag("push") {
        for other in ["catch-up", "watch", "json", "verbose", "retry-parked"] where cli.arguments.flag(other) {
            throw UsageError("--push and --\(other) cannot be combined")
        }
        for other in ["lookback-days", "prefetch-days", "max-pages"] where cli.arguments.isGiven(other) {
            throw UsageError("--push and --\(other) cannot be combined")
        }
        return try await FlushAttempt.push(cli)
    }
    let runner = SyncRunner(
        invocation: cli,
        mode: cli.arguments.flag("watch") ? .watch : cli.arguments.flag("catch-up") ? .catchUp : .once,
        prefetchDays: try cli.arguments.int("prefetch-days", range: 0...36_500) ?? 90,
        maxPages: try cli.arguments.int("max-pages", range: 1...10_000) ?? 5,
        lookbackDays: try cli.arguments.int("lookback-days", range: 0...36_500),
        verbose: cli.arguments.flag("verbose"),
        retryParked: cli.arguments.flag("retry-parked"),
        newMailCommand: cli.arguments.string("exec"))
    return try await runner.run()
}}
