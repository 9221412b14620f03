// hd-send: send mail through a durable outbox that never sends a message twice.
import HudsonCLI

private let spec = CommandSpec(
    name: "hd-send",
    abstract: "Send a message: queue it durably, then send it through Gmail.",
    discussion: """
        The body comes from standard input (or --body-file); --raw takes a complete RFC 822
        message from standard input instead. The message is queued in the store first and
        its outbox id printed (outbox:N), then sent at once and its Gmail id printed
        (message:ID). Offline, it stays queued and the next hd-sync sends it. If Gmail's
        answer is lost, the next hd-sync looks for the message by its Message-ID before
        sending it again, so it is never sent twice. --delay holds it that long first;
        hd-undo outbox:N cancels it until it is sent. hd-pending shows the outbox.

        As a sendmail program (mutt, aerc, git send-email: hd-send -t, or recipients as
        operands, -i, -oi, -f, -F) it reads a complete message, sends it byte for byte, and
        prints nothing: Gmail delivers to the To, Cc and Bcc headers, so a recipient only an
        operand names is added as Bcc. A reply joins the thread its In-Reply-To or References
        name, even one sent a moment ago and not yet synced. Exit 0 when sent or queued, 75
        only when it could not be queued.

        --reply-all, --forward, --quote and --edit compose from another message or in the
        editor; --draft saves a Gmail draft instead of sending (hd-drafts lists, sends and
        deletes drafts).
        """,
    options: [
        .value("to", name: "ADDRESS", kind: .address, help: "A recipient (repeatable, or a comma-separated list).", repeatable: true),
        .value("cc", name: "ADDRESS", kind: .address, help: "A Cc recipient (repeatable, or a comma-separated list).", repeatable: true),
        .value("bcc", name: "ADDRESS", kind: .address, help: "A Bcc recipient (repeatable, or a comma-separated list).", repeatable: true),
        .value("subject", name: "TEXT", help: "The subject (with --reply-to: Re: and the original's)."),
        .value("body-file", name: "FILE", kind: .file, help: "Read the body from FILE instead of standard input."),
        .value("attach", name: "FILE", kind: .file, help: "Attach FILE (repeatable).", repeatable: true),
        .flag("raw", help: "Read a complete RFC 822 message from standard input."),
        .value("reply-to", name: "REF", kind: .reference,
               help: "Reply to this message (or a thread's newest): its thread, In-Reply-To, References, sender."),
        .flag("reply-all", help: "With --reply-to: to its sender and, in Cc, everyone else it was addressed to (not you)."),
        .value("forward", name: "REF", kind: .reference,
               help: "Forward this message: Fwd: subject, a Forwarded message block with its text, its attachments."),
        .flag("forward-as-attachment", help: "With --forward: attach the original whole, as message/rfc822, instead."),
        .flag("quote", help: "With --reply-to: quote the original's text with \"> \" under an attribution line."),
        .flag("edit", help: "Open $VISUAL or $EDITOR on the message (headers and body); send what is saved."),
        .value("from", short: "f", name: "EMAIL", kind: .account,
               help: "Send from this account (default: the only one); sendmail's -f."),
        .value("delay", name: "SECONDS", kind: .integer, help: "Hold the message this long before sending (an undo window).",
               default: "0"),
        .flag("no-send", help: "Only queue the message; the next hd-sync sends it."),
        .value("at", name: "WHEN", help: "Send at this local time (hudson-query(7) WHEN); saved as a Gmail draft until then."),
        .value("if-late", name: "RULE", kind: .choice(["send", "hold"]),
               help: "With --at: when nothing ran at the time and it is over an hour late, send it or hold it (default hold)."),
        .value("remind", name: "WHEN", help: "Bring the thread back to the inbox at WHEN if nobody has answered (hd-mark remind=)."),
        .flag("dry-run", help: "Print where the message would go (From, To, Cc, Bcc as Gmail reads them), its subject and size; queue nothing."),
        .flag("draft", help: "Save the message as a Gmail draft instead of sending it (prints draft:ID once saved)."),
        .value("update-draft", name: "DRAFT",
               help: "Replace this draft (draft:ID, or outbox:N saved offline) with the message; --edit starts from it."),
        // sendmail(8) compatibility, as msmtp has it: what mail clients pass.
        .flag("read-recipients", short: "t",
              help: "sendmail -t: a complete message on standard input; its To, Cc and Bcc are the recipients."),
        .flag("ignore-dots", short: "i", help: "sendmail -i: accepted (a lone '.' never ends the message)."),
        .value("sendmail-option", short: "o", name: "OPTION",
               help: "sendmail -oOPTION (-oi, -oem, -odb): accepted and ignored.", repeatable: true),
        .value("full-name", short: "F", name: "NAME",
               help: "sendmail -F: the sender's name, for the From header added to a message without one."),
    ] + SendmailCompatibility.ignoredOptions,
    operands: [OperandSpec("RECIPIENT", arity: .many,
                           help: "sendmail-style recipients of the complete message on standard input.")],
    access: .readWrite,
    exitStatuses: [.usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-send's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
@MainActor
public func hdSend() async -> Never { await Main.run(spec, classifiers: [NetworkExit.classify]) { cli in
    try await SendCommand.run(cli)
}}
