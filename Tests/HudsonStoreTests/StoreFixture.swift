// A temporary store with one account, a controllable clock, snapshot builders, and
// checks that recompute the derived tables from scratch (in SQL written independently
// of the store's Swift) and compare.
import Foundation
import HudsonStore
import HudsonTestSupport
import SQLite
import Synchronization
import Testing

final class TestClock: Sendable {
    private let milliseconds: Mutex<Int64>

    init(_ start: Int64 = 1_767_225_600_000) { milliseconds = Mutex(start) }  // 2026-01-01

    var now: Int64 { milliseconds.withLock { $0 } }

    func advance(by delta: Int64) { milliseconds.withLock { $0 += delta } }

    var closure: Store.Clock { { [self] in self.now } }
}

/// `label_counts` as `hd-labels` reads it, and the same counted again from scratch from
/// the messages' effective labels and `thread_labels`: one "account label messages threads
/// unread" line per label, rows at zero left out (the store may keep them).
enum LabelCountsCheck {
    static func stored(_ db: Connection) throws -> [String] {
        try db.map("""
            SELECT account_id, label, messages, threads, unread_threads FROM label_counts
             WHERE messages <> 0 OR threads <> 0 OR unread_threads <> 0 ORDER BY 1, 2
            """, transform: line)
    }

    static func countedAgain(_ db: Connection) throws -> [String] {
        try db.map("""
            WITH m AS (SELECT m.account_id, e.label, count(*) AS n
                         FROM messages AS m JOIN effective_labels AS e ON e.message_id = m.id GROUP BY 1, 2),
                 t AS (SELECT tl.account_id, tl.label, count(*) AS n, sum(r.unread) AS u
                         FROM thread_labels AS tl JOIN thread_rollup AS r
                           ON r.account_id = tl.account_id AND r.thread_id = tl.thread_id GROUP BY 1, 2),
                 k AS (SELECT account_id, label FROM m UNION SELECT account_id, label FROM t)
            SELECT k.account_id, k.label, coalesce(m.n, 0), coalesce(t.n, 0), coalesce(t.u, 0)
              FROM k LEFT JOIN m USING (account_id, label) LEFT JOIN t USING (account_id, label) ORDER BY 1, 2
            """, transform: line)
    }

    private static func line(_ row: Row) -> String {
        "\(row.int64(0)) \(row.string(1)) \(row.int(2)) \(row.int(3)) \(row.int(4))"
    }
}

final class StoreFixture {
    let dir = TemporaryDirectory()
    let clock = TestClock()
    let store: Store
    let account: Account
    var path: String { dir.path("hudson.sqlite3") }

    init(email: String = "ann@example.com") throws {
        store = try Store.open(path: dir.path("hudson.sqlite3"), access: .create, clock: clock.closure)
        account = try store.addAccount(email: email, consentedAt: 1_767_225_600, lookbackDays: 90)
    }

    var db: Connection { store.db }

    /// A snapshot with sensible defaults; `date` is in minutes after 2026-01-01 so
    /// ordering in tests reads naturally.
    func snapshot(
        _ id: String, thread: String? = nil, history: Int64 = 100, minute: Int64 = 0,
        labels: [String] = ["INBOX", "UNREAD"], subject: String = "Subject", from: String = "Bob <bob@example.org>",
        to: String = "Ann <ann@example.com>", snippet: String = "snippet"
    ) -> MessageSnapshot {
        MessageSnapshot(
            id: id, threadID: thread ?? id, historyID: history, internalDate: 1_767_225_600_000 + minute * 60_000,
            labelIDs: labels, snippet: snippet, sizeEstimate: 1234,
            headers: MessageHeaders(subject: subject, from: from, to: to, messageID: "<\(id)@example.org>"))
    }

    @discardableResult
    func apply(_ snapshots: MessageSnapshot...) throws -> SnapshotApplyReport {
        try store.applySnapshots(snapshots, accountID: account.id)
    }

    func inbox() throws -> [String] {
        try store.inboxThreads(accountID: account.id, limit: 100).map(\.threadID)
    }

    func effective(_ id: String) throws -> [String] {
        try #require(try store.effectiveLabels(gmailID: id, accountID: account.id))
    }

    func canonical(_ id: String) throws -> [String] {
        try #require(try store.canonicalLabels(gmailID: id, accountID: account.id))
    }

    func rollup(_ thread: String) throws -> ThreadSummary? {
        try store.threadSummary(threadID: thread, accountID: account.id)
    }

    func queue() throws -> [QueuedMutation] { try store.queuedMutations(accountID: account.id) }

    func ftsHits(_ match: String) throws -> [String] {
        try db.map("""
            SELECT m.gmail_id FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid
             WHERE fts_messages MATCH ? ORDER BY fts_messages.rowid DESC
            """, match) { $0.string(0) }
    }

    /// Recomputes every derived table from scratch and compares it with what the write
    /// paths maintained. Call after any write.
    func checkDerivedTables(sourceLocation: SourceLocation = #_sourceLocation) throws {
        // A thread lists a member in trash only under TRASH, one in spam (and not in
        // trash) only under SPAM, any other under every effective label it carries.
        let listed = """
            WITH listed (message_id, label) AS (
                SELECT e.message_id, e.label FROM messages AS lm JOIN effective_labels AS e ON e.message_id = lm.id
                 WHERE CASE
                       WHEN EXISTS (SELECT 1 FROM effective_labels AS x WHERE x.message_id = lm.id AND x.label = 'TRASH')
                           THEN e.label = 'TRASH'
                       WHEN EXISTS (SELECT 1 FROM effective_labels AS x WHERE x.message_id = lm.id AND x.label = 'SPAM')
                           THEN e.label = 'SPAM'
                       ELSE 1 END)
            """
        let elsewhere = "EXISTS (SELECT 1 FROM effective_labels AS x WHERE x.message_id = m.id AND x.label IN ('TRASH', 'SPAM'))"
        // thread_rollup: one row per thread with the right counts and overlay-aware flags;
        // unread and starred from the listed labels, or, when every member is in trash or
        // spam, from every member's.
        let expected = try db.map("""
            \(listed)
            SELECT m.account_id, m.thread_id, count(*), max(m.internal_date),
                   CASE WHEN min(\(elsewhere)) = 1
                        THEN sum(EXISTS (SELECT 1 FROM effective_labels AS e WHERE e.message_id = m.id AND e.label = 'UNREAD'))
                        ELSE sum(EXISTS (SELECT 1 FROM listed AS e WHERE e.message_id = m.id AND e.label = 'UNREAD')) END,
                   max(EXISTS (SELECT 1 FROM listed AS e WHERE e.message_id = m.id AND e.label = 'INBOX')),
                   CASE WHEN min(\(elsewhere)) = 1
                        THEN max(EXISTS (SELECT 1 FROM effective_labels AS e WHERE e.message_id = m.id AND e.label = 'STARRED'))
                        ELSE max(EXISTS (SELECT 1 FROM listed AS e WHERE e.message_id = m.id AND e.label = 'STARRED')) END,
                   max(m.has_attachment)
              FROM messages AS m GROUP BY m.account_id, m.thread_id ORDER BY 1, 2
            """) { row in (0..<8).map { row.value($0) } }
        let actual = try db.map("""
            SELECT account_id, thread_id, message_count, last_message_at, unread_count, in_inbox, starred, has_attachment
              FROM thread_rollup ORDER BY 1, 2
            """) { row in (0..<8).map { row.value($0) } }
        #expect(actual == expected, "thread_rollup out of step", sourceLocation: sourceLocation)
        // Its newest message, whose subject and snippet a list shows (migration 024).
        #expect(try db.scalarInt("""
            SELECT count(*) FROM thread_rollup AS r
             WHERE r.newest_message_id IS NOT (SELECT m.id FROM messages AS m
                                                WHERE m.account_id = r.account_id AND m.thread_id = r.thread_id
                                                ORDER BY m.internal_date DESC, m.id DESC LIMIT 1)
            """) == 0, "rollup rows naming another message as the newest", sourceLocation: sourceLocation)
        // thread_labels: the union of the thread's listed labels.
        let expectedLabels = try db.map("""
            \(listed)
            SELECT DISTINCT m.account_id, m.thread_id, e.label
              FROM messages AS m, listed AS e WHERE e.message_id = m.id ORDER BY 1, 2, 3
            """) { "\($0.int64(0)) \($0.string(1)) \($0.string(2))" }
        let actualLabels = try db.map("SELECT account_id, thread_id, label FROM thread_labels ORDER BY 1, 2, 3") {
            "\($0.int64(0)) \($0.string(1)) \($0.string(2))"
        }
        #expect(actualLabels == expectedLabels, "thread_labels out of step", sourceLocation: sourceLocation)
        // ... each row at its thread's newest date, and mirrored by the rollup's label list,
        // which is how the write paths find a thread's rows (ThreadRollup.swift).
        let misplaced = try db.scalarInt("""
            SELECT count(*) FROM thread_labels AS tl WHERE NOT EXISTS (
                SELECT 1 FROM thread_rollup AS r
                 WHERE r.account_id = tl.account_id AND r.thread_id = tl.thread_id
                   AND r.last_message_at = tl.last_message_at AND instr(' ' || r.labels || ' ', ' ' || tl.label || ' ') > 0)
            """)
        #expect(misplaced == 0, "thread_labels rows the rollup does not name", sourceLocation: sourceLocation)
        let rollupLabels = try db.map("SELECT account_id, thread_id, labels FROM thread_rollup ORDER BY 1, 2") { row in
            row.string(2).split(separator: " ").map { "\(row.int64(0)) \(row.string(1)) \($0)" }
        }.flatMap { $0 }.sorted()
        #expect(rollupLabels == expectedLabels.sorted(), "thread_rollup.labels out of step", sourceLocation: sourceLocation)
        // label_counts: what hd-labels shows, counted again from scratch (rows at zero may stay).
        let expectedCounts = try LabelCountsCheck.countedAgain(db)
        let actualCounts = try LabelCountsCheck.stored(db)
        #expect(actualCounts == expectedCounts, "label_counts out of step", sourceLocation: sourceLocation)
        // fts_messages: the index agrees with its content ('integrity-check' with rank 1
        // compares against the external content).
        try db.execute("INSERT INTO fts_messages (fts_messages, rank) VALUES ('integrity-check', 1)")
        // message_seq: every stored message has one live row, found by its key; and a
        // deleted row is all that is left of a message the store no longer has.
        let missing = try db.scalarInt("""
            SELECT count(*) FROM messages AS m WHERE NOT EXISTS
              (SELECT 1 FROM message_seq AS s WHERE s.message_id = m.id AND s.account_id = m.account_id
                  AND s.gmail_id = m.gmail_id AND s.thread_id = m.thread_id AND s.deleted = 0)
            """)
        #expect(missing == 0, "messages without a change-sequence row", sourceLocation: sourceLocation)
        let strays = try db.scalarInt("""
            SELECT count(*) FROM message_seq AS s
             WHERE (s.deleted = 0) <> EXISTS (SELECT 1 FROM messages AS m WHERE m.id = s.message_id)
                OR (SELECT count(*) FROM message_seq AS o WHERE o.account_id = s.account_id AND o.gmail_id = s.gmail_id) > 1
            """)
        #expect(strays == 0, "change-sequence rows for no message, or two for one", sourceLocation: sourceLocation)
        // The queue's rows go with their message (no foreign key since 006).
        #expect(try db.scalarInt("""
            SELECT count(*) FROM mutation_queue AS q
             WHERE NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.id = q.message_id AND m.account_id = q.account_id)
            """) == 0, "queue rows for no message", sourceLocation: sourceLocation)
        #expect(try db.scalarString("PRAGMA integrity_check") == "ok", sourceLocation: sourceLocation)
        #expect(try db.first("PRAGMA foreign_key_check") { $0.string(0) } == nil, sourceLocation: sourceLocation)
        #expect(try db.scalarInt(ParentlessRows.countSQL) == 0, "rows whose account or action is gone", sourceLocation: sourceLocation)
    }

    /// The sequence number of one message's latest change.
    func seq(_ id: String) throws -> Int64? {
        try db.scalarInt("SELECT seq FROM message_seq WHERE gmail_id = ?", id)
    }
}
