// hd-labels: every label with its counts, from effective labels.
import HudsonCLI
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-labels",
    abstract: "List labels with their message, thread and unread-thread counts.",
    discussion: "Counts include changes queued by hd-mark and not yet sent, as every command shows them.",
    options: OutputOptions.all,
    access: .readOnly,
    exitStatuses: [.usage, .temporaryFailure, .notAuthorized, .configuration])

/// hd-labels's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdLabels() -> Never { Main.run(spec) { cli in
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let names = try LabelNames(store: store)
    let sink = cli.makeSink()
    for count in try store.labelCounts(accountID: account?.id) {
        try sink.emit(Records.label(count, labels: names))
    }
    try sink.finish()
    return .success
}}
