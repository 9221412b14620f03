/*!
 Effective labels: what the user sees, canonical ∪ queued adds − queued removes,
 counting queue rows in every state (optimistic-mutations.md, "Reads compose the
 overlay"). The rule itself is the `effective_labels` view (migration 007, docs/schema.sql);
 this file holds its name and the only Swift that queries it, so there is one rule, not four.
 */
import SQLite

enum EffectiveLabels {
    /// The view that composes the overlay. Always constrain it by `message_id`.
    static let view = "effective_labels"

    /// The SQL condition "message `messageColumn` effectively carries label `label`" (a
    /// parameter unless given), for query builders: a correlated seek into both arms of
    /// the view, never a scan.
    static func carries(messageColumn: String, label: String = "?", source: String = view) -> String {
        "EXISTS (SELECT 1 FROM \(source) AS el WHERE el.message_id = \(messageColumn) AND el.label = \(label))"
    }

    /// `carries` for a label few messages carry (spam and trash, which Gmail empties after
    /// 30 days), tested on many: read from `message_labels`, the seek goes through the
    /// label's index (label, message), whose few pages serve every message tested, where the
    /// primary key (message, label) reads each message's own page of labels (a page of 50
    /// threads of `label:Work` at 2,000,000 messages read 81 more pages that way, of 275).
    /// Through the view, as `carries`.
    static func carriesFew(messageColumn: String, label: String = "?", source: String = view) -> String {
        guard let table = labelIndexTable(source: source) else {
            return carries(messageColumn: messageColumn, label: label, source: source)
        }
        return "EXISTS (SELECT 1 FROM \(table) AS el INDEXED BY message_labels_by_label WHERE el.label = \(label) AND el.message_id = \(messageColumn))"
    }

    /// The same rule for one (message, label) whose `message_labels` row and live queue row
    /// are already joined, each NULL when absent (`canonicalPresent` an expression true when
    /// the first exists, `queuedOp` the second's op): a queued op decides, else canonical.
    /// It is the view row for row, because the queue holds at most one row per (message,
    /// label) (UNIQUE); the view's two arms would seek both tables again (issue 19).
    static func carries(canonicalPresent: String, queuedOp: String) -> String {
        "(CASE WHEN \(queuedOp) IS NULL THEN \(canonicalPresent) ELSE \(queuedOp) = 'add' END)"
    }

    /// The SQL condition "message `messageColumn` effectively carries one of `labels`
    /// labels" (each a parameter) as a list read once per statement: for a condition
    /// tested on many messages against few listed ones (spam and trash, which Gmail
    /// empties after 30 days), where `carries` seeks twice per message.
    static func carriesAny(messageColumn: String, labels: Int, source: String = view) -> String {
        let parameters = Array(repeating: "?", count: labels).joined(separator: ", ")
        return "\(messageColumn) IN (SELECT el.message_id FROM \(source) AS el WHERE el.label IN (\(parameters)))"
    }

    /// What a read may take the effective labels from: the view, or, when nothing is queued
    /// (`queueIsEmpty`, read in the same transaction), `message_labels` itself, which the
    /// view then equals row for row (it adds queued adds and takes away queued removes, and
    /// there are none). Streaming a search through the view's two arms cost three times
    /// what reading the labels did (issue 19).
    static func source(queueIsEmpty: Bool) -> String {
        queueIsEmpty ? "message_labels" : view
    }

    /// The table whose index of one label's members (`message_labels_by_label`: label,
    /// message) a search may walk as the effective members of that label, when it reads
    /// labels from `source`: `message_labels` itself, which then is the effective labels
    /// row for row (nothing queued); through the view, nil (its queued adds are in no index).
    static func labelIndexTable(source: String) -> String? {
        source == "message_labels" ? source : nil
    }

    /// The SQL answering whether the queue is empty, for `source(queueIsEmpty:)`.
    static let queueIsEmptySQL = "SELECT NOT EXISTS (SELECT 1 FROM mutation_queue)"

    /// The same condition as a list of the label's messages (`?` the label, then the key
    /// bounds when `bounded`): the query can start from the label's index instead of
    /// testing every message, which is what a small label or a date range wants.
    /// The labels under which a thread lists a member whose effective labels are
    /// `labels`: a message in trash only under TRASH, one in spam only under SPAM, any
    /// other under all of them. Gmail leaves trash and spam out of every view but their
    /// own (gmail-api.md §2.2 `includeSpamTrash`, §6 `in:anywhere`), and a message is in
    /// at most one of them; a message carrying both is in trash. So the inbox, a label's
    /// thread list and the thread's flags count only the members outside trash and spam.
    static func listed(_ labels: Set<String>) -> Set<String> {
        if labels.contains("TRASH") { return ["TRASH"] }
        if labels.contains("SPAM") { return ["SPAM"] }
        return labels
    }

    /// The labels whose change on one member can change what its thread lists under
    /// every other label (`listed`).
    static let locations: Set<String> = ["TRASH", "SPAM"]

    /// The SQL condition "message `messageColumn` is in trash or spam" (`locations`).
    static func inTrashOrSpam(messageColumn: String) -> String {
        let labels = locations.sorted().map { "'\($0)'" }.joined(separator: ", ")
        return "EXISTS (SELECT 1 FROM \(view) AS el WHERE el.message_id = \(messageColumn) AND el.label IN (\(labels)))"
    }

    /// The SQL expression listing the effective labels of message `messageColumn`, joined
    /// by `separator` (an SQL string literal), from `source` (`source(queueIsEmpty:)`).
    ///
    /// From the view it is the view's two arms, each constrained to the message: an
    /// aggregate over a UNION ALL view is not flattened, and SQLite (3.40) does not push a
    /// correlated `el.message_id = m.id` into it, so `group_concat` over the view read
    /// every row of `message_labels` for each message listed (0.46 ms a row at 100,000
    /// messages, 60 times this form) whenever anything was queued. The arms must stay the
    /// view's (`effective_labels`, last defined by migration 007); a test compares the
    /// two row for row.
    static func list(messageColumn: String, separator: String = "char(31)", source: String = view) -> String {
        guard source == view else {
            return "(SELECT group_concat(el.label, \(separator)) FROM \(source) AS el WHERE el.message_id = \(messageColumn))"
        }
        return """
            (SELECT group_concat(el.label, \(separator)) FROM (
                SELECT ml.label FROM message_labels AS ml
                 WHERE ml.message_id = \(messageColumn)
                   AND NOT EXISTS (SELECT 1 FROM mutation_queue AS q
                                    WHERE q.message_id = ml.message_id AND q.label = ml.label AND q.op = 'remove')
                UNION ALL
                SELECT q.label FROM mutation_queue AS q
                 WHERE q.message_id = \(messageColumn) AND q.op = 'add'
                   AND NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                    WHERE ml.message_id = q.message_id AND ml.label = q.label)) AS el)
            """
    }

    static func carriesList(messageColumn: String, bounded: (lower: Bool, upper: Bool), source: String = view) -> String {
        var sql = "\(messageColumn) IN (SELECT el.message_id FROM \(source) AS el WHERE el.label = ?"
        if bounded.lower { sql += " AND el.message_id >= ?" }
        if bounded.upper { sql += " AND el.message_id < ?" }
        return sql + ")"
    }
}

extension Store {
    /// The effective labels of one message, sorted.
    func effectiveLabels(messageKey: Int64) throws -> [String] {
        try db.map(
            "SELECT label FROM \(EffectiveLabels.view) WHERE message_id = ? ORDER BY label", messageKey
        ) { $0.string(0) }
    }

    /// Calls `body` with (thread, message key, label) for every effective label of every
    /// member of each thread of `threads` (rows of account and thread id), in one
    /// statement: per thread, the view's two arms each seek `messages_by_thread`.
    func forEachEffectiveLabel(ofThreads threads: SQLiteRows, _ body: (ThreadKey, Int64, String) throws -> Void) throws {
        try db.forEach("""
            SELECT t.c0, t.c1, m.id, el.label
              FROM hudson_rows(?) AS t
              JOIN messages AS m ON m.thread_id = t.c1 AND m.account_id = t.c0
              JOIN \(EffectiveLabels.view) AS el ON el.message_id = m.id
            """, threads) { try body(ThreadKey(accountID: $0.int64(0), threadID: $0.string(1)), $0.int64(2), $0.string(3)) }
    }

    /// The effective labels of a message, by Gmail id.
    public func effectiveLabels(gmailID: String, accountID: Int64) throws -> [String]? {
        guard let key = try messageKey(gmailID: gmailID, accountID: accountID) else { return nil }
        return try effectiveLabels(messageKey: key)
    }


    /// The canonical labels of a message (server truth only), by Gmail id.
    public func canonicalLabels(gmailID: String, accountID: Int64) throws -> [String]? {
        guard let key = try messageKey(gmailID: gmailID, accountID: accountID) else { return nil }
        return try db.map("SELECT label FROM message_labels WHERE message_id = ? ORDER BY label", key) { $0.string(0) }
    }

    /// Whether nothing is queued (`EffectiveLabels.queueIsEmptySQL`): then the effective
    /// labels are `message_labels` and no change is held, so a read asks nothing more.
    func queueIsEmpty() throws -> Bool {
        try db.cached(EffectiveLabels.queueIsEmptySQL).first([]) { $0.int(0) == 1 } ?? true
    }

    func messageKey(gmailID: String, accountID: Int64) throws -> Int64? {
        try db.scalarInt("SELECT id FROM messages WHERE account_id = ? AND gmail_id = ?", accountID, gmailID)
    }
}
