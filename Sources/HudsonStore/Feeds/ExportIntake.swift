/*!
 The read-backs of two-way exports (issue 39): what `hd-export --two-way` read back from a
 Maildir or notmuch is queued as ONE triage action (Triage's `perform(groups:)`, the path
 `hd-mark` takes: undoable with `hd-undo`), and the read-back's number is recorded in the
 same transaction. The export saves its new baseline only after that commit; a run killed
 between the two finds its number here and takes the baseline it had written ahead,
 instead of reading the same changes again and queueing them twice.
 */
import SQLite

extension Store {
    /// The number of the last read-back of this export the store committed, 0 for none.
    public func exportIntake(exportID: String) throws -> Int64 {
        try db.read { try db.scalarInt("SELECT intake FROM export_intakes WHERE export_id = ?", exportID) ?? 0 }
    }

    /// Queues read-back number `intake` of export `exportID` as one action (nil `result`
    /// when the store had already committed it: nothing is queued again), and records the
    /// number, in one write transaction.
    public func queueExportIntake(
        _ groups: [TriageGroup], description: String, accountID: Int64, exportID: String, intake: Int64
    ) throws -> TriageResult? {
        try db.write {
            if let done = try db.scalarInt("SELECT intake FROM export_intakes WHERE export_id = ?", exportID), done >= intake {
                return nil
            }
            let result = try perform(groups: groups, description: description, accountID: accountID)
            try db.execute("""
                INSERT INTO export_intakes (export_id, account_id, intake, action_id, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (export_id) DO UPDATE SET intake = excluded.intake, action_id = excluded.action_id,
                                                      updated_at = excluded.updated_at
                """, exportID, accountID, intake, result.actionID, now)
            return result
        }
    }
}

extension Store {
    /// The account's Gmail ids by Message-ID (given without angle brackets, as notmuch names
    /// messages): a message sent to oneself has two.
    public func exportGmailIDs(accountID: Int64, messageIDs: [String]) throws -> [String: [String]] {
        guard !messageIDs.isEmpty else { return [:] }
        let rows = SQLiteRows(columns: 1)
        for id in messageIDs { rows.append(.text("<" + id + ">")) }
        var result: [String: [String]] = [:]
        try db.read {
            for (header, gmailID) in try db.map("""
                SELECT message_id_header, gmail_id FROM messages
                 WHERE account_id = ? AND message_id_header IN (SELECT c0 FROM hudson_rows(?))
                """, accountID, rows, transform: { ($0.string(0), $0.string(1)) }) {
                result[String(header.dropFirst().dropLast()), default: []].append(gmailID)
            }
        }
        return result
    }

    /// The account's messages whose Message-ID header is not a plain `<id>` (text or a
    /// comment around it, a space, a parenthesis, nothing between the brackets, no
    /// brackets): the few whose notmuch id is not the header without its brackets, which
    /// the export reads as notmuch does and finds here. A full scan, made only when a
    /// lookup by `exportGmailIDs` missed.
    public func exportIrregularMessageIDHeaders(accountID: Int64) throws -> [(header: String, gmailID: String)] {
        try db.read {
            try db.map("""
                SELECT message_id_header, gmail_id FROM messages
                 WHERE account_id = ? AND message_id_header IS NOT NULL
                   AND (message_id_header NOT GLOB '<?*>' OR length(message_id_header) < 4
                        OR instr(message_id_header, ' ') > 0 OR instr(message_id_header, char(9)) > 0
                        OR instr(message_id_header, '(') > 0 OR instr(substr(message_id_header, 1, length(message_id_header) - 1), '>') > 0)
                """, accountID, transform: { (header: $0.string(0), gmailID: $0.string(1)) })
        }
    }
}
