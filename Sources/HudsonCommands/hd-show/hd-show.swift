// hd-show: read a thread or a message.
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonStore

private let spec = CommandSpec(
    name: "hd-show",
    abstract: "Show threads or messages: headers, labels, the readable body, attachments.",
    discussion: """
        A thread shows all its messages, oldest first. A body not stored yet is fetched
        from Gmail at once (the same pipeline hd-sync uses); offline, the headers and the
        snippet are shown with a note. --raw prints the RFC 822 source (several messages as
        an mboxrd mailbox): the stored one when the account keeps sources (hd-auth set
        EMAIL keep-raw on), otherwise fetched from Gmail; --html the original HTML part.
        References come from the operands or, with none, from standard input.
        """,
    options: [
        .flag("raw", help: "Print the RFC 822 source (stored, or from Gmail); several messages as mboxrd."),
        .flag("mbox", help: "Print the messages' sources as an mboxrd mailbox, even just one."),
        .flag("html", help: "Print the original HTML part instead of the readable text."),
        .value("save-attachments", name: "DIR", kind: .directory,
               help: "Save the attachments in DIR (file names only, never overwriting: a numbered name instead)."),
        .flag("no-fetch", help: "Never contact Gmail: show what the store has (sources only when stored; not with --save-attachments)."),
        .flag("json", help: "Print one NDJSON object per message (docs/json.md)."),
    ],
    operands: [OperandSpec("REF", kind: .reference, arity: .many, help: "thread:ID, message:ID, or a message id; - for standard input.")],
    access: .readOnly,
    exitStatuses: [.partialFailure, .usage, .dataError, .temporaryFailure, .notAuthorized, .configuration])

/// hd-show's whole run: its own executable and the multi-call binary scripts/install
/// installs call it.
public func hdShow() -> Never { Main.run(spec) { cli in
    // The directory is checked before anything is read, fetched or made (AttachmentSaver).
    if let directory = cli.arguments.string("save-attachments") { try AttachmentSaver.checkDirectory(directory) }
    var failures = 0
    var references: [Reference] = []
    for text in try cli.referenceTexts(cli.arguments.operands) {
        if let reference = Reference(parsing: text) { references.append(reference) } else {
            cli.warn("\(TerminalSafety.quoted(text)): not a reference")
            failures += 1
        }
    }
    let store = try cli.store()
    let account = try cli.selectedAccount(in: store)
    let names = try LabelNames(store: store)
    let fetch = FetchHelper(invocation: cli)  // hd-sync --fetch, in a child process
    let mayFetch = !cli.arguments.flag("no-fetch")
    let mbox = cli.arguments.flag("mbox")
    let raw = cli.arguments.flag("raw") || mbox
    let saving = cli.arguments.string("save-attachments") != nil
    if !mayFetch && saving {
        throw UsageError("--no-fetch: the attachments are only at Gmail")
    }
    var messages: [MessageDetail] = []
    var notes: [String: String] = [:]
    for reference in references {
        var found = try store.messageDetails(reference, accountID: account?.id)
        if found.isEmpty {
            cli.warn("\(reference): no such \(reference.kindName)")
            failures += 1
            continue
        }
        if mayFetch && !raw {
            let hydration = try fetch.hydrateMissing(&found, store: store, names: names)
            notes.merge(hydration.notes) { $1 }
            for (messageID, error) in hydration.failures {
                // Without its body a message's attachments are not known: saving them
                // failed, whatever else was saved (hd-show(1): 75 when Gmail cannot be reached).
                if saving { throw CommandFailure(error.status, "message:\(messageID): \(error.message)") }
                cli.warn("message:\(messageID): body not stored and not fetched: \(error)")
            }
        }
        messages += found
    }

    if let directory = cli.arguments.string("save-attachments") {
        for message in messages {
            for attachment in message.body?.attachments ?? [] {
                let bytes = try fetch.attachment(attachment, messageID: message.messageID, email: names.email(message.accountID))
                let name = AttachmentSaver.safeName(attachment.filename, fallback: "attachment-\(message.messageID)-\(attachment.partID)")
                let path = try AttachmentSaver.save(bytes, name: name, in: directory)
                try cli.stdout.write("message:\(message.messageID)\t\(TerminalSafety.field(path))\n")
            }
        }
        return failures > 0 ? .partialFailure : .success
    }
    if raw {
        for message in messages {
            let source: [UInt8]
            if let stored = try store.source(gmailID: message.messageID, accountID: message.accountID) {
                source = stored
            } else if mayFetch {
                source = try fetch.raw(messageID: message.messageID, email: names.email(message.accountID))
            } else {
                cli.warn("message:\(message.messageID): source not stored (--no-fetch)")
                failures += 1
                continue
            }
            let onTerminal = cli.terminal.isTerminal
            if messages.count == 1 && !mbox {
                try cli.stdout.write(bytes: MessageView.source(source, onTerminal: onTerminal))
            } else {
                let sender = MailAddress.parseList(message.headers.from ?? "").first?.address ?? ""
                try cli.stdout.write(bytes: MessageView.source(Mbox.entry(source, sender: sender, date: message.internalDate), onTerminal: onTerminal))
            }
        }
        return failures > 0 ? .partialFailure : .success
    }
    if cli.arguments.flag("json") {
        let sink = NDJSONSink(output: cli.stdout)
        for message in messages { try sink.emit(MessageView.record(message, labels: names)) }
        try sink.finish()
    } else if cli.arguments.flag("html") {
        for message in messages {
            guard let html = message.body?.html else {
                cli.warn("message:\(message.messageID): no HTML part")
                continue
            }
            try cli.stdout.write(MessageView.html(html, onTerminal: cli.terminal.isTerminal))
        }
    } else {
        for (index, message) in messages.enumerated() {
            if index > 0 { try cli.stdout.write("\n") }
            try cli.stdout.write(MessageView.text(message, labels: names, bodyNote: notes[message.messageID]))
        }
    }
    return failures > 0 ? .partialFailure : .success
}}
