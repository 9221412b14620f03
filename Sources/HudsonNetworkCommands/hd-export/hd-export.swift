// hd-export: write an account's mail as a Maildir, an mboxrd file or .eml files, incrementally.
import HudsonCLI
import HudsonExport
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-export",
    abstract: "Export the mail to a Maildir (for notmuch and mu), an mboxrd file or .eml files, incrementally.",
    discussion: """
        The first run writes every message of the account; later runs write only what changed
        since (the store's change sequence, recorded in TARGET's .hudson-export state): new
        messages, and in a Maildir the messages whose labels changed, under their new flags
        (S read, F starred, D draft, T trash) and X-Keywords header. Messages deleted at Gmail
        are kept, a backup, unless --mirror removes them. A Maildir gets a notmuch-tags file,
        the changes for notmuch tag --batch (appended until removed once applied), with
        Gmail's labels as tags named as lieer names them (inbox, unread, flagged, sent, ...). Sources come from the store when the
        account keeps them (hd-auth set EMAIL keep-raw on); the others are fetched from Gmail,
        counted in the report. Files are written to a temporary name and renamed into place,
        and the state is saved after each batch: a killed export resumes where it stopped.
        A two-way Maildir (--two-way, or --notmuch to keep a notmuch database on it too)
        first reads back what mail clients changed since the last run (flags S, F, T, a
        removed file; notmuch tags that name Gmail labels) and queues it as one triage
        action, as hd-mark does: its number on standard error, undone by hd-undo.
        """,
    options: [
        .value("format", name: "FORMAT", kind: .choice(ExportFormat.allCases.map(\.rawValue)),
               help: "maildir (TARGET a directory), mbox (TARGET a file, appended to) or eml (a directory of YEAR/MONTH/ID.eml).",
               default: "maildir"),
        .flag("mirror", help: "Remove the messages deleted at Gmail (not with --format mbox)."),
        .flag("no-fetch", help: "Never contact Gmail: export the messages whose source is stored; the rest wait for the next run."),
        .flag("verbose", short: "v", help: "Report progress on standard error even when it is not a terminal."),
        .flag("two-way", help: "Make the Maildir two-way from this run on: each run first reads back the flags clients changed (S, F, T, a removed file) and queues them as one triage action."),
        .flag("notmuch", help: "Make the Maildir two-way and keep the notmuch database whose path it is in step: index and tag what the export writes, and read back the tags clients change."),
        .flag("one-way", help: "Make a two-way export one-way again: nothing is read back from this run on."),
        .flag("dry-run", short: "n", help: "With a two-way export: print the triage a run would queue from what clients changed, and change nothing."),
    ],
    operands: [OperandSpec("TARGET", kind: .file, help: "The Maildir or .eml directory, or the mbox file.")],
    access: .readWrite,
    exitStatuses: [.partialFailure, .usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-export's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
@MainActor
public func hdExport() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    let format = ExportFormat(rawValue: cli.arguments.string("format") ?? "maildir") ?? .maildir
    let mirror = cli.arguments.flag("mirror")
    if mirror && format == .mbox { throw UsageError("--mirror: an mbox export is only appended to") }
    if cli.arguments.flag("one-way") && (cli.arguments.flag("two-way") || cli.arguments.flag("notmuch")) {
        throw UsageError("--one-way goes with neither --two-way nor --notmuch")
    }
    let twoWay: TwoWayMode? = cli.arguments.flag("notmuch") ? .notmuch : cli.arguments.flag("two-way") ? .maildir
        : cli.arguments.flag("one-way") ? .off : nil
    if twoWay != nil && twoWay != .off && format != .maildir { throw UsageError("--two-way: only a Maildir export can be two-way") }
    let dryRun = cli.arguments.flag("dry-run")
    // Durable: a read-back's commit must reach the disk before the export records its new baseline.
    let store = try cli.openStore(.readWrite, durable: true)
    let account = try cli.labelAccount(in: store)
    let fetch = SourceFetch(invocation: cli, email: account.email)
    let mayFetch = !cli.arguments.flag("no-fetch")
    let progress = CountProgress(command: "hd-export", verbose: cli.arguments.flag("verbose"))
    let report: ExportReport
    do {
        let exporter = try Exporter(store: store, account: account, format: format, path: cli.arguments.operands[0], mirror: mirror)
        exporter.twoWayRequest = twoWay
        exporter.dryRun = dryRun
        exporter.notmuch = NotmuchProcess(environment: cli.environment)
        let crash = TestHooks.crashPoint(environment: cli.environment)
        exporter.checkpoint = { point in if point == crash { TestHooks.crash() } }
        report = try await exporter.run(
            fetch: { ids in mayFetch ? try await fetch.sources(ids) : Dictionary(uniqueKeysWithValues: ids.map { ($0, .failure(NotFetched())) }) },
            progress: { done, fetched in progress.update("\(account.email): \(done) changes exported · \(fetched) fetched from Gmail") })
        // Kept to the exit: the process ends with the run and need not free it (the store
        // is closed as always, so its WAL is checkpointed and removed).
        stateKeptToExit = exporter.stateLeft
    } catch let error as ExportError {
        progress.finish()
        // What the user named and what the file system holds, escaped (one line, no terminal control).
        let message = error.description(quoting: { TerminalSafety.quoted($0, limit: 200) })
        switch error {
        case .busy, .temporarilyUnavailable: throw CommandFailure(.temporaryFailure, message)
        case .badTarget, .notThisExport: throw CommandFailure(.usage, message)
        case .unusableTarget: throw CommandFailure(.configuration, message)
        }
    } catch let error as ExportFileError {
        progress.finish()
        throw CommandFailure(.configuration, "\(TerminalSafety.quoted(error.path, limit: 200)): \(TerminalSafety.quoted(error.reason, limit: 200))")
    }
    progress.finish()
    if dryRun {
        let names = try LabelNames(store: store)
        let sink = cli.makeSink()
        for delta in report.readBack?.deltas ?? [] { try sink.emit(Records.delta(delta, labels: names)) }
        try sink.finish()
        return .success
    }
    if report.resumedReadBack { cli.warn("the read-back a killed run queued is kept; nothing queued twice") }
    if let readBack = report.readBack, let actionID = readBack.actionID {
        // As hd-mark's: the action's number, for hd-undo.
        cli.warn("action \(actionID): \(readBack.deltas.count) change(s) read back from the Maildir\(report.twoWay == .notmuch ? " and notmuch" : "") (hd-undo \(actionID) to undo)")
    }
    var parts = ["\(report.written) written"]
    if format == .maildir { parts.append("\(report.relabelled) relabelled") }
    if format != .mbox { parts.append("\(report.removed) removed") }
    parts.append("\(report.kept) deleted at Gmail and kept")
    parts.append("\(report.fetched) fetched from Gmail")
    if !report.failed.isEmpty { parts.append("\(report.failed.count) failed") }
    try cli.stdout.write("\(TerminalSafety.field(account.email)): \(parts.joined(separator: ", "))\n")
    if report.withoutMessageID > 0 {
        cli.warn("\(report.withoutMessageID) messages have no Message-ID: notmuch-tags cannot name them (notmuch gives them its own id)")
    }
    for (id, reason) in report.failed.sorted(by: { $0.key < $1.key }).prefix(10) {
        // The id comes from the store and the reason may quote Gmail: one line each, escaped.
        cli.warn("message:\(TerminalSafety.quoted(id, limit: 200)): not exported: \(TerminalSafety.quoted(reason, limit: 300))")
    }
    if report.failed.count > 10 { cli.warn("... and \(report.failed.count - 10) more not exported; the next run tries them again") }
    return report.failed.isEmpty ? .success : .partialFailure
}}

@MainActor private var stateKeptToExit: ExportStateLeft?

/// A source not fetched because of --no-fetch.
private struct NotFetched: Error, CustomStringConvertible {
    var description: String { "source not stored (--no-fetch)" }
}
