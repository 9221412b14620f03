/*!
 Running a compiled search: message rows newest first (or by bm25 relevance), thread
 rows as the distinct threads of the matching messages in that order, counts, and the
 query plan for `--explain`. Message paging is keyset (`m.id < key`); thread paging walks
 the same order and resumes after the given thread, so a page never repeats or skips.
 */
import HudsonQuery
import SQLite

/// One message as list views show it.
public struct MessageSummary: Equatable, Sendable {
    public var accountID: Int64
    public var messageID: String
    public var threadID: String
    public var internalDate: Int64
    public var subject: String?
    public var sender: String?
    public var to: String?
    public var snippet: String
    public var sizeEstimate: Int64
    public var hasAttachment: Bool
    public var hydrated: Bool
    /// Effective label ids, sorted.
    public var labels: [String]
}

extension Store {
    func searchCompiler(_ options: SearchOptions) throws -> SearchCompiler {
        let labels = try db.map("""
            SELECT id, name, type FROM \(Store.shownLabels) WHERE ?1 IS NULL OR account_id = ?1
            """, options.accountID) { (id: $0.string(0), name: $0.optionalString(1), type: $0.optionalString(2)) }
        let own = try db.map("SELECT email FROM accounts WHERE ?1 IS NULL OR id = ?1", options.accountID) { $0.string(0) }
        let keysFollowDates = try db.scalarInt("SELECT NOT EXISTS (SELECT 1 FROM message_key_exceptions)") == 1
        let userLabels = Set(labels.filter { $0.type == "user" }.map(\.id))
        return SearchCompiler(
            options: options, ownAddresses: own, keysFollowDates: keysFollowDates,
            isUserLabel: { userLabels.contains($0) }
        ) { wanted in
            var ids: [String] = []
            for label in labels {
                if Store.labelMatches(id: label.id, name: label.name, wanted: wanted.raw) && !ids.contains(label.id) {
                    ids.append(label.id)
                }
            }
            return ids
        }
    }

    /// The SQL, MATCH expression and arguments a query becomes.
    public func compileSearch(_ query: Query, options: SearchOptions) throws -> CompiledSearch {
        var compiler = try searchCompiler(options)
        return try compiler.compile(query)
    }

    /// `EXPLAIN QUERY PLAN` of the search, one line per step, for `--explain`.
    public func searchPlan(_ query: Query, options: SearchOptions) throws -> [String] {
        let compiled = try compileSearch(query, options: options)
        let statement = try db.prepare(
            "EXPLAIN QUERY PLAN SELECT m.id \(compiled.fromAndWhere) ORDER BY \(compiled.orderBy)")
        return try statement.map(compiled.arguments) { $0.string(3) }
    }

    /// Matching messages, newest first (or by relevance), at most `limit`, after `before`
    /// (a message reference from the previous page).
    public func searchMessages(_ query: Query, options: SearchOptions, limit: Int, before: Reference? = nil) throws -> [MessageSummary] {
        try db.read {
            var compiled = try compileSearch(query, options: options)
            var skipUntil: String?
            if let before {
                guard case .message(let id) = before, let key = try db.scalarInt(
                    "SELECT id FROM messages WHERE gmail_id = ? AND (?2 IS NULL OR account_id = ?2)", id, options.accountID)
                else { throw StoreError.invalidArgument("--before: \(before): not a message in the store") }
                if options.sort == .newest {
                    compiled.fromAndWhere += (compiled.fromAndWhere.contains(" WHERE ") ? " AND " : " WHERE ") + "m.id < ?"
                    compiled.arguments.append(.integer(key))
                } else {
                    skipUntil = id
                }
            }
            let statement = try db.cached("SELECT m.id, m.gmail_id \(compiled.fromAndWhere) ORDER BY \(compiled.orderBy)")
            var keys: [Int64] = []
            try statement.bind(compiled.arguments)
            defer { statement.reset() }
            while keys.count < limit, try statement.step() {
                let row = statement.currentRow
                if let wanted = skipUntil {
                    if row.string(1) == wanted { skipUntil = nil }
                    continue
                }
                keys.append(row.int64(0))
            }
            return try keys.compactMap { try messageSummary(key: $0) }
        }
    }

    /// The distinct threads of the matching messages, in the order of each thread's
    /// best-placed match, at most `limit`, after the thread `after` of a previous page.
    public func searchThreads(_ query: Query, options: SearchOptions, limit: Int, after: Reference? = nil) throws -> [ThreadSummary] {
        try db.read {
            let compiled = try compileSearch(query, options: options)
            var skipUntil: String?
            if let after {
                guard case .thread(let id) = after else {
                    throw StoreError.invalidArgument("\(after): thread results page after a thread reference")
                }
                guard try db.scalarInt("""
                    SELECT 1 FROM messages WHERE thread_id = ? AND (?2 IS NULL OR account_id = ?2) LIMIT 1
                    """, id, options.accountID) != nil
                else { throw StoreError.invalidArgument("--before: \(after): not a thread in the store") }
                skipUntil = id
            }
            let statement = try db.cached("SELECT m.account_id, m.thread_id \(compiled.fromAndWhere) ORDER BY \(compiled.orderBy)")
            try statement.bind(compiled.arguments)
            defer { statement.reset() }
            var seen = Set<String>()
            var threads: [(Int64, String)] = []
            while threads.count < limit, try statement.step() {
                let row = statement.currentRow
                let account = row.int64(0)
                let thread = row.string(1)
                guard seen.insert("\(account)\u{0}\(thread)").inserted else { continue }
                if let wanted = skipUntil {
                    if thread == wanted { skipUntil = nil }
                    continue
                }
                threads.append((account, thread))
            }
            return try threads.compactMap { try threadSummary(threadID: $0.1, accountID: $0.0) }
        }
    }

    /// How many messages, or distinct threads, match.
    public func countSearch(_ query: Query, options: SearchOptions, threads: Bool) throws -> Int {
        let compiled = try compileSearch(query, options: options)
        let sql = threads
            ? "SELECT count(*) FROM (SELECT DISTINCT m.account_id, m.thread_id \(compiled.fromAndWhere))"
            : "SELECT count(*) \(compiled.fromAndWhere)"
        return Int(try db.prepare(sql).first(compiled.arguments) { $0.int64(0) } ?? 0)
    }

    func messageSummary(key: Int64) throws -> MessageSummary? {
        guard var summary = try db.first("""
            SELECT account_id, gmail_id, thread_id, internal_date, subject, sender, to_header, snippet, size_estimate,
                   has_attachment, body_state
              FROM messages WHERE id = ?
            """, key, transform: {
                MessageSummary(
                    accountID: $0.int64(0), messageID: $0.string(1), threadID: $0.string(2), internalDate: $0.int64(3),
                    subject: $0.optionalString(4), sender: $0.optionalString(5), to: $0.optionalString(6),
                    snippet: $0.string(7), sizeEstimate: $0.int64(8), hasAttachment: $0.bool(9),
                    hydrated: $0.int(10) == 1, labels: [])
            })
        else { return nil }
        summary.labels = try effectiveLabels(messageKey: key)
        return summary
    }
}
