/*!
 Labels as Gmail lists them (gmail-api.md 2.10), and name lookups for triage. Reads go
 through `shown_labels`, canonical composed with the label overlay (LabelObjects.swift).
 */
import HudsonQuery
import SQLite

public struct LabelInfo: Equatable, Sendable {
    public enum Kind: String, Sendable { case system, user }

    public var id: String
    /// Nil for a label id seen on a message before labels.list named it.
    public var name: String?
    public var kind: Kind?
    public var messageListVisibility: String?
    public var labelListVisibility: String?
    public var textColor: String?
    public var backgroundColor: String?
    /// A local operation on the label that Gmail has not confirmed yet (create or
    /// rename; a deleted label is not shown at all).
    public var localChange: LabelChangeOp?

    public init(
        id: String, name: String?, kind: Kind? = nil, messageListVisibility: String? = nil,
        labelListVisibility: String? = nil, textColor: String? = nil, backgroundColor: String? = nil,
        localChange: LabelChangeOp? = nil
    ) {
        self.localChange = localChange
        self.id = id
        self.name = name
        self.kind = kind
        self.messageListVisibility = messageListVisibility
        self.labelListVisibility = labelListVisibility
        self.textColor = textColor
        self.backgroundColor = backgroundColor
    }

    /// What to show: the name, or the id while the name is unknown.
    public var displayName: String { name ?? id }
}

extension Store {
    private static let labelColumns =
        "id, name, type, message_list_visibility, label_list_visibility, text_color, background_color, local_op"

    private static func label(from row: Row) -> LabelInfo {
        LabelInfo(
            id: row.string(0), name: row.optionalString(1), kind: row.optionalString(2).flatMap(LabelInfo.Kind.init(rawValue:)),
            messageListVisibility: row.optionalString(3), labelListVisibility: row.optionalString(4),
            textColor: row.optionalString(5), backgroundColor: row.optionalString(6),
            localChange: row.optionalString(7).flatMap(LabelChangeOp.init(rawValue:)))
    }

    /// Replaces the account's label list with Gmail's (labels.list has no paging).
    /// Labels the server no longer has are removed; ids still on messages come back
    /// as unnamed rows the next time a snapshot mentions them. In the same transaction
    /// the label overlay is settled against the listing (`settleLabelOverlay`);
    /// `listedAt` is when the listing's request went out (epoch ms, the store's clock).
    public func replaceLabels(accountID: Int64, with labels: [LabelInfo], listedAt: Int64? = nil) throws {
        try writeTrackingLabels { touched in
            try settleLabelOverlay(accountID: accountID, listed: labels, listedAt: listedAt, touched: &touched)
            try db.execute("CREATE TEMP TABLE IF NOT EXISTS listed_labels (id TEXT PRIMARY KEY)")
            try db.execute("DELETE FROM temp.listed_labels")
            for label in labels {
                try db.execute("INSERT OR IGNORE INTO temp.listed_labels (id) VALUES (?)", label.id)
                try db.execute("""
                    INSERT INTO labels (account_id, id, name, type, message_list_visibility, label_list_visibility, text_color, background_color)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (account_id, id) DO UPDATE SET
                        name = excluded.name, type = excluded.type,
                        message_list_visibility = excluded.message_list_visibility,
                        label_list_visibility = excluded.label_list_visibility,
                        text_color = excluded.text_color, background_color = excluded.background_color
                    """, accountID, label.id, label.name, label.kind?.rawValue, label.messageListVisibility,
                    label.labelListVisibility, label.textColor, label.backgroundColor)
            }
            try db.execute("""
                DELETE FROM labels WHERE account_id = ? AND id NOT IN (SELECT id FROM temp.listed_labels)
                """, accountID)
            try db.execute("DELETE FROM temp.listed_labels")
            try db.execute("UPDATE accounts SET labels_synced_at = ? WHERE id = ?", now, accountID)
        }
    }

    /// Every label of the account as every command shows it (`shown_labels`: Gmail's,
    /// with local creations, renames and deletions applied), system labels first, then by name.
    public func labels(accountID: Int64) throws -> [LabelInfo] {
        try db.map("""
            SELECT \(Self.labelColumns) FROM \(Self.shownLabels) WHERE account_id = ?
             ORDER BY type = 'user', coalesce(name, id) COLLATE NOCASE
            """, accountID, transform: Self.label(from:))
    }


    /// Whether a label is the one the user named, the way Gmail's `label:` compares:
    /// its name or id ignoring case, or its name with `-`, `/`, ` ` and `_` alike
    /// (`travel-2026` names "Travel/2026"). A name that text output cannot show as it is
    /// (LabelNameRule) is also named by the escaped spelling output shows for it
    /// (`Work\e[8m`). The one rule for every command.
    static func labelMatches(id: String, name: String?, wanted: String) -> Bool {
        if id.lowercased() == wanted.lowercased() { return true }
        guard let name else { return false }
        if !LabelNameRule.isShownAsIs(name) && LabelNameRule.escaped(name).lowercased() == wanted.lowercased() { return true }
        return name.lowercased() == wanted.lowercased() || LabelName.normalize(name) == LabelName.normalize(wanted)
    }

    /// The label of an account that `name` names (see `labelMatches`); an exact name wins
    /// over a looser match.
    public func label(named name: String, accountID: Int64) throws -> LabelInfo? {
        let matches = try labels(accountID: accountID).filter { Self.labelMatches(id: $0.id, name: $0.name, wanted: name) }
        return matches.first { $0.name?.lowercased() == name.lowercased() } ?? matches.first
    }

    /// Makes sure a row exists for each label id (names come later from labels.list).
    func ensureLabelRows(accountID: Int64, ids: [String]) throws {
        for id in ids {
            try db.execute("INSERT OR IGNORE INTO labels (account_id, id) VALUES (?, ?)", accountID, id)
        }
    }
}
