/*!
 What `hd-send` sends, from its command line: the account it goes out from, and the message —
 composed from `--to/--cc/--bcc/--subject`, a body from standard input or `--body-file` and
 `--attach` files (HudsonMail's MessageBuilder writes the MIME), or taken whole from standard
 input with `--raw` (RawMessage adds what the outbox needs). `--reply-to REF` makes a reply to
 a stored message: In-Reply-To and References from it, a `Re: ` subject, its Gmail thread,
 and its sender (or Reply-To) as the recipient when none is given — the three things Gmail
 needs to put the reply in the thread (gmail-api.md §2.7).
 */
import Foundation
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonStore

/// A message ready to queue, and the account and thread it belongs to.
public struct ComposedMessage {
    public var account: Account
    public var message: PreparedMessage
    public var threadID: String?
    /// Saved as a Gmail draft (`--draft`, `--update-draft`) instead of sent.
    public var isDraft = false
    /// The draft `--update-draft` replaces.
    public var draftID: String?
    /// The queued draft entry `--update-draft outbox:N` replaces (saved offline).
    public var replacesOutboxID: Int64?
    /// The draft's message the update is based on: the sender writes it only if the draft
    /// still has that message (or one Hudson wrote), else keeps both (OutboxSender).
    public var draftBaseGmailID: String?
}

@MainActor
public struct Composer {
    let invocation: Invocation
    let store: Store

    /// The largest message Gmail accepts (gmail-api.md §2.7: 35 MiB).
    nonisolated static let maximumSize = 36_700_160

    var arguments: ParsedArguments { invocation.arguments }

    public init(invocation: Invocation, store: Store) {
        self.invocation = invocation
        self.store = store
    }

    /// Whether the command line is a sendmail program's (Sendmail.swift).
    public var isSendmail: Bool { SendmailCompatibility.isSendmail(arguments) }

    public func compose() async throws -> ComposedMessage {
        let sendmail = isSendmail
        let raw = arguments.flag("raw") || sendmail
        let composing = ["to", "cc", "bcc", "subject", "body-file", "attach"]
        if raw, let option = composing.first(where: { arguments.values[$0] != nil }) {
            throw UsageError(sendmail ? "a sendmail-style command line takes the whole message from standard input; --\(option) cannot be used with it"
                                      : "--raw takes the whole message from standard input; --\(option) cannot be used with it")
        }
        if let mode = arguments.string("sendmail-mode"), mode != "m" {
            throw UsageError("-b\(TerminalSafety.quoted(mode)): only -bm (send a message) is supported")
        }
        let reply = try replyTarget()
        let forward = try target("forward")
        try checkCombinations(raw: raw, reply: reply, forward: forward)
        var random = SystemRandomNumberGenerator()
        let now = LocalTime.nowMilliseconds / 1000
        let date = MailDate.format(epochSeconds: now, offsetSeconds: LocalTime.offset(atEpochSeconds: now))
        let target = try draftTarget()
        let draftBase = try target.gmailID.flatMap { gmailID in
            try store.messageDetails(.message(gmailID), accountID: target.accountID).first
        }
        var composed: ComposedMessage
        if raw {
            let bytes = try standardInput(what: "message")
            let headers = RFC822.parseHeaders(bytes)
            let given = try Self.standardInputEnvelope { try RawMessage.envelope(bytes) }
            let account = try chooseAccount(reply: reply, rawFrom: given.from)
            var bcc: [MailAddress] = []
            var addedFrom: MailAddress?
            if sendmail {
                let operands = try SendmailCompatibility.operandRecipients(arguments.operands)
                let named = given.recipients
                if !arguments.flag("read-recipients") {
                    guard !operands.isEmpty else { throw UsageError("no recipients: give them as operands, or -t to take them from the headers") }
                    if let stranger = SendmailCompatibility.unrequested(named, operands: operands).first {
                        throw CommandFailure(.dataError, """
                            standard input: \(TerminalSafety.quoted(stranger.address)) is a recipient in the headers but not on the \
                            command line; Gmail delivers to every header recipient (use -t to send to them)
                            """)
                    }
                }
                bcc = SendmailCompatibility.unnamed(operands, headerRecipients: named)
                let fullName = arguments.string("full-name") ?? ""
                try Self.checkHeaderText(fullName, option: "-F")
                addedFrom = MailAddress(name: fullName, address: account.email)
            }
            let message = try Self.standardInputEnvelope {
                try RawMessage.prepare(bytes, date: date, from: addedFrom, bcc: bcc) {
                    MessageBuilder.messageID(domain: Self.domain(account.email), using: &random)
                }
            }
            guard message.from != nil else { throw CommandFailure(.dataError, "standard input: the message has no From header") }
            guard RawMessage.isSearchableMessageID(message.messageID) else {
                throw CommandFailure(.dataError, "standard input: its Message-ID is not of the form <id@host>; remove it and one is added")
            }
            var threadID = reply?.threadID
            if threadID == nil, case .thread(let thread) = try store.replyThread(
                accountID: account.id, parents: RawMessage.parentMessageIDs(headers)) {
                threadID = thread
            }
            composed = ComposedMessage(account: account, message: message, threadID: threadID)
        } else {
            let account = try chooseAccount(reply: reply ?? forward, rawFrom: nil)
            let original = try await original(reply: reply, forward: forward, account: account)
            let outgoing = try outgoingMessage(account: account, reply: reply ?? draftBase.flatMap(draftParent), original: original,
                                               base: draftBase, date: date, using: &random)
            let message = try Self.checkedRender(outgoing, using: &random)
            composed = ComposedMessage(account: account, message: message, threadID: reply?.threadID)
        }
        composed.isDraft = target.isDraft
        composed.draftID = target.draftID
        composed.replacesOutboxID = target.replacing
        composed.draftBaseGmailID = target.draftID == nil ? nil : target.basedOn
        if composed.threadID == nil { composed.threadID = target.threadID }
        // A draft may be saved without recipients; it gets them before it is sent.
        guard target.isDraft || !composed.message.recipients.isEmpty else {
            throw raw ? CommandFailure(.dataError, "standard input: the message has no recipients (To, Cc or Bcc)")
                      : UsageError("no recipients: give --to, --cc or --bcc")
        }
        guard composed.message.raw.count <= Self.maximumSize else {
            throw CommandFailure(.dataError, "the message is \(composed.message.raw.count / 1_048_576) MB; Gmail accepts at most 35 MB")
        }
        return composed
    }

    // MARK: - The message

    private func outgoingMessage(account: Account, reply: MessageDetail?, original: Original?, base: MessageDetail?, date: String,
                                 using random: inout SystemRandomNumberGenerator) throws -> OutgoingMessage {
        var to = try addresses("to")
        var cc = try addresses("cc")
        var bcc = try addresses("bcc")
        // Updating a draft with --edit starts from the draft as the store has it.
        if let base, arguments.flag("edit"), to.isEmpty && cc.isEmpty && bcc.isEmpty {
            (to, cc, bcc) = try Self.fromOriginal(base, what: "the draft") {
                (try ReplyForward.recipients("To", base.headers.to ?? ""), try ReplyForward.recipients("Cc", base.headers.cc ?? ""),
                 try ReplyForward.recipients("Bcc", base.headers.bcc ?? ""))
            }
        }
        if let reply, arguments.flag("reply-all") {
            let all = try Self.fromOriginal(reply, what: "the message replied to") {
                try ReplyForward.replyAll(Self.originalHeaders(reply), own: [account.email])
            }
            to = Self.once(all.to + to)
            cc = Self.once(cc + all.cc).filter { address in !to.contains { $0.address.lowercased() == address.address.lowercased() } }
        } else if let reply, to.isEmpty && cc.isEmpty && bcc.isEmpty {
            to = try Self.fromOriginal(reply, what: "the message replied to") {
                try Self.replyRecipients(reply, ownAddress: account.email)
            }
        }
        if let given = arguments.string("subject") { try Self.checkHeaderText(given, option: "--subject") }
        var subject = arguments.string("subject") ?? (base != nil && arguments.flag("edit") ? base?.headers.subject : nil)
            ?? reply.map { Self.replySubject($0.headers.subject ?? "") } ?? ""
        if let original, arguments.values["forward"] != nil, arguments.string("subject") == nil {
            subject = ReplyForward.forwardSubject(original.headers.subject)
        }
        let editing = arguments.flag("edit")
        var text = ""
        if let path = arguments.string("body-file"), path != "-" {
            text = try Self.utf8(try BoundedInput.file(path), what: TerminalSafety.quoted(path))
        } else if editing, let base {
            text = base.body?.text ?? ""
        } else if !editing {
            text = try Self.utf8(try standardInput(what: "body"), what: "standard input")
        }
        var attachments = try arguments.strings("attach").map { path in
            OutgoingAttachment(filename: URL(fileURLWithPath: path).lastPathComponent, data: try BoundedInput.file(path))
        }
        if let original {
            if arguments.flag("quote") {
                text += (text.isEmpty || text.hasSuffix("\n\n") ? "" : text.hasSuffix("\n") ? "\n" : "\n\n")
                    + ReplyForward.quote(original.text, original: original.headers)
            }
            if let raw = original.raw, arguments.values["forward"] != nil {
                if arguments.flag("forward-as-attachment") {
                    attachments.append(ReplyForward.asAttachment(raw, subject: original.headers.subject))
                } else {
                    text += (text.isEmpty ? "" : "\n") + ReplyForward.forwardedBlock(original.text, original: original.headers)
                    attachments += ReplyForward.attachments(ofRaw: raw)
                }
            }
        }
        if editing {
            let edited = try edit(EditableMessage(to: Self.list(to), cc: Self.list(cc), bcc: Self.list(bcc),
                                                  subject: subject, body: text))
            (to, cc, bcc) = (try Self.addresses(edited.to, "To"), try Self.addresses(edited.cc, "Cc"), try Self.addresses(edited.bcc, "Bcc"))
            subject = try Self.editedSubject(edited.subject)
            text = edited.body
        }
        var references: [String] = []
        var inReplyTo: String?
        if let reply, let parent = reply.headers.messageID?.trimmingWhitespace(), !parent.isEmpty {
            inReplyTo = parent
            references = Self.messageIDs(in: reply.headers.references ?? "") + [parent]
            // RFC 5322 §3.6.4 lets long chains be cut; keep the root and the latest.
            if references.count > 20 { references = [references[0]] + references.suffix(19) }
        }
        return OutgoingMessage(
            from: MailAddress(address: account.email), to: to, cc: cc, bcc: bcc, subject: subject, text: text,
            attachments: attachments, messageID: MessageBuilder.messageID(domain: Self.domain(account.email), using: &random),
            date: date, inReplyTo: inReplyTo, references: references)
    }

    /// `--to` and friends: repeatable, each a comma-separated list, read by the one strict
    /// rule for outgoing recipients (HudsonMail's OutgoingAddresses).
    private func addresses(_ option: String) throws -> [MailAddress] {
        try arguments.strings(option).flatMap { value -> [MailAddress] in
            try Self.recipientArgument(value, what: "--\(option)")
        }
    }

    /// One recipient argument (an option's value or a sendmail operand): at least one
    /// address, and nothing the strict parser refuses (64).
    nonisolated static func recipientArgument(_ value: String, what: String) throws -> [MailAddress] {
        let list: [MailAddress]
        do { list = try OutgoingAddresses.parse(value) } catch {
            throw UsageError("\(what) \"\(TerminalSafety.quoted(value))\": \(error)")
        }
        guard !list.isEmpty else { throw UsageError("\(what) \"\(TerminalSafety.quoted(value))\": no address") }
        return list
    }

    /// A header value given on the command line (--subject, -F): no line break or other
    /// control character, which would start a header of its own.
    nonisolated static func checkHeaderText(_ value: String, option: String) throws {
        do { try OutgoingHeaderBlock.checkText(value) } catch {
            throw UsageError("\(option) \"\(TerminalSafety.quoted(value))\": \(error)")
        }
    }

    /// The message as bytes, and its recipients read back from them by the strict parser:
    /// they must be exactly the ones decided, in order, or nothing is queued.
    static func checkedRender(_ outgoing: OutgoingMessage, using random: inout SystemRandomNumberGenerator) throws -> PreparedMessage {
        try OutgoingRender.checked(outgoing, using: &random)
    }

    /// Runs `read` on the message from standard input; what its header cannot be sent as
    /// is bad data (65), with the value quoted.
    static func standardInputEnvelope<T>(_ read: () throws -> T) throws -> T {
        do { return try read() } catch let error as OutgoingMessageError {
            if case .field(let name, let value, let why) = error {
                throw CommandFailure(.dataError, "standard input: \(name) \"\(TerminalSafety.quoted(value))\": \(why); nothing queued")
            }
            throw CommandFailure(.dataError, "standard input: \(error); nothing queued")
        }
    }

    /// Recipients taken from a stored message's headers (a reply, a draft being edited):
    /// a header the strict parser refuses is bad data (65), named, never guessed at.
    static func fromOriginal<T>(_ message: MessageDetail, what: String, _ read: () throws -> T) throws -> T {
        do { return try read() } catch let error as OutgoingMessageError {
            let reference = "message:\(message.messageID)"
            if case .field(let name, let value, let why) = error {
                throw CommandFailure(.dataError, "\(reference) (\(what)): its \(name) \"\(TerminalSafety.quoted(value))\": \(why); "
                                     + "give the recipients with --to, --cc or --bcc")
            }
            throw CommandFailure(.dataError, "\(reference) (\(what)): \(error)")
        }
    }

    // MARK: - Replies and accounts

    /// The message `--reply-to` names (a thread means its newest message).
    private func replyTarget() throws -> MessageDetail? { try target("reply-to") }

    /// The message `--OPTION REF` names (a thread means its newest message).
    func target(_ option: String) throws -> MessageDetail? {
        guard let text = arguments.string(option) else { return nil }
        guard let reference = Reference(parsing: text) else {
            throw UsageError("--\(option): \(TerminalSafety.quoted(text)): not a reference")
        }
        let named = try namedAccount()
        guard let message = try store.messageDetails(reference, accountID: named?.id).last else {
            throw CommandFailure(.dataError, "\(reference): no such \(reference.kindName)")
        }
        return message
    }

    /// The account `--from` or `--account` (or `$HUDSON_ACCOUNT`) names, if any.
    func namedAccount() throws -> Account? {
        // Each address-valued option read strictly first (64), before any is looked up (77).
        let from = try arguments.string("from").map { try Invocation.accountArgument($0, what: "--from") }
        let returnPath = try arguments.string("sendmail-return-path").map { try Invocation.accountArgument($0, what: "-r") }
        let selected = try invocation.selectedAccount(in: store, strict: true)
        guard let from = from ?? returnPath else { return selected }
        let account = try store.requireAccount(email: from)
        if let selected, selected.id != account.id { throw UsageError("--from and --account name different accounts") }
        return account
    }

    /// The named account; else the reply's; else the one whose address a raw From has;
    /// else the only account.
    private func chooseAccount(reply: MessageDetail?, rawFrom: MailAddress?) throws -> Account {
        if let named = try namedAccount() { return named }
        if let reply, let account = try store.account(id: reply.accountID) { return account }
        let accounts = try store.accounts()
        if let rawFrom, let match = accounts.first(where: { $0.email.lowercased() == rawFrom.address.lowercased() }) { return match }
        switch accounts.count {
        case 0: throw CommandFailure(.notAuthorized, "no accounts; run hd-auth login")
        case 1: return accounts[0]
        default: throw UsageError("several accounts: choose one with --from EMAIL")
        }
    }

    static func replySubject(_ subject: String) -> String {
        let trimmed = subject.trimmingWhitespace()
        if trimmed.isEmpty || trimmed.lowercased().hasPrefix("re:") { return trimmed }
        return "Re: " + trimmed
    }

    /// Reply-To, else From; replying to one's own message goes to its recipients instead.
    static func replyRecipients(_ message: MessageDetail, ownAddress: String) throws(OutgoingMessageError) -> [MailAddress] {
        let replyTo = try ReplyForward.recipients("Reply-To", message.headers.replyTo ?? "")
        let to = replyTo.isEmpty ? try ReplyForward.recipients("From", message.headers.from ?? "") : replyTo
        if !to.isEmpty && to.allSatisfy({ $0.address.lowercased() == ownAddress.lowercased() }) {
            return try ReplyForward.recipients("To", message.headers.to ?? "")
        }
        return to
    }

    /// The `<…>` ids of a References or In-Reply-To value, in order.
    static func messageIDs(in text: String) -> [String] { RawMessage.messageIDs(in: text) }

    static func domain(_ email: String) -> String {
        email.split(separator: "@").last.map(String.init) ?? ""
    }

    // MARK: - Input

    /// Standard input, whole; on a terminal that would wait silently, so it is a usage error.
    private func standardInput(what: String) throws -> [UInt8] {
        if Input.stdinIsTerminal {
            throw UsageError(what == "body" ? "no body: pipe it on standard input, or give --body-file FILE"
                                            : "no message: pipe it on standard input")
        }
        return try BoundedInput.standardInput()
    }

    static func utf8(_ bytes: [UInt8], what: String) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(.dataError, "\(what): the body is not UTF-8 text")
        }
        return text
    }
}
