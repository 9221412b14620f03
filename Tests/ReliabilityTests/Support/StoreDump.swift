// What "the final store equals an uninterrupted run's" means, written down: a text
// dump of everything a reader can see — accounts' sync state, labels, messages and
// their canonical labels, addresses, bodies, attachments, the thread rollup and its
// labels, the change sequence's deletions and the queue — without the values that
// legitimately differ between two correct runs (row keys, sequence numbers,
// timestamps, attempt counters). Plus the checks every crash test ends with: SQLite's
// integrity check, foreign keys, the full-text index against its content, and no
// duplicate message.
import Foundation
import HudsonStore
import HudsonTestSupport
import SQLite
import Testing

enum StoreDump {
    static let sections: [(String, String)] = [
        ("accounts", """
            SELECT email, history_id, backfill_state, backfill_page_token, backfill_after, backfill_before, lookback_days
              FROM accounts ORDER BY email
            """),
        ("labels", "SELECT account_id, id, name, type FROM labels ORDER BY account_id, id"),
        ("messages", """
            SELECT gmail_id, thread_id, history_id, internal_date, size_estimate, snippet, subject, sender, to_header,
                   cc_header, date_header, message_id_header, in_reply_to, references_header, list_id, content_type,
                   has_attachment, body_state
              FROM messages ORDER BY gmail_id
            """),
        ("message_labels", """
            SELECT m.gmail_id, group_concat(l.label, ' ') FROM messages AS m
              JOIN (SELECT message_id, label FROM message_labels ORDER BY message_id, label) AS l ON l.message_id = m.id
             GROUP BY m.id ORDER BY m.gmail_id
            """),
        ("message_addresses", """
            SELECT m.gmail_id, a.role, a.address, a.name FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id
             ORDER BY m.gmail_id, a.role, a.address
            """),
        ("message_bodies", """
            SELECT m.gmail_id, length(b.text), hex(substr(b.text, 1, 24)), length(b.html) FROM message_bodies AS b
              JOIN messages AS m ON m.id = b.message_id ORDER BY m.gmail_id
            """),
        ("attachments", """
            SELECT m.gmail_id, a.part_id, a.filename, a.mime_type, a.size, a.is_inline FROM attachments AS a
              JOIN messages AS m ON m.id = a.message_id ORDER BY m.gmail_id, a.part_id
            """),
        ("thread_rollup", """
            SELECT r.thread_id, r.last_message_at, m.gmail_id, m.subject, m.snippet, r.sender, r.participants,
                   r.message_count, r.unread_count, r.in_inbox, r.unread, r.starred, r.has_attachment, r.labels
              FROM thread_rollup AS r LEFT JOIN messages AS m ON m.id = r.newest_message_id
             ORDER BY r.account_id, r.thread_id
            """),
        ("thread_labels", "SELECT thread_id, label, last_message_at FROM thread_labels ORDER BY account_id, thread_id, label"),
        ("deleted", "SELECT gmail_id, thread_id, deleted_history_id FROM message_seq WHERE deleted = 1 ORDER BY gmail_id"),
        ("queue", """
            SELECT m.gmail_id, q.label, q.op, q.state FROM mutation_queue AS q JOIN messages AS m ON m.id = q.message_id
             ORDER BY m.gmail_id, q.label
            """),
    ]

    /// The dump of the store at `path`, opened read-only.
    static func dump(_ path: String) throws -> String {
        let db = try Connection(path: path, options: ConnectionOptions(access: .readOnly))
        return try db.read {
            var text = ""
            for (name, sql) in sections {
                text += "## \(name)\n"
                try db.prepare(sql).forEach { row in
                    text += (0..<row.columnCount).map { describe(row.value($0)) }.joined(separator: "\t") + "\n"
                }
            }
            return text
        }
    }

    static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "∅"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .text(let text): return text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t")
        case .blob(let bytes): return "blob(\(bytes.count))"
        }
    }

    /// SQLite's integrity and foreign-key checks, the full-text index against its
    /// content (FTS5 'integrity-check', run on a copy), and no message stored twice.
    static func expectSound(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        // The copy goes to the temporary directory: the store's own may be full or read-only.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-check-\(UUID().uuidString).sqlite3").path
        defer { for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) } }
        do {
            let db = try Connection(path: path, options: ConnectionOptions(access: .readOnly))
            let integrity = try db.map("PRAGMA integrity_check") { $0.string(0) }
            #expect(integrity == ["ok"], "integrity_check: \(integrity)", sourceLocation: sourceLocation)
            let foreign = try db.map("PRAGMA foreign_key_check") { $0.string(0) }
            #expect(foreign.isEmpty, "foreign_key_check: \(foreign)", sourceLocation: sourceLocation)
            let parentless = try db.scalarInt(ParentlessRows.countSQL)
            #expect(parentless == 0, "rows whose account or action is gone", sourceLocation: sourceLocation)
            let duplicates = try db.scalarInt("SELECT count(*) - count(DISTINCT account_id || ' ' || gmail_id) FROM messages")
            #expect(duplicates == 0, "messages stored twice", sourceLocation: sourceLocation)
            let orphans = try db.scalarInt("""
                SELECT count(*) FROM thread_rollup AS r
                 WHERE r.message_count <> (SELECT count(*) FROM messages AS m WHERE m.account_id = r.account_id AND m.thread_id = r.thread_id)
                """)
            #expect(orphans == 0, "rollup rows that do not count their thread", sourceLocation: sourceLocation)
            let missing = try db.scalarInt("""
                SELECT count(*) FROM (SELECT DISTINCT account_id, thread_id FROM messages) AS t
                 WHERE NOT EXISTS (SELECT 1 FROM thread_rollup AS r WHERE r.account_id = t.account_id AND r.thread_id = t.thread_id)
                """)
            #expect(missing == 0, "threads without a rollup row", sourceLocation: sourceLocation)
            try db.execute("VACUUM INTO '\(copy)'")
        }
        // Opened as a store: the index's content view calls hudson_shown_v1, which Store.open defines.
        let writable = try Store.open(path: copy, access: .readWrite).db
        do {
            try writable.execute("INSERT INTO fts_messages (fts_messages) VALUES ('integrity-check')")
        } catch {
            Issue.record("the full-text index does not match its content: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Compares two dumps and reports the first lines that differ.
    static func expectEqual(_ actual: String, _ expected: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard actual != expected else { return }
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        var differences: [String] = []
        for index in 0..<max(a.count, e.count) where differences.count < 12 {
            let left = index < a.count ? String(a[index]) : "(none)"
            let right = index < e.count ? String(e[index]) : "(none)"
            if left != right { differences.append("line \(index + 1):\n  got      \(left.prefix(200))\n  expected \(right.prefix(200))") }
        }
        let summary = "\(what): the store differs from the uninterrupted run's (\(a.count) vs \(e.count) lines)\n"
        Issue.record(Comment(rawValue: summary + differences.joined(separator: "\n")), sourceLocation: sourceLocation)
    }
}

extension Rig {
    /// The store agrees with the fake's mailbox: every message Gmail lists (not in spam
    /// or trash) is stored with exactly Gmail's labels, and nothing else is stored.
    func expectMatchesServer(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fake = try #require(fake)
        let server = try fake.messages()
        let db = try Connection(path: storePath, options: ConnectionOptions(access: .readOnly))
        var stored: [String: Set<String>] = [:]
        try db.read {
            try db.prepare("SELECT m.gmail_id, l.label FROM messages AS m LEFT JOIN message_labels AS l ON l.message_id = m.id")
                .forEach { row in
                    stored[row.string(0), default: []].formUnion(row.isNull(1) ? [] : [row.string(1)])
                }
        }
        let listed = server.filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }
        let absent = Set(listed.keys).subtracting(stored.keys)
        #expect(absent.isEmpty, "\(absent.count) messages on the server are not in the store: \(absent.sorted().prefix(5))",
                sourceLocation: sourceLocation)
        let unknown = Set(stored.keys).subtracting(server.keys)
        #expect(unknown.isEmpty, "\(unknown.count) stored messages are not on the server: \(unknown.sorted().prefix(5))",
                sourceLocation: sourceLocation)
        var wrong: [String] = []
        for (id, labels) in stored {
            if let truth = server[id], truth.labels != labels { wrong.append("\(id): \(labels.sorted()) vs \(truth.labels.sorted())") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) messages with labels other than Gmail's: \(wrong.sorted().prefix(5))",
                sourceLocation: sourceLocation)
    }

    /// The queue's rows, as (gmail id, label, op, state).
    func queue() throws -> [(message: String, label: String, op: String, state: String)] {
        let db = try Connection(path: storePath, options: ConnectionOptions(access: .readOnly))
        return try db.prepare("""
            SELECT m.gmail_id, q.label, q.op, q.state FROM mutation_queue AS q JOIN messages AS m ON m.id = q.message_id ORDER BY q.id
            """).map { ($0.string(0), $0.string(1), $0.string(2), $0.string(3)) }
    }

    /// One integer from the store, read-only.
    func scalar(_ sql: String) throws -> Int64? {
        let db = try Connection(path: storePath, options: ConnectionOptions(access: .readOnly))
        return try db.scalarInt(sql)
    }
}
