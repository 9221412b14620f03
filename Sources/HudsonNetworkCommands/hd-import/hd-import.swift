// hd-import: mail from an mbox, a Maildir or .eml files into Gmail, with its labels, once.
import HudsonCLI

private let spec = CommandSpec(
    name: "hd-import",
    abstract: "Import mail from an mbox, a Maildir or .eml files into Gmail, with its labels, once.",
    discussion: """
        Each SOURCE is an mbox (Google Takeout's too), a Maildir, an .eml file, or a directory
        of .eml files and Maildirs; - reads an mbox or one message from standard input. What is
        neither is refused, and so are FIFOs, devices and links out of a directory given; the
        last message of an mbox cut short is reported, not imported. Messages go to Gmail
        through messages.import, as if delivered, with the labels they carry: Takeout's
        X-Gmail-Labels (user labels are created when missing; a message not in Takeout's Inbox
        stays archived), X-Keywords, Maildir flags (no S: unread, F: starred, T: trash), mbox
        Status and X-Status, and every --label. Others are imported read and archived.

        Never twice: a message whose Message-ID the store holds, or which an earlier run
        imported, is skipped; an attempt whose answer was lost is looked for in Gmail
        (rfc822msgid:, and in history) before it is sent again; a message without a Message-ID
        is given one so that it can be. Interrupted, the same command carries on where it
        stopped. One message Gmail refuses is reported and the rest go on. Progress on a
        terminal; a summary on standard error at the end. The next hd-sync brings the
        imported mail into the store. --dry-run reads and counts without the network;
        --json prints what became of each message.
        """,
    options: [
        .value("label", name: "LABEL", help: "Also give every message this label (a name; INBOX, UNREAD, STARRED too). Repeatable.",
               repeatable: true),
        .flag("dry-run", short: "n", help: "Read and count; say what would be imported and which labels created. No network."),
        .flag("received-time", help: "Date the messages when Gmail receives them, not by their Date header."),
        .flag("never-spam", help: "Never let Gmail's spam classifier put an imported message in Spam (neverMarkSpam)."),
        .flag("calendar", help: "Let Gmail add the invitations found to Google Calendar (processForCalendar)."),
        .value("settle-unknown", name: "ANSWER", kind: .choice(["in-gmail", "not-in-gmail"]),
               help: "For a message an earlier attempt may have imported that Gmail cannot be asked about (reported as unknown): in-gmail (never send it again) or not-in-gmail (import it now)."),
        .flag("json", help: "Print an import record for each message read (docs/json.md)."),
        .flag("verbose", short: "v", help: "Progress on standard error also when it is not a terminal."),
    ],
    operands: [OperandSpec("SOURCE", kind: .file, arity: .oneOrMore,
                           help: "An mbox, a Maildir, an .eml file or a directory of them; - for an mbox or one message on standard input.")],
    access: .readWrite,
    dashOperands: true,
    exitStatuses: [.success, .partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-import's whole run: its own executable and the multi-call binary call it.
@MainActor
public func hdImport() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    try await ImportCommand.run(cli)
}}
