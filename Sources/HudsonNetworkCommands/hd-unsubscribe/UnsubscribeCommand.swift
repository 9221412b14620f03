/*!
 `hd-unsubscribe`'s run: the senders of the selected mail (HudsonStore's SenderReport), the
 method each offers that is safe (HudsonStore's UnsubscribeOffer, the one rule), and for
 each, at most once per sender: the one-click POST (recorded as intended and committed
 before it goes out, settled after), the mailto message (queued in the outbox under a
 Message-ID fixed per sender and address, so a second run finds the first entry), or the
 https page printed. Then the optional triage of the senders' mail, one action for all.
 */
import Foundation
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonQuery
import HudsonStore
import HudsonSync

@MainActor
struct UnsubscribeCommand {
    let cli: Invocation

    init(_ cli: Invocation) { self.cli = cli }

    /// The POST's bound on time (RFC 8058 sets none; a person is waiting).
    static let postTimeout: Duration = .seconds(20)

    func run() async throws -> ExitStatus {
        if cli.arguments.flag("list") {
            guard cli.arguments.operands.isEmpty else { throw UsageError("--list takes no REF or QUERY") }
            let store = try cli.openStore(.readWrite)
            let account = try cli.selectedAccount(in: store)
            let records = try store.unsubscribes(accountID: account?.id, limit: try SearchInput.limit(cli))
            let sink = cli.makeSink()
            sink.heading(["RECORD", "SENDER", "METHOD", "STATE", "DATE", "TARGET", "ANSWER", "ACCOUNT"])
            for record in records { try sink.emit(Records.unsubscribeRecord(record)) }
            try sink.finish()
            return records.isEmpty ? .noMatch : .success
        }
        let operands = cli.arguments.operands
        guard !operands.isEmpty else { throw UsageError("give message:ID or thread:ID references, or a query") }
        let then = try cli.arguments.string("then").map(Self.thenAction)
        if cli.arguments.flag("and-filter") && then == nil { throw UsageError("--and-filter needs --then") }
        let dryRun = cli.arguments.flag("dry-run")
        let store = try cli.openStore(dryRun ? .readOnly : .readWrite, durable: !dryRun)
        let account = try cli.selectedAccount(in: store)
        let senders = try selectSenders(operands, store: store, accountID: account?.id)
        guard !senders.isEmpty else {
            cli.noteForTerminal("no mail selected")
            return .noMatch
        }
        let loopback = TestHooks.unsubscribeLoopback(environment: cli.environment)
        let timeout = TestHooks.unsubscribeTimeoutSeconds(environment: cli.environment).map { Duration.seconds($0) } ?? Self.postTimeout
        let sink = cli.makeSink()
        var unsettled = 0
        var queuedMail: Set<Int64> = []
        for sender in senders {
            let offer = UnsubscribeOffer(sender.listHeaders, from: sender.offeringFrom, allowLoopbackHTTP: loopback)
            let outcome = try await unsubscribe(sender, offer: offer, store: store, dryRun: dryRun, timeout: timeout,
                                                allowLoopback: loopback)
            if outcome.state == "refused" || outcome.state == "unknown" { unsettled += 1 }
            if outcome.outbox != nil { queuedMail.insert(sender.accountID) }
            try sink.emit(Records.unsubscribe(sender: sender, method: outcome.method, state: outcome.state,
                                              target: outcome.target, answer: outcome.answer))
            if let note = outcome.note { cli.warn(note) }
        }
        try sink.finish()
        if let then {
            try applyTriage(then, to: senders, store: store, dryRun: dryRun)
            if cli.arguments.flag("and-filter") { try addRules(then, for: senders, dryRun: dryRun) }
        }
        if !dryRun && !cli.arguments.flag("no-flush") && !queuedMail.isEmpty {
            for accountID in queuedMail { if let account = try store.account(id: accountID) { cli.pushQueuedChanges(account: account) } }
        }
        return unsettled > 0 ? .partialFailure : .success
    }

    /// References when every operand is written as one (`message:ID`, `thread:ID`); else a query.
    func selectSenders(_ operands: [String], store: Store, accountID: Int64?) throws -> [SenderSummary] {
        let references = operands.map { text -> Reference? in
            guard text.hasPrefix("message:") || text.hasPrefix("thread:") else { return nil }
            return Reference(parsing: text)
        }
        if references.allSatisfy({ $0 != nil }) {
            var messages: [String] = []
            var threads: [String] = []
            for case let reference? in references {
                switch reference {
                case .message(let id): messages.append(id)
                case .thread(let id): threads.append(id)
                }
            }
            return try store.senders(gmailIDs: messages, threadIDs: threads, accountID: accountID)
        }
        let query = try SearchInput.query(operands)
        return try store.senders(matching: query, options: SearchInput.options(accountID: accountID), sort: .volume, limit: .max)
    }

    struct Outcome {
        var method: String
        var state: String
        var target: String?
        var answer: String?
        var note: String?
        var outbox: Int64?
    }

    func unsubscribe(_ sender: SenderSummary, offer: UnsubscribeOffer, store: Store, dryRun: Bool,
                     timeout: Duration, allowLoopback: Bool) async throws -> Outcome {
        // Never a second unsubscribe to a sender that may have received one.
        if let prior = try store.unsubscribeThatMayHaveReached(sender: sender.groupKey, accountID: sender.accountID) {
            return Outcome(method: prior.method.rawValue, state: "already-\(prior.state.rawValue)", target: prior.target,
                           answer: prior.answer, note: nil)
        }
        if let target = offer.oneClick {
            if dryRun { return Outcome(method: "one-click", state: "would-post", target: target, answer: nil) }
            // Recorded and committed first: whatever happens to this process from here, the
            // store says a POST may have been made, and no later run makes another.
            guard let id = try store.recordUnsubscribe(accountID: sender.accountID, sender: sender.groupKey, method: .oneClick,
                                                       target: target, messageGmailID: sender.offeringMessage, state: .intended)
            else {
                // Another process recorded one meanwhile: it makes the request, not this one.
                return Outcome(method: "one-click", state: "already-intended", target: target, answer: nil)
            }
            let answer = await OneClickPost.post(to: target, timeout: timeout, allowLoopback: allowLoopback)
            let (state, text) = Self.settlement(answer)
            try store.settleUnsubscribe(id: id, state: state, answer: text)
            return Outcome(method: "one-click", state: state.rawValue, target: target, answer: text)
        }
        if let mailto = offer.mailto {
            if dryRun { return Outcome(method: "mailto", state: "would-send", target: mailto.address, answer: mailto.subject) }
            guard let account = try store.account(id: sender.accountID) else {
                return Outcome(method: "mailto", state: "refused", target: mailto.address, answer: "no such account")
            }
            // After a message that never left (cancelled, failed), a new one under a new Message-ID.
            let attempt = try store.deadUnsubscribeMails(sender: sender.groupKey, target: mailto.address, accountID: account.id)
            let message = try Self.mailtoMessage(mailto, from: account, sender: sender.groupKey, attempt: attempt)
            let outbox = try store.queueUnsubscribeMail(
                NewOutboxMessage(accountID: account.id, raw: message.raw, messageID: message.messageID,
                                 recipients: [mailto.address], subject: message.subject),
                sender: sender.groupKey, target: mailto.address, messageGmailID: sender.offeringMessage)
            return Outcome(method: "mailto", state: "queued", target: mailto.address,
                           answer: outbox > 0 ? "outbox:\(outbox)" : nil, outbox: outbox)
        }
        if let page = offer.https {
            if !dryRun {
                _ = try store.recordUnsubscribe(accountID: sender.accountID, sender: sender.groupKey, method: .https, target: page,
                                                messageGmailID: sender.offeringMessage, state: .printed)
            }
            return Outcome(method: "https", state: dryRun ? "would-print" : "printed", target: page,
                           answer: "a web page: open it yourself")
        }
        let why = sender.offersUnvouched
            ? "its List-Unsubscribe is only in mail not signed by its own domain (\(sender.identityDomain))"
            : sender.headersUnknown > 0 && sender.listHeaders.unsubscribe == nil
            ? "its headers were stored before Hudson kept List-Unsubscribe" : (offer.oneClickRefusal ?? "no unsubscribe offered")
        return Outcome(method: "none", state: "none", target: nil, answer: why)
    }

    /// A 2xx is done (RFC 8058 §3.2); a 3xx was not followed, so whether it unsubscribed is
    /// unknown; another status is a refusal; no answer is unknown (the POST may have arrived).
    static func settlement(_ answer: OneClickAnswer) -> (UnsubscribeState, String) {
        switch answer {
        case .status(let code) where (200..<300).contains(code): return (.done, "HTTP \(code)")
        case .status(let code) where (300..<400).contains(code): return (.unknown, "HTTP \(code): a redirect, not followed")
        case .status(let code): return (.refused, "HTTP \(code)")
        case .noAnswer(let why): return (.unknown, "no answer (\(why)): the request may have arrived")
        // Nothing left this machine: a refusal, so a later run may try again.
        case .notSent(let why): return (.refused, "not sent: \(why)")
        }
    }

    struct MailtoMessage {
        var raw: [UInt8]
        var messageID: String
        var subject: String
    }

    /// The message a mailto URI asks for (RFC 6068): to its address, with its subject and
    /// body (a subject of "unsubscribe" when it gives none). The Message-ID is fixed per
    /// account, sender, address and attempt (how many earlier messages never left): the
    /// outbox never holds two live entries with one, so two runs queue one message.
    static func mailtoMessage(_ mailto: MailtoRequest, from account: Account, sender: String, attempt: Int = 0) throws -> MailtoMessage {
        let domain = account.email.split(separator: "@").last.map(String.init) ?? "hudson.invalid"
        let key = "\(account.id)\n\(sender)\n\(mailto.address)" + (attempt > 0 ? "\n\(attempt)" : "")
        let messageID = "<hd-unsubscribe.\(fnv1a(key))@\(domain)>"
        let now = Int64(Date().timeIntervalSince1970)
        let subject = mailto.subject ?? "unsubscribe"
        let outgoing = OutgoingMessage(
            from: MailAddress(address: account.email), to: [MailAddress(address: mailto.address)], subject: subject,
            text: mailto.body ?? "", messageID: messageID,
            date: MailDate.format(epochSeconds: now, offsetSeconds: LocalTime.offset(atEpochSeconds: now)))
        var random = SystemRandomNumberGenerator()
        return MailtoMessage(raw: MessageBuilder.render(outgoing, using: &random), messageID: messageID, subject: subject)
    }

    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return String(hash, radix: 16)
    }

    /// `archive`, `trash` or `label=NAME`.
    static func thenAction(_ text: String) throws -> TriageAction {
        switch text {
        case "archive": return .archive
        case "trash": return .trash
        default:
            guard text.hasPrefix("label="), text.count > 6 else {
                throw UsageError("--then: \(TerminalSafety.quoted(text)): expected archive, trash or label=NAME")
            }
            return .addLabel(String(text.dropFirst(6)))
        }
    }

    /// The senders' stored mail, triaged as one action (hd-undo takes it back), then pushed.
    func applyTriage(_ action: TriageAction, to senders: [SenderSummary], store: Store, dryRun: Bool) throws {
        var references: [Reference] = []
        let options = SearchInput.options(accountID: try cli.selectedAccount(in: store)?.id)
        for sender in senders {
            try store.forEachMessage(matching: try Query.parse(sender.queryTerm), options: options, limit: .max) {
                references.append(.message($0.messageID))
            }
        }
        guard !references.isEmpty else { return }
        let result = try store.perform([action], on: references, dryRun: dryRun)
        cli.warn("\(dryRun ? "would queue" : "queued") \(result.deltas.count) change(s) on \(result.threadCount) thread(s): \(action)\(dryRun ? "" : " (hd-undo takes it back)")")
        if !dryRun && !cli.arguments.flag("no-flush") { _ = cli.pushQueuedChanges(for: result.deltas, in: store) }
    }

    /// One rule per sender, appended to the rules file: its later mail gets the same action.
    func addRules(_ action: TriageAction, for senders: [SenderSummary], dryRun: Bool) throws {
        let lines = senders.map { "[unsubscribed \($0.groupKey.filter { $0 != "]" && $0 != "\n" })] \($0.queryTerm) => \(action)" }
        for line in lines {
            guard (try? RulesFile.parse(line)) != nil else {
                throw CommandFailure(.dataError, "cannot write a rule for \(TerminalSafety.quoted(line))")
            }
        }
        if dryRun {
            for line in lines { cli.warn("would add to the rules file: \(TerminalSafety.quoted(line, limit: 200))") }
            return
        }
        try RulesFileAppend.append(lines, to: try RulesFileLoader.path(cli))
        cli.warn("added \(lines.count) rule(s) to \(TerminalSafety.quoted(try RulesFileLoader.path(cli), limit: 200))")
    }
}

/// Appends whole lines to the rules file (created 0600 with its directory when missing).
enum RulesFileAppend {
    static func append(_ lines: [String], to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var text = lines.joined(separator: "\n") + "\n"
        if let existing = FileManager.default.contents(atPath: path), let last = existing.last, last != UInt8(ascii: "\n") {
            text = "\n" + text
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure(.configuration, "\(path): cannot create the rules file")
            }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw CommandFailure(.configuration, "\(path): cannot write the rules file")
        }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
