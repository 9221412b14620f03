/*!
 `hd-filters`: Gmail's own filters (users.settings.filters.list, gmail-api.md §2.14) and
 the rules file, applied to the mail in the store. Gmail applies filters only to
 arriving mail; here each filter is translated (FilterTranslator) into a query of the
 one query language and hd-mark actions, and a run over the store is one recorded
 action (Store.applyRules): `--dry-run` prints every change first, `hd-undo` takes it
 back, and the flusher sends it with batchModify like any triage. `list` and `apply`
 read the filters from Gmail at each run (the store keeps no copy: a filter edited in
 the web UI is never replayed stale); the rules subcommands work offline.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonMail
import HudsonOutput
import HudsonQuery
import HudsonStore
import HudsonSync

@MainActor
public enum FiltersCommand {
    /// The account's filters, translated, in Gmail's order.
    static func translations(_ cli: Invocation, store: Store, account: Account) async throws -> [FilterTranslation] {
        let access = try GmailAccess(email: account.email, configDirectory: try cli.configDirectory(),
                                     endpoints: try GmailEndpoints(environment: cli.environment))
        let list = try await access.interactive.listFilters()
        for id in list.unusableIDs {
            cli.warn("filter:\(TerminalSafety.quoted(id)): Gmail's answer names a filter by an id of another shape "
                     + "than a Gmail filter id's; left out, never replayed")
        }
        let labels = try store.labels(accountID: account.id)
        return list.filters.map { filter in
            FilterTranslator.translate(filter) { id in
                labels.first { $0.id == id }.map { $0.name ?? $0.id }
            }
        }
    }

    /// `filter:ID  QUERY  ACTIONS  NOTES`.
    static func record(_ translation: FilterTranslation) -> Record {
        let actions = translation.actions.map(\.argument)
        return Record(
            type: "filter", id: "filter:\(translation.filterID)",
            fields: [("query", .string(translation.queryText)), ("actions", .array(actions.map { .string($0) })),
                     ("applicable", .bool(translation.rule != nil)), ("notes", .array(translation.notes.map { .string($0) }))],
            columns: [translation.queryText.isEmpty ? "(no query)" : translation.queryText,
                      actions.isEmpty ? "(no action)" : translation.actions.map(\.description).joined(separator: " ")]
                + (translation.notes.isEmpty ? [] : ["# " + translation.notes.joined(separator: "; ")]))
    }

    public static func list(_ cli: Invocation) async throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try DraftsCommand.account(cli, store)
        let translations = try await translations(cli, store: store, account: account)
        let sink = cli.makeSink()
        for translation in translations { try sink.emit(record(translation)) }
        try sink.finish()
        if translations.isEmpty { cli.noteForTerminal("no filters in Gmail") }
        return translations.isEmpty ? .noMatch : .success
    }

    public static func apply(_ cli: Invocation) async throws -> ExitStatus {
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try DraftsCommand.account(cli, store)
        var chosen = Set<String>()
        for operand in cli.arguments.operands {
            let id = operand.hasPrefix("filter:") ? String(operand.dropFirst("filter:".count)) : operand
            guard !id.isEmpty else { throw UsageError("\(TerminalSafety.quoted(operand)): not a filter (filter:ID)") }
            chosen.insert(id)
        }
        var translations = try await translations(cli, store: store, account: account)
        let unknown = chosen.subtracting(translations.map(\.filterID))
        for id in unknown.sorted() { cli.warn("filter:\(TerminalSafety.quoted(id)): Gmail has no such filter") }
        if !chosen.isEmpty { translations = translations.filter { chosen.contains($0.filterID) } }
        for translation in translations {
            // Gmail's text (ids, addresses) is shown with its control characters escaped.
            for note in translation.notes {
                cli.warn(TerminalSafety.field("filter:\(translation.filterID): not replayed: \(note)"))
            }
        }
        let rules = translations.compactMap(\.rule)
        let ids = translations.filter { $0.rule != nil }.map { "filter:\($0.filterID)" }
        let status = try run(cli, store: store, account: account, rules: rules,
                             description: "hd-filters apply " + (chosen.isEmpty ? "(all filters)" : ids.joined(separator: " ")))
        return unknown.isEmpty ? status : .partialFailure
    }

    public static func rulesCheck(_ cli: Invocation) throws -> ExitStatus {
        // The labels are checked against the account when there is a store and one account
        // (or --account); the rules' syntax is checked without one.
        let store = try? cli.openStore(.readOnly)
        var account: Account?
        if let store {
            let accounts = try store.accounts()
            account = try cli.selectedAccount(in: store) ?? (accounts.count == 1 ? accounts[0] : nil)
        }
        guard let rules = try RulesFileLoader.load(cli, store: store, accountID: account?.id) else {
            throw CommandFailure(.configuration, "\(try RulesFileLoader.path(cli)): no rules file")
        }
        let sink = cli.makeSink()
        for rule in rules { try sink.emit(record(rule)) }
        try sink.finish()
        return .success
    }

    public static func rulesApply(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try DraftsCommand.account(cli, store)
        guard let rules = try RulesFileLoader.load(cli, store: store, accountID: account.id) else {
            throw CommandFailure(.configuration, "\(try RulesFileLoader.path(cli)): no rules file")
        }
        return try run(cli, store: store, account: account, rules: rules, description: "hd-filters rules apply")
    }

    /// Which rules match the given messages: references (or standard input) in the store,
    /// and `.eml` files (an operand with a `/` or a `.`), loaded into a scratch store as
    /// arriving mail (EmlMapping) so the one query translator judges them too.
    public static func rulesTest(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try DraftsCommand.account(cli, store)
        guard let rules = try RulesFileLoader.load(cli, store: store, accountID: account.id) else {
            throw CommandFailure(.configuration, "\(try RulesFileLoader.path(cli)): no rules file")
        }
        enum Item { case reference(Reference), file(String, Reference) }
        var items: [Item] = []
        var files: [(path: String, bytes: [UInt8])] = []
        var failures = 0
        for text in try cli.referenceTexts(cli.arguments.operands) {
            if text.contains("/") || text.contains(".") {
                // Opened the one way (InputFile): a regular file of at most a message's
                // size; a FIFO or a device is refused, never waited on.
                let bytes: [UInt8]
                do {
                    guard let read = try InputFile.read(text, limit: MailSources.maximumMessageBytes,
                                                        what: "Gmail's 150 MB limit for one message", failing: .dataError) else {
                        cli.warn("\(TerminalSafety.quoted(text)): no such file")
                        failures += 1
                        continue
                    }
                    bytes = read
                } catch let error as CommandFailure {
                    cli.warn(error.message)
                    failures += 1
                    continue
                }
                let id = "eml\(files.count)"
                files.append((text, bytes))
                items.append(.file(text, .message(id)))
            } else if let reference = Reference(parsing: text) {
                items.append(.reference(reference))
            } else {
                cli.warn("\(TerminalSafety.quoted(text)): not a reference or a file")
                failures += 1
            }
        }
        let references = items.compactMap { if case .reference(let r) = $0 { r } else { nil } }
        var inStore = try store.ruleMatches(rules, on: references, options: options(account))[...]
        var fromFiles: ArraySlice<[Int]?> = []
        if !files.isEmpty {
            // A directory of its own (mkdtemp: a new name, mode 0700): the messages go in
            // it, and a name another user could guess and create first must not be used.
            var template = Array((FileManager.default.temporaryDirectory.path + "/hudson-rules-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else {
                throw CommandFailure(.temporaryFailure, "cannot make a scratch directory: \(String(cString: strerror(errno)))")
            }
            let scratch = URL(fileURLWithPath: String(cString: made))
            defer { try? FileManager.default.removeItem(at: scratch) }
            let test = try Store.open(path: scratch.appendingPathComponent("rules-test.sqlite3").path, access: .create)
            let scratchAccount = try test.addAccount(email: account.email, consentedAt: 0, lookbackDays: 0)
            try test.replaceLabels(accountID: scratchAccount.id, with: try store.labels(accountID: account.id))
            var fileReferences: [Reference] = []
            for (index, file) in files.enumerated() {
                let (snapshot, body) = EmlMapping.message(raw: file.bytes, id: "eml\(index)", now: LocalTime.nowMilliseconds)
                _ = try test.applySnapshots([snapshot], accountID: scratchAccount.id)
                _ = try test.saveBody(body, gmailID: snapshot.id, accountID: scratchAccount.id)
                fileReferences.append(.message(snapshot.id))
            }
            fromFiles = try test.ruleMatches(rules, on: fileReferences, options: SearchInput.options(accountID: scratchAccount.id))[...]
        }
        var matched = 0
        for item in items {
            let name: String, found: [Int]??
            switch item {
            case .reference(let reference): (name, found) = (reference.description, inStore.popFirst())
            case .file(let path, _): (name, found) = (path, fromFiles.popFirst())
            }
            guard case let names?? = found else {
                cli.warn("\(name): no such message")
                failures += 1
                continue
            }
            // One rule name one field, as one label is (Records.labelList): a rule named
            // "a, b" is not two rules.
            let rulesText = Records.labelList(names.map { rules[$0].name }, separator: ", ")
            try cli.stdout.write(TerminalSafety.field(name) + "\t" + (names.isEmpty ? "(no rule)" : rulesText) + "\n")
            if !names.isEmpty { matched += 1 }
        }
        return failures > 0 ? .partialFailure : matched == 0 ? .noMatch : .success
    }

    /// `NAME  QUERY  => ACTIONS`.
    static func record(_ rule: MailRule) -> Record {
        let actions = rule.actions.map(\.argument)
        return Record(
            type: "rule", id: rule.name,
            fields: [("line", .int(Int64(rule.line))), ("query", .string(rule.queryText)),
                     ("actions", .array(actions.map { .string($0) }))],
            columns: [rule.queryText, "=> " + rule.actions.map(\.description).joined(separator: " ")])
    }

    static func options(_ account: Account) -> SearchOptions {
        SearchInput.options(accountID: account.id)
    }

    /// Runs `rules` over the store (within --query), as one action; prints what matched,
    /// with --dry-run every change, else the action id.
    static func run(_ cli: Invocation, store: Store, account: Account, rules: [MailRule], description: String) throws -> ExitStatus {
        let scope = try cli.arguments.string("query").map { try Query.parse($0) }
        let dryRun = cli.arguments.flag("dry-run")
        let outcome = try store.applyRules(rules, scope: scope, options: options(account), description: description, dryRun: dryRun)
        // A word of a body not stored is found only in the subject, addresses and snippet.
        if let textRule = rules.first(where: \.query.searchesText),
           let note = try SearchNotes.bodyNote(textRule.query, store: store, accountID: account.id) {
            cli.warn(note)
        }
        let sink = cli.makeSink()
        if dryRun {
            let names = try LabelNames(store: store)
            for delta in outcome.result.deltas { try sink.emit(Records.delta(delta, labels: names)) }
        } else {
            for (rule, matched) in zip(rules, outcome.matches) {
                try sink.emit(Record(type: "rule_matches", id: rule.name,
                                     fields: [("messages", .int(Int64(matched.count))), ("query", .string(rule.queryText))],
                                     columns: ["\(matched.count) message(s)", rule.queryText]))
            }
        }
        try sink.finish()
        if let actionID = outcome.result.actionID {
            cli.warn("action \(actionID): \(outcome.result.deltas.count) change(s) on \(outcome.result.threadCount) thread(s); "
                     + "hd-undo \(actionID) takes them back")
            if !cli.arguments.flag("no-flush") { cli.pushQueuedChanges(for: outcome.result.deltas, in: store) }
        } else if !dryRun {
            cli.warn("nothing to change")
        } else if outcome.result.deltas.isEmpty {
            cli.noteForTerminal(rules.isEmpty ? "no rules to apply" : "nothing would change")
        }
        return .success
    }
}
