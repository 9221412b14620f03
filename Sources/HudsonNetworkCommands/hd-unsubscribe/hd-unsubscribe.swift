// hd-unsubscribe: leave a sender's list by the safest method it offers, once, recorded.
import HudsonCLI

private let spec = CommandSpec(
    name: "hd-unsubscribe",
    abstract: "Unsubscribe from the senders of the given mail, by the safest method each offers.",
    discussion: """
        For each list or sender (grouped as hd-senders groups them) of the mail the
        references (message:ID, thread:ID) or the QUERY select: a one-click unsubscribe
        (RFC 8058) when its newest offering message that its own domain signed (an offer
        in mail another domain signed, or none did, is never used) qualifies: both
        List-Unsubscribe headers, an https address, and a DKIM signature Gmail found valid
        that covers both;
        else a message to its mailto address, queued in the outbox (sent once, by hd-sync
        or at once); else its https page, printed for you to open, never fetched. Every
        unsubscribe is recorded, and a sender that may already have received one gets no
        second. --then applies triage to the sender's mail in the store (one action,
        undone by hd-undo); --and-filter adds a rule for its later mail to the rules file.
        --list prints the record. See hd-unsubscribe(1).
        """,
    options: [
        .flag("dry-run", short: "n", help: "Print what would be done for each sender, and do nothing."),
        .value("then", name: "ACTION",
               help: "Then archive, trash or label (label=NAME) the sender's mail in the store."),
        .flag("and-filter", help: "With --then, also add a rule doing it to later mail to the rules file."),
        .flag("list", help: "List the recorded unsubscribes, newest first."),
        .value("limit", short: "l", name: "N", kind: .integer, help: "With --list, at most N; 0 for all.", default: "50"),
        .flag("no-flush", help: "Only queue mail and triage; do not try to send them now."),
    ] + OutputOptions.all,
    operands: [OperandSpec("REF|QUERY", kind: .query, arity: .many,
                           help: "message:ID or thread:ID references, or a query selecting the senders' mail.")],
    access: .readWrite,
    dashOperands: true,
    exitStatuses: [.noMatch, .partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-unsubscribe's whole run: its own executable and the multi-call binary call it.
public func hdUnsubscribe() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    try await UnsubscribeCommand(cli).run()
}}
