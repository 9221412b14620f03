/*!
 hd-mcp's tools: each a thin layer over the library calls the commands make (hd-search's
 Store.searchThreads, hd-show's MessageView, hd-labels' labelCounts, hd-pending's records,
 hd-mark's perform, hd-undo's undo, hd-send's outbox, hd-filters' applyRules). What this
 file adds is the agent's side: the policy (the server's, never above the account's
 ceiling), the origin "agent" on everything it records, a size bound with a cursor on every
 answer, and mail text fenced (UntrustedFence).
 */
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonQuery
import HudsonStore

final class MCPTools {
    let invocation: Invocation
    let configuration: MCPConfiguration

    init(invocation: Invocation, configuration: MCPConfiguration) {
        self.invocation = invocation
        self.configuration = configuration
    }

    // MARK: - Calls

    func call(_ params: JSONValue) throws -> JSONValue {
        let call = try Arguments(params)
        guard let name = try call.string("name") else { throw RPCFault.invalidParams("name is required") }
        guard Self.toolNames.contains(name) else {
            throw RPCFault.invalidParams("unknown tool \(TerminalSafety.quoted(name, limit: 40))")
        }
        let arguments = try Arguments(call.members.first { $0.0 == "arguments" }?.1)
        do {
            let answer: ToolAnswer
            switch name {
            case "search": answer = try search(arguments)
            case "show": answer = try show(arguments)
            case "labels": answer = try labels(arguments)
            case "pending": answer = try pending(arguments)
            case "undo": answer = try undo(arguments)
            case "mark": answer = try mark(arguments)
            case "drafts": answer = try drafts(arguments)
            case "send": answer = try send(arguments)
            default: answer = try filtersDryRun(arguments)
            }
            return answer.json
        } catch let fault as RPCFault where fault.code == JSONRPC.invalidParams {
            // Arguments a tool cannot take are the tool's error, for the model to read and
            // correct (MCP 2025-11-25, SEP-1303 "Input Validation Errors as Tool Execution
            // Errors"); an unknown tool or a request of the wrong shape stays -32602.
            return ToolAnswer(text: "invalid arguments: " + TerminalSafety.field(fault.message), isError: true).json
        } catch let fault as RPCFault {
            throw fault
        } catch let failure as ToolFailure {
            return ToolAnswer(text: failure.message, isError: true).json
        } catch {
            return ToolAnswer(text: Self.oneLine(error), isError: true).json
        }
    }

    /// An error as one line: the commands' own message for it (Exit's one table), with
    /// controls removed and cut short.
    static func oneLine(_ error: any Error) -> String {
        let message = (error as? ToolFailure)?.message ?? Exit.classify(error, debug: false).message
        let line = TerminalSafety.field(message)
        return line.unicodeScalars.count > 300 ? String(String.UnicodeScalarView(line.unicodeScalars.prefix(300))) + "…" : line
    }

    // MARK: - Shared pieces

    /// The bound this call asked for, within the server's ceiling.
    private func budget(_ arguments: Arguments) throws -> Int {
        try arguments.int("max_chars", range: MCPConfiguration.minimumMaxChars...configuration.maxCharsCeiling)
            ?? configuration.defaultMaxChars
    }

    private func offsetCursor(_ arguments: Arguments) throws -> Int {
        guard let cursor = try arguments.string("cursor") else { return 0 }
        guard cursor.hasPrefix("offset:"), let offset = Int(cursor.dropFirst("offset:".count)), offset >= 0 else {
            throw RPCFault.invalidParams("cursor \(TerminalSafety.quoted(cursor, limit: 40)) is not one this tool gave")
        }
        return offset
    }

    /// A header Hudson writes, then `untrusted` fenced and cut to what the bound leaves,
    /// continued from `offset`; the note says how to read on.
    /// `records`: lines made by `line(_:)`, already cleaned field by field.
    private func fencedAnswer(header: String, untrusted: String, offset: Int, budget: Int, tool: String,
                              records: Bool = true) -> ToolAnswer {
        let fence = UntrustedFence()
        let cleaned = records ? UntrustedFence.defused(untrusted) : UntrustedFence.clean(untrusted)
        let noteRoom = 200
        let room = max(1, budget - BoundedText.count(header) - BoundedText.count(fence.opening) - BoundedText.count(fence.closing) - noteRoom)
        let (slice, next, total) = BoundedText.slice(cleaned, from: offset, budget: room)
        if offset > total {
            return ToolAnswer(text: "cursor \"offset:\(offset)\" is past the end: the answer has \(total) characters", isError: true)
        }
        var text = header + "\n" + fence.opening + slice + fence.closing
        if let next {
            text += "\n[cut: characters \(offset)–\(next) of \(total) shown; call \(tool) again with cursor \"offset:\(next)\" to read on]"
        } else if offset > 0 {
            text += "\n[end: characters \(offset)–\(total) of \(total)]"
        }
        return ToolAnswer(text: text, nextCursor: next.map { "offset:\($0)" })
    }

    private func readStore() throws -> (Store, Account?) {
        let store = try invocation.openStore(.readOnly)
        return (store, try invocation.selectedAccount(in: store))
    }

    /// The policy in force for `account` (every account when nil): the server's, never above
    /// any ceiling that applies (`hd-auth set EMAIL agent-policy`).
    private func policy(_ store: Store, account: Account?) throws -> AgentPolicy {
        let accounts = try account.map { [$0] } ?? store.accounts()
        return try accounts.map { try store.agentPolicy(accountID: $0.id) }.reduce(configuration.policy) { min($0, $1) }
    }

    private func refuse(_ what: String, under policy: AgentPolicy) -> ToolFailure {
        ToolFailure("refused: \(what) is not allowed under the agent policy \(policy.rawValue) "
                    + "(set by hd-mcp --policy and hd-auth set EMAIL agent-policy); nothing was changed")
    }

    private static func line(_ record: Record) -> String {
        ([record.id] + record.columns).map { TerminalSafety.field($0) }.joined(separator: "\t")
    }

    /// A search's line for a thread: the line hd-search prints (id, date, messages,
    /// participants, subject, labels), then Gmail's snippet of its newest message.
    private static func searchLine(_ thread: ThreadSummary, labels: LabelNames) -> String {
        line(Records.thread(thread, labels: labels)) + "\t" + TerminalSafety.field(thread.snippet)
    }

    /// `text` cut to at most `limit` characters, marked where it was cut.
    private static func cut(_ text: String, to limit: Int) -> String {
        guard BoundedText.count(text) > limit else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(max(0, limit - 1)))) + "…"
    }

    // MARK: - Reads

    private func search(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["query", "limit", "cursor", "max_chars"])
        let text = try arguments.requiredString("query")
        let limit = try arguments.int("limit", range: 1...100) ?? 20
        let budget = try budget(arguments)
        var after: Reference?
        if let cursor = try arguments.string("cursor") {
            guard let reference = Reference(parsing: cursor), case .thread = reference else {
                throw RPCFault.invalidParams("cursor \(TerminalSafety.quoted(cursor, limit: 40)) is not one search gave")
            }
            after = reference
        }
        let query: Query
        do { query = try SearchInput.query([text]) } catch {
            throw ToolFailure("query does not parse: \(Self.oneLine(error))")
        }
        let (store, account) = try readStore()
        let options = SearchInput.options(accountID: account?.id)
        let names = try LabelNames(store: store)
        let threads: [ThreadSummary]
        do {
            threads = try store.searchThreads(query, options: options, limit: limit + 1, after: after)
        } catch StoreError.invalidArgument where after != nil {
            throw ToolFailure("cursor \(TerminalSafety.quoted(after.map { "\($0)" } ?? "", limit: 40)) is not a thread in the store "
                              + "(a cursor is the one the last search answer gave)")
        }
        // The query is the agent's own text: echoed, but within a share of the bound, so a
        // long query cannot push the answer past it.
        var header = "search: \(Self.cut(TerminalSafety.field("\(query.simplified())"), to: budget / 4))\n"
            + "searched: threads in \(account.map { TerminalSafety.field($0.email) } ?? "every account") of the local store, "
            + "newest first; spam and trash only when the query names them\n"
        for note in try SearchNotes.notes(query, store: store, options: options) { header += "note: \(TerminalSafety.field(note))\n" }
        if BoundedText.count(header) > budget / 2 { header = Self.cut(header, to: budget / 2) + "\n" }
        let fence = UntrustedFence()
        var room = budget - BoundedText.count(header) - BoundedText.count(fence.opening) - BoundedText.count(fence.closing) - 200
        var shown: [String] = []
        var lastShown: String?
        for thread in threads.prefix(limit) {
            var line = UntrustedFence.defused(Self.searchLine(thread, labels: names))
            if BoundedText.count(line) + 1 > room {
                // A line longer than the whole bound (a huge subject) is cut; a later one
                // waits for the next call.
                guard shown.isEmpty else { break }
                line = Self.cut(line, to: max(1, room - 1))
            }
            room -= BoundedText.count(line) + 1
            shown.append(line)
            lastShown = "thread:\(thread.threadID)"
        }
        let more = shown.count < threads.count
        header += shown.isEmpty ? "no thread matches\n" : "\(shown.count) thread(s): id, date, messages, participants, subject, labels, snippet\n"
        var answer = header
        if !shown.isEmpty { answer += fence.opening + shown.joined(separator: "\n") + fence.closing }
        let cursor = more ? lastShown : nil
        if let cursor { answer += "\n[more: call search again with the same query and cursor \"\(cursor)\"]" }
        return ToolAnswer(text: answer, nextCursor: cursor)
    }

    private func show(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["ref", "cursor", "max_chars"])
        let text = try arguments.requiredString("ref")
        guard let reference = Reference(parsing: text) else {
            throw ToolFailure("\(TerminalSafety.quoted(text, limit: 60)): not a reference (thread:ID or message:ID)")
        }
        let offset = try offsetCursor(arguments)
        let budget = try budget(arguments)
        let (store, account) = try readStore()
        var details = try store.messageDetails(reference, accountID: account?.id)
        guard !details.isEmpty else { throw ToolFailure("\(reference): no such \(reference.kindName) in the store") }
        let names = try LabelNames(store: store)
        // A body not stored yet is fetched as hd-show fetches it (hd-sync --fetch, a child).
        let notes = try FetchHelper(invocation: invocation).hydrateMissing(&details, store: store, names: names).notes
        let rendered = details.map { MessageView.text($0, labels: names, bodyNote: notes[$0.messageID]) }.joined(separator: "\n")
        let header = "\(reference): \(details.count) message(s)"
        return fencedAnswer(header: header, untrusted: rendered, offset: offset, budget: budget, tool: "show", records: false)
    }

    private func labels(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["cursor", "max_chars"])
        let offset = try offsetCursor(arguments), budget = try budget(arguments)
        let (store, account) = try readStore()
        let names = try LabelNames(store: store)
        let lines = try store.labelCounts(accountID: account?.id).map { Self.line(Records.label($0, labels: names)) }
        return fencedAnswer(header: "\(lines.count) label(s): name, messages, threads, unread threads",
                            untrusted: lines.joined(separator: "\n"), offset: offset, budget: budget, tool: "labels")
    }

    private func pending(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["held", "cursor", "max_chars"])
        let heldOnly = try arguments.bool("held") ?? false
        let offset = try offsetCursor(arguments), budget = try budget(arguments)
        let (store, account) = try readStore()
        let now = LocalTime.nowMilliseconds
        let records = try PendingRecords.list(store, accountID: account?.id, heldOnly: heldOnly, now: now)
        let header = "\(records.count) \(heldOnly ? "held" : "pending") record(s), as hd-pending prints them "
            + "(state held: waiting for the user's approval)"
        return fencedAnswer(header: header, untrusted: records.map(Self.line).joined(separator: "\n"), offset: offset,
                            budget: budget, tool: "pending")
    }

    private func filtersDryRun(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["query", "cursor", "max_chars"])
        let offset = try offsetCursor(arguments), budget = try budget(arguments)
        var scope: Query?
        if let text = try arguments.string("query") {
            do { scope = try Query.parse(text) } catch { throw ToolFailure("query does not parse: \(Self.oneLine(error))") }
        }
        // applyRules' dry run works inside a transaction it rolls back: nothing is written.
        let store = try invocation.openStore(.readWrite)
        let account = try composeAccount(store)
        guard let rules = try RulesFileLoader.load(invocation, store: store, accountID: account.id) else {
            throw ToolFailure("no rules file (\(try RulesFileLoader.path(invocation)))")
        }
        let outcome = try store.applyRules(rules, scope: scope, options: SearchInput.options(accountID: account.id),
                                           description: "filters dry run", dryRun: true)
        let names = try LabelNames(store: store)
        let lines = outcome.result.deltas.map { Self.line(Records.delta($0, labels: names)) }
        return fencedAnswer(header: "\(lines.count) change(s) the rules would make; nothing was changed",
                            untrusted: lines.joined(separator: "\n"), offset: offset, budget: budget, tool: "filters_dry_run")
    }

    // MARK: - Changes

    private func mark(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["actions", "refs"])
        let actionTexts = try arguments.strings("actions") ?? []
        let referenceTexts = try arguments.strings("refs") ?? []
        guard !actionTexts.isEmpty else { throw ToolFailure("no action given") }
        guard !referenceTexts.isEmpty else { throw ToolFailure("no reference given") }
        let actions = try actionTexts.map {
            guard let action = TriageAction(parsing: $0) else {
                throw ToolFailure("\(TerminalSafety.quoted($0, limit: 60)): not an action (\(TriageAction.names.joined(separator: ", ")), +LABEL, -LABEL)")
            }
            return action
        }
        let references = try referenceTexts.map {
            guard let reference = Reference(parsing: $0) else {
                throw ToolFailure("\(TerminalSafety.quoted($0, limit: 60)): not a reference (thread:ID or message:ID)")
            }
            return reference
        }
        let store = try invocation.openStore(.readWrite, durable: true)
        let account = try invocation.selectedAccount(in: store)
        let policy = try policy(store, account: account)
        guard policy >= .hold else { throw refuse("changing labels", under: policy) }
        let held = policy == .hold
        let result = try store.perform(actions, on: references, accountID: account?.id, held: held, origin: .agent)
        var text: String
        if let actionID = result.actionID {
            text = "action:\(actionID): \(result.deltas.count) change(s) on \(result.threadCount) thread(s); Hudson shows them now"
            if held {
                text += "; held for the user's approval (hd-pending --approve action:\(actionID)) before they reach Gmail"
            } else {
                text += invocation.pushQueuedChanges(for: result.deltas, in: store) ? "; sent to Gmail" : "; queued for the next hd-sync"
            }
            text += "; undo action:\(actionID) takes them back"
        } else {
            text = "nothing to change: the messages already are that way"
        }
        // One line, bounded however many references were unknown.
        let unknown = result.unknownReferences
        if !unknown.isEmpty {
            let named = unknown.prefix(5).map { "\($0)" }.joined(separator: ", ")
            text += "; not in the store: \(named)\(unknown.count > 5 ? " and \(unknown.count - 5) more" : "")"
        }
        return ToolAnswer(text: Self.cut(text, to: configuration.defaultMaxChars), isError: result.actionID == nil && !unknown.isEmpty)
    }

    private func undo(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["action"])
        var actionID: Int64?
        if let text = try arguments.string("action") {
            guard let id = HeldReference.action(text) else { throw ToolFailure("\(TerminalSafety.quoted(text, limit: 40)): not action:N") }
            actionID = id
        }
        let store = try invocation.openStore(.readWrite, durable: true)
        let account = try invocation.selectedAccount(in: store)
        let policy = try policy(store, account: account)
        guard policy >= .hold else { throw refuse("undoing an action", under: policy) }
        let held = policy == .hold
        // Under hold nothing the agent does takes effect unapproved: undoing the user's own
        // action would discard or cancel it at once, so only the agent's actions are its to undo.
        let result = try store.undo(actionID: actionID, accountID: account?.id, held: held, origin: .agent, onlyOwn: held)
        if result.alreadyUndone { return ToolAnswer(text: "action:\(result.actionID) was already undone") }
        var text = "undid action:\(result.actionID): \(result.deltas.count) change(s)"
        if let undoID = result.undoActionID, !result.deltas.isEmpty {
            let pendingLeft = try store.heldMutations(accountID: account?.id).contains { $0.actionID == undoID }
            if pendingLeft {
                text += "; those that had reached Gmail are held for the user's approval (hd-pending --approve action:\(undoID))"
            } else if !held {
                text += invocation.pushQueuedChanges(for: result.deltas, in: store) ? "; sent to Gmail" : "; queued for the next hd-sync"
            }
        }
        return ToolAnswer(text: text)
    }

    /// The account a message is written from: the one named (--account, $HUDSON_ACCOUNT),
    /// or the only one.
    private func composeAccount(_ store: Store) throws -> Account {
        if let account = try invocation.selectedAccount(in: store) { return account }
        let accounts = try store.accounts()
        guard accounts.count == 1, let only = accounts.first else {
            throw ToolFailure(accounts.isEmpty ? "no account (hd-auth login)" : "several accounts: start hd-mcp with --account EMAIL")
        }
        return only
    }

    private func addresses(_ arguments: Arguments, _ key: String) throws -> [MailAddress] {
        var list: [MailAddress] = []
        for text in try arguments.strings(key) ?? [] {
            do { list += try OutgoingAddresses.parse(text) } catch {
                throw ToolFailure("\(key): \(TerminalSafety.quoted(text, limit: 60)): \(error)")
            }
        }
        return list
    }

    /// The message a send or a draft queues, rendered and read back (OutgoingRender).
    private func compose(_ arguments: Arguments, account: Account) throws -> (PreparedMessage, [MailAddress]) {
        let to = try addresses(arguments, "to"), cc = try addresses(arguments, "cc"), bcc = try addresses(arguments, "bcc")
        let subject = try arguments.string("subject") ?? ""
        do { try OutgoingHeaderBlock.checkText(subject) } catch {
            throw ToolFailure("subject \(TerminalSafety.quoted(subject, limit: 60)): \(error)")
        }
        let body = try arguments.string("body") ?? ""
        var random = SystemRandomNumberGenerator()
        let seconds = LocalTime.nowMilliseconds / 1000
        let domain = account.email.split(separator: "@").last.map(String.init) ?? "localhost"
        let outgoing = OutgoingMessage(
            from: MailAddress(address: account.email), to: to, cc: cc, bcc: bcc, subject: subject, text: body,
            messageID: MessageBuilder.messageID(domain: domain, using: &random),
            date: MailDate.format(epochSeconds: seconds, offsetSeconds: LocalTime.offset(atEpochSeconds: seconds)))
        return (try OutgoingRender.checked(outgoing, using: &random), to + cc + bcc)
    }

    private func send(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["to", "cc", "bcc", "subject", "body"])
        let store = try invocation.openStore(.readWrite, durable: true)
        let account = try composeAccount(store)
        let policy = try policy(store, account: account)
        guard policy >= .hold else { throw refuse("sending", under: policy) }
        let (prepared, recipients) = try compose(arguments, account: account)
        guard !recipients.isEmpty else { throw ToolFailure("no recipient") }
        // A first message to someone is the user's to approve, whatever the policy.
        let strangers = try recipients.filter { try !store.hasWrittenTo($0.address, accountID: account.id) }
        var message = NewOutboxMessage(accountID: account.id, raw: prepared.raw, messageID: prepared.messageID,
                                       recipients: recipients.map(\.address), subject: prepared.subject)
        let held = policy == .hold || !strangers.isEmpty
        message.origin = .agent
        // A held message waits as a Gmail draft the user can read, edit or delete anywhere
        // (issue 40), saved by the next hd-sync; approval sends the draft as it is then.
        let entry = held ? try store.enqueueHeldSend(message) : try store.enqueueOutbox(message)
        let text: String
        if held {
            let why = policy == .hold ? "the agent policy is hold" : "the account never wrote to \(strangers.map(\.address).joined(separator: ", "))"
            text = "\(entry.reference): queued and held for the user's approval (\(why)), to be saved as a Gmail draft; "
                + "nothing is sent until hd-pending --approve \(entry.reference)"
        } else {
            text = "\(entry.reference): queued; the next hd-sync sends it (hd-undo \(entry.reference) cancels it until then)"
        }
        return ToolAnswer(text: text)
    }

    private func drafts(_ arguments: Arguments) throws -> ToolAnswer {
        try arguments.only(["action", "draft", "to", "cc", "bcc", "subject", "body", "cursor", "max_chars"])
        let action = try arguments.requiredString("action")
        switch action {
        case "list":
            let offset = try offsetCursor(arguments), budget = try budget(arguments)
            let (store, account) = try readStore()
            let accounts = try account.map { [$0] } ?? store.accounts()
            var lines: [String] = []
            for account in accounts {
                lines += try store.drafts(accountID: account.id).map { Self.line(Records.draft($0, account: account.email)) }
            }
            let now = LocalTime.nowMilliseconds
            lines += try store.pendingOutbox(accountID: account?.id).filter { $0.kind == .draft }
                .map { Self.line(Records.outboxDraft($0, now: now)) }
            return fencedAnswer(header: "\(lines.count) draft(s)", untrusted: lines.joined(separator: "\n"), offset: offset,
                                budget: budget, tool: "drafts")
        case "create", "update":
            let store = try invocation.openStore(.readWrite, durable: true)
            let account = try composeAccount(store)
            let policy = try policy(store, account: account)
            guard policy >= .drafts else { throw refuse("saving a draft", under: policy) }
            var draftID: String?, base: String?
            if action == "update" {
                let text = try arguments.string("draft") ?? ""
                guard text.hasPrefix("draft:"), let draft = try store.draft(id: String(text.dropFirst("draft:".count)), accountID: account.id) else {
                    throw ToolFailure("\(TerminalSafety.quoted(text, limit: 60)): no such draft (draft:ID from drafts list)")
                }
                // A message waiting to be sent (scheduled, or held for approval) is sent as its
                // draft is then: an agent rewriting it would change what the user approved.
                if let schedule = try store.scheduleHolding(draftID: draft.draftID, accountID: account.id) {
                    throw ToolFailure("\(TerminalSafety.quoted(text, limit: 60)): a message waiting to be sent (outbox:\(schedule)); "
                        + "only the user may change it")
                }
                draftID = draft.draftID
                base = draft.gmailID
            }
            let (prepared, recipients) = try compose(arguments, account: account)
            var message = NewOutboxMessage(accountID: account.id, raw: prepared.raw, messageID: prepared.messageID,
                                           recipients: recipients.map(\.address), subject: prepared.subject, kind: .draft,
                                           draftID: draftID, draftBaseGmailID: base)
            message.origin = .agent
            let entry = try store.enqueueOutbox(message)
            return ToolAnswer(text: "\(entry.reference): draft queued; the next hd-sync saves it to Gmail as a draft (never sent)")
        default:
            throw RPCFault.invalidParams("action must be list, create or update")
        }
    }
}

/// A tool's answer: its text, within the bound, and the cursor to read on.
struct ToolAnswer {
    var text: String
    var isError = false
    var nextCursor: String?

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("content", .array([.object([("type", .string("text")), ("text", .string(text))])])),
            ("isError", .bool(isError)),
        ]
        if let nextCursor { members.append(("structuredContent", .object([("nextCursor", .string(nextCursor))]))) }
        return .object(members)
    }
}
