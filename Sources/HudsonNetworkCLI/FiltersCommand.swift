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
import HudsonCLI
import HudsonGmail
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
        let filters = try await access.interactive.listFilters()
        let names = try LabelNames(store: store)
        return filters.map { filter in
            FilterTranslator.translate(filter) { id in
                let name = names.name(id, account: account.id)
                return name == id ? nil : name
            }
        }
    }

    /// `filter:ID  QUERY  ACTIONS  NOTES`.
    static func record(_ translation: FilterTranslation) -> Record {
        let actions = translation.actions.map(\.description)
        return Record(
            type: "filter", id: "filter:\(translation.filterID)",
            fields: [("query", .string(translation.queryText)), ("actions", .array(actions.map { .string($0) })),
                     ("applicable", .bool(translation.rule != nil)), ("notes", .array(translation.notes.map { .string($0) }))],
            columns: [translation.queryText.isEmpty ? "(no query)" : translation.queryText,
                      actions.isEmpty ? "(no action)" : actions.joined(separator: " ")]
                + (translation.notes.isEmpty ? [] : ["# " + translation.notes.joined(separator: "; ")]))
    }

    public static func list(_ cli: Invocation) async throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try DraftsCommand.account(cli, store)
        let translations = try await translations(cli, store: store, account: account)
        let sink = cli.makeSink()
        for translation in translations { try sink.emit(record(translation)) }
        try sink.finish()
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
            for note in translation.notes { cli.warn("filter:\(translation.filterID): not replayed: \(note)") }
        }
        let rules = translations.compactMap(\.rule)
        let ids = translations.filter { $0.rule != nil }.map { "filter:\($0.filterID)" }
        let status = try run(cli, store: store, account: account, rules: rules,
                             description: "hd-filters apply " + (chosen.isEmpty ? "(all filters)" : ids.joined(separator: " ")))
        return unknown.isEmpty ? status : .partialFailure
    }

    public static func rulesCheck(_ cli: Invocation) throws -> ExitStatus {
        let store = try? cli.openStore(.readOnly)
        let account = try store.flatMap { try cli.selectedAccount(in: $0) ?? (try $0.accounts().count == 1 ? $0.accounts().first : nil) }
        guard let rules = try RulesSupport.load(cli, store: store, accountID: account?.id) else {
            throw CommandFailure(.configuration, "\(try RulesSupport.path(cli)): no rules file")
        }
        let sink = cli.makeSink()
        for rule in rules { try sink.emit(record(rule)) }
        try sink.finish()
        return .success
    }

    public static func rulesApply(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readWrite, durable: true)
        let account = try DraftsCommand.account(cli, store)
        guard let rules = try RulesSupport.load(cli, store: store, accountID: account.id) else {
            throw CommandFailure(.configuration, "\(try RulesSupport.path(cli)): no rules file")
        }
        return try run(cli, store: store, account: account, rules: rules, description: "hd-filters rules apply")
    }

    /// Which rules match the given messages (references, or standard input).
    public static func rulesTest(_ cli: Invocation) throws -> ExitStatus {
        let store = try cli.openStore(.readOnly)
        let account = try DraftsCommand.account(cli, store)
        guard let rules = try RulesSupport.load(cli, store: store, accountID: account.id) else {
            throw CommandFailure(.configuration, "\(try RulesSupport.path(cli)): no rules file")
        }
        var references: [Reference] = []
        var failures = 0
        for text in try cli.referenceTexts(cli.arguments.operands) {
            if let reference = Reference(parsing: text) { references.append(reference) } else {
                cli.warn("\(TerminalSafety.quoted(text)): not a reference")
                failures += 1
            }
        }
        let matches = try store.ruleMatches(rules, on: references, options: options(account))
        var matched = 0
        for (reference, names) in zip(references, matches) {
            let rulesText = names.map { rules[$0].name }
            try cli.stdout.write(TerminalSafety.field(reference.description) + "\t"
                + (rulesText.isEmpty ? "(no rule)" : rulesText.map { TerminalSafety.field($0) }.joined(separator: ", ")) + "\n")
            if !names.isEmpty { matched += 1 }
        }
        return failures > 0 ? .partialFailure : matched == 0 ? .noMatch : .success
    }

    /// `NAME  QUERY  => ACTIONS`.
    static func record(_ rule: MailRule) -> Record {
        let actions = rule.actions.map(\.description)
        return Record(
            type: "rule", id: rule.name,
            fields: [("line", .int(Int64(rule.line))), ("query", .string(rule.queryText)),
                     ("actions", .array(actions.map { .string($0) }))],
            columns: [rule.queryText, "=> " + actions.joined(separator: " ")])
    }

    static func options(_ account: Account) -> SearchOptions {
        SearchSupport.options(accountID: account.id)
    }

    /// Runs `rules` over the store (within --query), as one action; prints what matched,
    /// with --dry-run every change, else the action id.
    static func run(_ cli: Invocation, store: Store, account: Account, rules: [MailRule], description: String) throws -> ExitStatus {
        let scope = try cli.arguments.string("query").map { try Query.parse($0) }
        let dryRun = cli.arguments.flag("dry-run")
        let outcome = try store.applyRules(rules, scope: scope, options: options(account), description: description, dryRun: dryRun)
        // A word of a body not stored is found only in the subject, addresses and snippet.
        if let textRule = rules.first(where: \.query.searchesText),
           let note = try SearchSupport.bodyNote(textRule.query, store: store, accountID: account.id) {
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
        }
        return .success
    }
}
