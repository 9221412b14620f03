/*!
 Running a compiled search: message rows newest first (or by bm25 relevance), thread
 rows as the distinct threads of the matching messages in that order, counts, and the
 query plan for `--explain`. Message paging is keyset (`m.id < key`); thread paging walks
 the same order and resumes after the given thread, so a page never repeats or skips.
 */
import HudsonQuery
import SQLite

extension Store {
    func searchCompiler(_ options: SearchOptions) throws -> SearchCompiler {
        let labels = try db.map("""
            SELECT id, name, type FROM \(Store.shownLabels) WHERE ?1 IS NULL OR account_id = ?1
            """, options.accountID) { (id: $0.string(0), name: $0.optionalString(1), type: $0.optionalString(2)) }
        let own = try db.map("SELECT email FROM accounts WHERE ?1 IS NULL OR id = ?1", options.accountID) { $0.string(0) }
        let keyDisplacement = try messageKeyDisplacement()
        let userLabels = Set(labels.filter { $0.type == "user" }.map(\.id))
        // Read in the caller's transaction, as the search that uses it is.
        let labelSource = EffectiveLabels.source(queueIsEmpty: try queueIsEmpty())
        let db = self.db
        return SearchCompiler(
            options: options, ownAddresses: own, keyDisplacement: keyDisplacement,
            isUserLabel: { userLabels.contains($0) }, labelSource: labelSource,
            isRareSize: { bytes in
                // Counted on the size index, stopping one past the limit.
                let larger = try? db.scalarInt("""
                    SELECT count(*) FROM (SELECT 1 FROM messages INDEXED BY messages_by_size
                                           WHERE size_estimate > ? LIMIT ?)
                    """, bytes, SearchCompiler.rareSizeMessages + 1)
                return (larger ?? Int64.max) <= Int64(SearchCompiler.rareSizeMessages)
            },
            labelMessages: { label in
                // The kept counts (migration 016), read only for a query that asks for a label.
                (try? db.scalarInt("""
                    SELECT coalesce(sum(messages), 0) FROM label_counts WHERE label = ? AND (?2 IS NULL OR account_id = ?2)
                    """, label, options.accountID)) ?? 0
            }
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

    /// How far message keys stand from their date's first key (SearchCompiler.keyDisplacement):
    /// 0...999, widened by the listed exceptions, read in the caller's transaction. Too many
    /// exceptions to read at each search, or one too far off, and dates are compared alone.
    func messageKeyDisplacement() throws -> ClosedRange<Int64>? {
        // One read, stopping one past the most: more than that and dates are compared alone.
        // CROSS JOIN: the exceptions first (few), each message by its key, where the planner
        // would otherwise walk every message and look each up in the list.
        let pairs = try db.map("""
            SELECT e.message_id, m.internal_date FROM message_key_exceptions AS e CROSS JOIN messages AS m ON m.id = e.message_id
             LIMIT ?
            """, Self.messageKeyExceptionsRead + 1) { (key: $0.int64(0), date: $0.int64(1)) }
        if pairs.count > Self.messageKeyExceptionsRead { return nil }
        var lowest: Int64 = 0
        var highest: Int64 = 999
        for pair in pairs {
            let (displacement, overflow) = pair.key.subtractingReportingOverflow(SearchCompiler.key(milliseconds: pair.date))
            guard !overflow, displacement.magnitude <= SearchCompiler.keyDisplacementLimit.magnitude else { return nil }
            lowest = min(lowest, displacement)
            highest = max(highest, displacement)
        }
        return lowest...highest
    }

    /// At most this many exceptions are read per search (a few milliseconds' work at most).
    static let messageKeyExceptionsRead = 4_096

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
        var messages: [MessageSummary] = []
        try forEachMessage(matching: query, options: options, limit: limit, before: before) { messages.append($0) }
        return messages
    }

    /// `searchMessages`, each message handed to `body` as the search finds it: one
    /// statement reads every column and the effective labels, so the first result is out
    /// before the last is found and memory does not grow with the number of results.
    ///
    /// With `listing`, only what a list line shows is read: `to` is nil and `snippet`
    /// empty, the two longest texts a text line never prints.
    public func forEachMessage(
        matching query: Query, options: SearchOptions, limit: Int, before: Reference? = nil, listing: Bool = false,
        _ body: (MessageSummary) throws -> Void
    ) throws {
        try db.read {
            var compiled = try compileSearch(query, options: options)
            var skipUntil: String?
            if let before {
                guard case .message(let id) = before, let key = try db.scalarInt(
                    "SELECT id FROM messages WHERE gmail_id = ? AND (?2 IS NULL OR account_id = ?2)", id, options.accountID)
                else { throw StoreError.invalidArgument("--before: \(before): not a message in the store") }
                switch options.sort {
                case .newest: compiled.require("\(compiled.keyColumn) < ?", .integer(key))
                case .oldest: compiled.require("\(compiled.keyColumn) > ?", .integer(key))
                case .relevance: skipUntil = id
                }
            }
            let selection = limit == .max ? compiled.everyMatchFromAndWhere : compiled.fromAndWhere
            let statement = try db.cached("""
                SELECT \(Self.messageSummaryColumns(labels: compiled.labelSource, listing: listing)) \(selection)
                 ORDER BY \(compiled.orderBy)
                """)
            try statement.bind(compiled.arguments)
            defer { statement.reset() }
            var found = 0
            while found < limit, try statement.step() {
                let row = statement.currentRow
                if let wanted = skipUntil {
                    if row.string(1) == wanted { skipUntil = nil }
                    continue
                }
                try body(messageSummary(from: row))
                found += 1
            }
        }
    }

    /// The distinct threads of the matching messages, in the order of each thread's
    /// best-placed match, at most `limit`, after the thread `after` of a previous page.
    public func searchThreads(_ query: Query, options: SearchOptions, limit: Int, after: Reference? = nil) throws -> [ThreadSummary] {
        var threads: [ThreadSummary] = []
        try forEachThread(matching: query, options: options, limit: limit, after: after) { threads.append($0) }
        return threads
    }

    /// `searchThreads`, each thread handed to `body` as soon as its first match is found.
    ///
    /// Newest first, a thread is placed by its newest matching message, so a page after a
    /// thread seeks to that message's key and reads on from there, however deep the page;
    /// a thread met there that also matches above that key was on an earlier page and is
    /// left out. Oldest first (a thread placed by its oldest match) and by relevance, the
    /// results before the thread are walked.
    public func forEachThread(
        matching query: Query, options: SearchOptions, limit: Int, after: Reference? = nil,
        _ body: (ThreadSummary) throws -> Void
    ) throws {
        try db.read {
            var compiled = try compileSearch(query, options: options)
            var skipUntil: String?
            var earlierPages: (key: Int64, thread: String, search: CompiledSearch)?
            if let after {
                guard case .thread(let id) = after else {
                    throw StoreError.invalidArgument("\(after): thread results page after a thread reference")
                }
                guard let (newest, accountID) = try db.cached("""
                    SELECT id, account_id FROM messages WHERE thread_id = ? AND (?2 IS NULL OR account_id = ?2)
                     ORDER BY id DESC LIMIT 1
                    """).first([id, options.accountID], { ($0.int64(0), $0.int64(1)) })
                else { throw StoreError.invalidArgument("--before: \(after): not a thread in the store") }
                if options.sort == .newest {
                    // Where the thread was placed: its newest matching message; one that no
                    // longer matches (archived since) keeps its place by its newest message.
                    let key = try newestMatch(in: ThreadKey(accountID: accountID, threadID: id), of: compiled) ?? newest
                    earlierPages = (key, id, compiled)
                    compiled.require("\(compiled.keyColumn) < ?", .integer(key))
                } else {
                    skipUntil = id
                }
            }
            let statement = try db.cached("SELECT m.account_id, m.thread_id \(compiled.fromAndWhere) ORDER BY \(compiled.orderBy)")
            try statement.bind(compiled.arguments)
            defer { statement.reset() }
            var seen = Set<ThreadKey>()
            var found = 0
            while found < limit, try statement.step() {
                let row = statement.currentRow
                let key = ThreadKey(accountID: row.int64(0), threadID: row.string(1))
                guard seen.insert(key).inserted else { continue }
                if let wanted = skipUntil {
                    if key.threadID == wanted { skipUntil = nil }
                    continue
                }
                if let (position, own, search) = earlierPages,
                   try key.threadID == own || newestMatch(in: key, of: search, above: position) != nil {
                    continue
                }
                if let thread = try threadSummary(threadID: key.threadID, accountID: key.accountID) {
                    try body(thread)
                    found += 1
                }
            }
        }
    }

    /// The key of the thread's newest message that matches `search` (and is newer than
    /// `above`): where the thread is placed in the results, or, with `above`, whether it
    /// was placed on a page before that key. The thread's few messages are read by the
    /// thread index and each is tested by its key, so no result list is walked.
    private func newestMatch(in thread: ThreadKey, of search: CompiledSearch, above: Int64? = nil) throws -> Int64? {
        var one = search
        one.require("\(one.keyColumn) = ?", .null)
        let test = try db.cached("SELECT 1 \(one.fromAndWhere) LIMIT 1")
        let messages = try db.cached("""
            SELECT id FROM messages WHERE thread_id = ? AND account_id = ? AND id > ? ORDER BY id DESC
            """).map([thread.threadID, thread.accountID, above ?? Int64.min]) { $0.int64(0) }
        for message in messages where try test.first(search.arguments + [SQLiteValue.integer(message)], { _ in true }) == true {
            return message
        }
        return nil
    }

    /// How many messages, or distinct threads, match.
    public func countSearch(_ query: Query, options: SearchOptions, threads: Bool) throws -> Int {
        try db.read {
            let compiled = try compileSearch(query, options: options)
            return Int(try db.prepare(Self.countSQL(compiled, threads: threads)).first(compiled.arguments) { $0.int64(0) } ?? 0)
        }
    }

    /// `EXPLAIN QUERY PLAN` of the count, one line per step, for `--explain --count`.
    public func countPlan(_ query: Query, options: SearchOptions, threads: Bool) throws -> [String] {
        try db.read {
            let compiled = try compileSearch(query, options: options)
            return try db.prepare("EXPLAIN QUERY PLAN " + Self.countSQL(compiled, threads: threads))
                .map(compiled.arguments) { $0.string(3) }
        }
    }

    /// The statement counting a search's matching messages, or their distinct threads.
    ///
    /// Threads: when the driving table alone selects the matches (`countFromAndWhere`),
    /// their keys are listed from it and each key's thread is read from the narrow index
    /// of migration 032, never from the wide message row; otherwise spam and trash are
    /// left out as one list (`everyMatchFromAndWhere`). Either way the work follows the
    /// number of matches, not the size of the mailbox (issue 43 §1).
    static func countSQL(_ compiled: CompiledSearch, threads: Bool) -> String {
        if !threads {
            return "SELECT count(*) \(compiled.countFromAndWhere ?? compiled.fromAndWhere)"
        }
        if let matches = compiled.countFromAndWhere, compiled.keyColumn != "m.id" {
            return """
                SELECT count(*) FROM (SELECT DISTINCT account_id, thread_id
                  FROM messages INDEXED BY messages_thread_by_key
                 WHERE id IN (SELECT \(compiled.keyColumn) \(matches)))
                """
        }
        return "SELECT count(*) FROM (SELECT DISTINCT m.account_id, m.thread_id \(compiled.everyMatchFromAndWhere))"
    }

    /// The columns `messageSummary(from:)` reads, from `messages AS m`: the effective
    /// labels come as one space-separated list. Read from `message_labels` (nothing
    /// queued), no change can be held, and the queue is not asked.
    static func messageSummaryColumns(labels source: String = EffectiveLabels.view, listing: Bool = false) -> String {
        """
        m.id, m.gmail_id, m.account_id, m.thread_id, m.internal_date, m.subject, m.sender,
        \(listing ? "NULL, ''" : "m.to_header, m.snippet"),
        m.size_estimate, m.has_attachment, m.body_state,
        \(EffectiveLabels.list(messageColumn: "m.id", separator: "' '", source: source)),
        m.attachment_known,
        \(source == EffectiveLabels.view
            ? HeldChanges.isHeld(messageColumn: "m.id")
            : "0")
        """
    }

    func messageSummary(from row: Row) -> MessageSummary {
        let labels = sortedLabelList(row.optionalString(12) ?? "")
        let sender = row.optionalString(6)
        return MessageSummary(
            accountID: row.int64(2), messageID: row.string(1), threadID: row.string(3), internalDate: row.int64(4),
            subject: row.optionalString(5), sender: sender, senderName: displaySenderCached(sender),
            to: row.optionalString(7), snippet: row.string(8), sizeEstimate: row.int64(9), hasAttachment: row.bool(10),
            hydrated: row.int(11) == 1, labels: labels, attachmentKnown: row.bool(13), held: row.bool(14))
    }

    /// A space-separated label list, split and sorted, once per distinct list.
    func sortedLabelList(_ text: String) -> [String] {
        labelLists.value(for: text) { Self.splitOnByte(text, UInt8(ascii: " ")).sorted() }
    }

    func messageSummary(key: Int64) throws -> MessageSummary? {
        try db.first("SELECT \(Self.messageSummaryColumns()) FROM messages AS m WHERE m.id = ?", key) { messageSummary(from: $0) }
    }
}

extension Store {
    /// How many messages (of one account, or all) have no stored body: a word of their
    /// body is found only when it is in their subject, addresses or Gmail's snippet, which
    /// the index holds until the body arrives (migration 013). Counted on the index of
    /// messages waiting for a body.
    public func messagesWithoutBody(accountID: Int64?) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM messages INDEXED BY messages_needing_body
             WHERE body_state = 0 AND (?1 IS NULL OR account_id = ?1)
            """, accountID) ?? 0)
    }
}
