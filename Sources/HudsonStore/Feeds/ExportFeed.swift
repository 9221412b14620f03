/*!
 What `hd-export` reads (issue 24 §2): the change sequence (`message_seq`) after a point,
 each change with what an export writes for it — the message's date, sender, Message-ID,
 effective labels (the one rule, EffectiveLabels), and whether its source is stored.
 */
import SQLite

public struct ExportItem: Equatable, Sendable {
    public var seq: Int64
    public var gmailID: String
    /// Gone from Gmail (the change sequence keeps a row marked deleted).
    public var deleted: Bool
    public var internalDate: Int64
    public var sender: String?
    public var messageIDHeader: String?
    /// Effective label ids, sorted.
    public var labels: [String]
    public var sourceStored: Bool
}

extension Store {
    /// The account's changes after `seq`, oldest first, at most `limit`.
    public func exportItems(accountID: Int64, since seq: Int64, limit: Int) throws -> [ExportItem] {
        try db.read {
            try db.map("\(Self.exportItemColumns) WHERE s.seq > ? AND s.account_id = ? ORDER BY s.seq LIMIT ?",
                       seq, accountID, limit, transform: Self.exportItem(from:))
        }
    }

    /// The current state of these messages (by Gmail id) in the change sequence; a
    /// message the sequence does not know is left out.
    public func exportItems(accountID: Int64, gmailIDs: [String]) throws -> [ExportItem] {
        let ids = SQLiteRows(columns: 1)
        for id in gmailIDs { ids.append(.text(id)) }
        return try db.read {
            try db.map("\(Self.exportItemColumns) WHERE s.account_id = ? AND s.gmail_id IN (SELECT c0 FROM hudson_rows(?)) ORDER BY s.seq",
                       accountID, ids, transform: Self.exportItem(from:))
        }
    }

    static let exportItemColumns = """
                SELECT s.seq, s.gmail_id, s.deleted OR m.id IS NULL, coalesce(m.internal_date, 0), m.sender, m.message_id_header,
                       \(EffectiveLabels.list(messageColumn: "m.id")),
                       EXISTS (SELECT 1 FROM message_sources AS ms WHERE ms.message_id = m.id)
                  FROM message_seq AS s LEFT JOIN messages AS m ON m.id = s.message_id
                """

    static func exportItem(from row: Row) -> ExportItem {
                ExportItem(seq: row.int64(0), gmailID: row.string(1), deleted: row.bool(2), internalDate: row.int64(3),
                           sender: row.optionalString(4), messageIDHeader: row.optionalString(5),
                           labels: (row.optionalString(6) ?? "").split(separator: "\u{1F}").map(String.init).sorted(),
                           sourceStored: row.bool(7))
    }
}
