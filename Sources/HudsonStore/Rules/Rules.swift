/*!
 Rules (a rules file, or Gmail's own filters translated) applied to stored mail as ONE
 recorded action: each rule's query is compiled by the one SearchCompiler, the messages
 it selects get its hd-mark actions, and Triage queues it all in one transaction
 (`perform(groups:)`), so `hd-undo` takes the whole run back. Like a Gmail filter, a rule
 acts on each matching message, not on its whole thread (gmail-api.md §2.14).

 On new mail (hd-sync): an account's new mail is what has an internal date at or after
 the moment hd-sync first ran with rules for it (`rules_accounts.since`) and has not had
 the rules run yet (`rules_applied`). The messages the rules ran on are recorded in the
 transaction that queues their changes, so a re-sync, a kill -9 between storing the
 mail and running the rules, or a re-list after history expiry (which stores the same
 Gmail ids again) never runs them twice; mail stored before, or backfilled from the
 past, is never touched.
 */
import HudsonQuery
import SQLite

/// What a run of rules did (or would do).
public struct RulesOutcome: Equatable, Sendable {
    /// The triage result: the action id (nil in a dry run or when nothing changed) and
    /// every change queued.
    public var result: TriageResult
    /// Per rule, in order: the messages its query selected.
    public var matches: [[Reference]]
    /// How many messages the run considered (new mail only; nil for a run over the store).
    public var considered: Int?
}

extension Store {
    /// Applies `rules` to the stored messages each selects, within `scope` when given, as
    /// one action described by `description`.
    public func applyRules(
        _ rules: [MailRule], scope: Query? = nil, options: SearchOptions, description: String, dryRun: Bool
    ) throws -> RulesOutcome {
        try db.write {
            let matches = try rules.map { try messages(matching: $0.query, scope: scope, options: options, within: nil) }
            let groups = zip(rules, matches).map { TriageGroup(actions: $0.actions, references: $1) }
            let result = try perform(groups: groups, description: description, accountID: options.accountID, dryRun: dryRun)
            return RulesOutcome(result: result, matches: matches, considered: nil)
        }
    }

    /// Applies `rules` to the account's new mail that they have not run on yet, and
    /// records that they have, in one transaction (see the file comment). The first call
    /// for an account only records when new mail starts (nothing is old enough to be
    /// new). Nil when there was no new mail.
    public func applyRulesToNewMail(
        _ rules: [MailRule], accountID: Int64, options: SearchOptions, description: String
    ) throws -> RulesOutcome? {
        try db.write {
            guard let since = try db.scalarInt("SELECT since FROM rules_accounts WHERE account_id = ?", accountID) else {
                try db.execute("INSERT INTO rules_accounts (account_id, since) VALUES (?, ?)", accountID, now)
                return nil
            }
            // New mail (NewMail.swift) the rules have not run on. When a rule looks for
            // words, a message waits for its body (hydration stores new mail's bodies a
            // few passes later), unless its body is parked: it is then judged on what the
            // store has, as hd-search would judge it, rather than never.
            let waitForBody = rules.contains { $0.query.searchesText }
            let fresh = SQLiteRows(columns: 1)
            try db.forEach("""
                SELECT m.id, m.gmail_id FROM messages AS m
                 WHERE \(Self.receivedSince)
                   AND NOT EXISTS (SELECT 1 FROM rules_applied AS r WHERE r.account_id = ?1 AND r.gmail_id = m.gmail_id)
                   AND (NOT ?3 OR m.body_state = 1 OR EXISTS (
                        SELECT 1 FROM sync_parked AS p WHERE p.account_id = ?1 AND p.stage = 'body' AND p.gmail_id = m.gmail_id))
                """, accountID, since, waitForBody) { fresh.append(.integer($0.int64(0))) }
            guard !fresh.isEmpty else { return nil }
            var scoped = options
            scoped.accountID = accountID
            let matches = try rules.map { try messages(matching: $0.query, scope: nil, options: scoped, within: fresh) }
            let groups = zip(rules, matches).map { TriageGroup(actions: $0.actions, references: $1) }
            let result = try perform(groups: groups, description: description, accountID: accountID)
            try db.execute("""
                INSERT OR IGNORE INTO rules_applied (account_id, gmail_id, action_id, applied_at)
                SELECT ?1, m.gmail_id, ?2, ?3 FROM hudson_rows(?4) AS r JOIN messages AS m ON m.id = r.c0
                """, accountID, result.actionID, now, fresh)
            return RulesOutcome(result: result, matches: matches, considered: fresh.count)
        }
    }

    /// Forgets when new mail started for the account's rules: hd-sync ran without rules,
    /// so mail arriving now is not recorded as judged, and rules that come back later
    /// must not run on it (the user has handled it since). The next run with rules
    /// starts again from then.
    public func forgetRulesStart(accountID: Int64) throws {
        try db.write { try db.execute("DELETE FROM rules_accounts WHERE account_id = ?", accountID) }
    }

    /// Whether rules have run on the account's new mail since hd-sync last ran without them.
    public func rulesStarted(accountID: Int64) throws -> Bool {
        try db.read { try db.scalarInt("SELECT 1 FROM rules_accounts WHERE account_id = ?", accountID) != nil }
    }

    /// The messages `query` (and `scope`) selects, as message references, newest first;
    /// only among the message keys `within` when given.
    func messages(matching query: Query, scope: Query?, options: SearchOptions, within: SQLiteRows?) throws -> [Reference] {
        let combined = scope.map { Query(root: .and([query.root, $0.root])) } ?? query
        var compiled = try compileSearch(combined, options: options)
        var arguments: [any SQLiteBindable] = compiled.arguments
        if let within {
            // On the driving index's key: the label's index seeks each listed key, where a
            // condition on `m` would walk every member of the label (SearchCompiler).
            compiled.require("\(compiled.keyColumn) IN (SELECT c0 FROM hudson_rows(?))")
            arguments.append(within)
        }
        let statement = try db.prepare("SELECT m.gmail_id \(compiled.fromAndWhere) ORDER BY \(compiled.keyColumn) DESC")
        return try statement.map(arguments) { .message($0.string(0)) }
    }
}

extension Store {
    /// For each reference (a message, or every message of a thread), the indexes of the
    /// rules whose query selects it: `hd-filters rules test`. Nil for a reference that
    /// names no stored message.
    public func ruleMatches(_ rules: [MailRule], on references: [Reference], options: SearchOptions) throws -> [[Int]?] {
        try db.read {
            var keys: [[Int64]] = []
            for reference in references {
                let sql = switch reference {
                case .message: "SELECT id FROM messages WHERE gmail_id = ?1 AND (?2 IS NULL OR account_id = ?2)"
                case .thread: "SELECT id FROM messages WHERE thread_id = ?1 AND (?2 IS NULL OR account_id = ?2)"
                }
                keys.append(try db.map(sql, reference.id, options.accountID) { $0.int64(0) })
            }
            let all = SQLiteRows(columns: 1)
            for key in Set(keys.joined()) { all.append(.integer(key)) }
            var selected: [Set<String>] = []
            for rule in rules {
                selected.append(Set(try messages(matching: rule.query, scope: nil, options: options, within: all).map(\.id)))
            }
            var ids: [Int64: String] = [:]
            if !all.isEmpty {
                try db.forEach("SELECT m.id, m.gmail_id FROM hudson_rows(?) AS r JOIN messages AS m ON m.id = r.c0", all) {
                    ids[$0.int64(0)] = $0.string(1)
                }
            }
            return keys.map { messageKeys in
                guard !messageKeys.isEmpty else { return nil }
                let gmailIDs = Set(messageKeys.compactMap { ids[$0] })
                return rules.indices.filter { !selected[$0].isDisjoint(with: gmailIDs) }
            }
        }
    }
}
