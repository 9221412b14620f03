/*!
 Labels as objects (issue 21 §2): creating, renaming and deleting labels, local-first as
 triage is. `labels` is canonical (labels.list, written only by sync); what the user asks
 for lives in `label_overlay` until Gmail confirms it, and every read of label objects
 goes through the one view `shown_labels` (Schema: 011_label_objects), as every read of
 a message's labels goes through `effective_labels`.

 - create: a provisional label `Hudson+N`, usable at once by `hd-mark`, searches and
   completions. The flusher creates it at Gmail before any queued change that uses it
   (those are not claimed meanwhile) and then maps the provisional id to Gmail's
   everywhere it appears, in one transaction (`mapProvisionalLabel`).
 - rename: the new name is shown at once; labels.patch keeps every message's label.
 - delete: the label is hidden at once and every message that carries it loses it
   through queued removes, which are never sent one by one: labels.delete removes the
   label from every message, and they retire on its history echo like any change.

 An overlay row retires only when a labels.list that began after Gmail's answer agrees
 (`settleLabelOverlay`), so a listing can never bring an old name back.
 */
import SQLite

/// What a label operation asks of Gmail.
public enum LabelChangeOp: String, Sendable, Equatable {
    case create, rename, delete
}

/// A label color from Gmail's fixed palette ([disc] `LabelColor`): both members are required.
public struct LabelColorChoice: Equatable, Sendable {
    public var text: String
    public var background: String

    /// The colors Gmail accepts for `textColor` and `backgroundColor` (gmail.v1.json, `LabelColor`).
    public static let palette: Set<String> = [
        "#000000", "#434343", "#666666", "#999999", "#cccccc", "#efefef", "#f3f3f3", "#ffffff", "#fb4c2f", "#ffad47",
        "#fad165", "#16a766", "#43d692", "#4a86e8", "#a479e2", "#f691b3", "#f6c5be", "#ffe6c7", "#fef1d1", "#b9e4d0",
        "#c6f3de", "#c9daf8", "#e4d7f5", "#fcdee8", "#efa093", "#ffd6a2", "#fce8b3", "#89d3b2", "#a0eac9", "#a4c2f4",
        "#d0bcf1", "#fbc8d9", "#e66550", "#ffbc6b", "#fcda83", "#44b984", "#68dfa9", "#6d9eeb", "#b694e8", "#f7a7c0",
        "#cc3a21", "#eaa041", "#f2c960", "#149e60", "#3dc789", "#3c78d8", "#8e63ce", "#e07798", "#ac2b16", "#cf8933",
        "#d5ae49", "#0b804b", "#2a9c68", "#285bac", "#653e9b", "#b65775", "#822111", "#a46a21", "#aa8831", "#076239",
        "#1a764d", "#1c4587", "#41236d", "#83334c", "#464646", "#e7e7e7", "#0d3472", "#b6cff5", "#0d3b44", "#98d7e4",
        "#3d188e", "#e3d7ff", "#711a36", "#fbd3e0", "#8a1c0a", "#f2b2a8", "#7a2e0b", "#ffc8af", "#7a4706", "#ffdeb5",
        "#594c05", "#fbe983", "#684e07", "#fdedc1", "#0b4f30", "#b3efd3", "#04502e", "#a2dcc1", "#c2c2c2", "#4986e7",
        "#2da2bb", "#b99aff", "#994a64", "#f691b2", "#ff7537", "#ffad46", "#662e37", "#ebdbde", "#cca6ac", "#094228",
        "#42d692", "#16a765", "#757575", "#1e53b8", "#007286", "#7858c3", "#c2185b", "#d93025", "#54240e", "#633e04",
        "#521d28", "#202124", "#083018",
    ]

    /// Parses `TEXT:BACKGROUND` (`#000000:#16a766`); nil unless both are palette colors.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, Self.palette.contains(parts[0]), Self.palette.contains(parts[1]) else { return nil }
        self.text = parts[0]
        self.background = parts[1]
    }

    public init(text: String, background: String) {
        self.text = text
        self.background = background
    }
}

/// A label operation waiting for Gmail (an overlay row), as the flusher and `hd-pending` see it.
public struct PendingLabelChange: Equatable, Sendable {
    public enum State: String, Sendable { case pending, sent }

    public var seq: Int64
    public var accountID: Int64
    public var accountEmail: String
    /// The label's id: provisional (`Hudson+N`) until Gmail has created it.
    public var labelID: String
    public var op: LabelChangeOp
    /// The name wanted (create, rename); nil for delete.
    public var name: String?
    public var previousName: String?
    public var color: LabelColorChoice?
    public var state: State
    /// When a request carrying it first went out; nil while none did.
    public var attemptedAt: Int64?
    /// The name a create carried when it went out: looked up before it is sent again.
    public var attemptedName: String?
    public var attempts: Int
    public var lastError: String?
    public var nextAttemptAt: Int64?
    public var createdAt: Int64

    /// Whether the label exists at Gmail under this id (a provisional one does not).
    public var isProvisional: Bool { labelID.hasPrefix(Store.provisionalLabelPrefix) }
}

/// A label operation Gmail refused for good, as `hd-pending --rejected` shows it.
public struct RejectedLabelChange: Equatable, Sendable {
    public var accountID: Int64
    public var accountEmail: String
    public var labelID: String
    public var op: LabelChangeOp
    public var name: String?
    public var previousName: String?
    public var reason: String
    public var rejectedAt: Int64
}

/// What `deleteLabel` did or would do.
public struct LabelDeletion: Equatable, Sendable {
    public var label: LabelInfo
    /// Messages that carried the label and lose it.
    public var messages: Int
}

extension Store {
    /// The prefix of provisional label ids. Gmail's ids are upper-case words (system) or
    /// `Label_N` (user; gmail-api.md "IDs"): none has a `+`.
    public static let provisionalLabelPrefix = "Hudson+"

    /// The one composed definition of the labels every command shows (Schema, 011).
    static let shownLabels = "shown_labels"

    static let pendingLabelColumns = """
        o.seq, o.account_id, a.email, o.label_id, o.op, o.name, o.previous_name, o.text_color, o.background_color,
        o.state, o.attempted_at, o.attempted_name, o.attempts, o.last_error, o.next_attempt_at, o.created_at
        """

    static func pendingLabelChange(from row: Row) -> PendingLabelChange {
        let text = row.optionalString(7), background = row.optionalString(8)
        return PendingLabelChange(
            seq: row.int64(0), accountID: row.int64(1), accountEmail: row.string(2), labelID: row.string(3),
            op: LabelChangeOp(rawValue: row.string(4)) ?? .rename, name: row.optionalString(5),
            previousName: row.optionalString(6),
            color: text.flatMap { text in background.map { LabelColorChoice(text: text, background: $0) } },
            state: PendingLabelChange.State(rawValue: row.string(9)) ?? .pending, attemptedAt: row.optionalInt64(10),
            attemptedName: row.optionalString(11), attempts: row.int(12), lastError: row.optionalString(13),
            nextAttemptAt: row.optionalInt64(14), createdAt: row.int64(15))
    }

    // MARK: - Names

    /// The names no user label may have: the system labels' ids (gmail-api.md "IDs"),
    /// compared ignoring case, as Gmail refuses them.
    static func isSystemLabelName(_ name: String) -> Bool {
        systemLabelIDs.contains(name.uppercased())
    }

    /// The name as Gmail will store it (trimmed of surrounding spaces), or an error: empty,
    /// breaking the one rule of what a name may hold (LabelNameRule: control characters,
    /// which a terminal would act on, bidirectional marks), or a system label's name.
    public static func checkedLabelName(_ name: String) throws -> String {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty else { throw StoreError.invalidLabelName(name, reason: "a label name cannot be empty") }
        if let problem = LabelNameRule.problem(trimmed) { throw StoreError.invalidLabelName(name, reason: problem) }
        if isSystemLabelName(trimmed) { throw StoreError.systemLabel(trimmed) }
        return trimmed
    }

    /// The shown label of the account named exactly `name` (ignoring case), other than `except`.
    private func shownLabel(exactly name: String, accountID: Int64, except: String? = nil) throws -> LabelInfo? {
        try labels(accountID: accountID).first { $0.name?.lowercased() == name.lowercased() && $0.id != except }
    }

    // MARK: - Local operations (hd-labels, hd-mark --create)

    /// Creates a label locally: a provisional label every command shows at once, created
    /// at Gmail by the next flush. Throws `labelExists` when a shown label has the name.
    @discardableResult
    public func createLabel(name: String, color: LabelColorChoice? = nil, accountID: Int64) throws -> LabelInfo {
        let name = try Self.checkedLabelName(name)
        return try db.write { try insertProvisionalLabel(name: name, color: color, accountID: accountID) }
    }

    /// The insert of `createLabel`, inside the caller's write transaction.
    func insertProvisionalLabel(name: String, color: LabelColorChoice?, accountID: Int64) throws -> LabelInfo {
        if let existing = try shownLabel(exactly: name, accountID: accountID) {
            throw StoreError.labelExists(existing.displayName)
        }
        let seq = (try db.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'label_overlay'") ?? 0) + 1
        let id = Self.provisionalLabelPrefix + String(seq)
        try db.execute("""
            INSERT INTO label_overlay (seq, account_id, label_id, op, name, text_color, background_color, created_at, updated_at)
            VALUES (?, ?, ?, 'create', ?, ?, ?, ?, ?)
            """, arguments: [seq, accountID, id, name, color?.text, color?.background, now, now])
        return LabelInfo(id: id, name: name, kind: .user, messageListVisibility: "show", labelListVisibility: "labelShow",
                         textColor: color?.text, backgroundColor: color?.background)
    }

    /// Renames a label locally: every command shows the new name at once; labels.patch
    /// follows (the label keeps its id, so every message keeps it). Returns the label as
    /// it was and as it is now.
    @discardableResult
    public func renameLabel(_ old: String, to new: String, accountID: Int64) throws -> (old: LabelInfo, new: LabelInfo) {
        let newName = try Self.checkedLabelName(new)
        return try db.write {
            guard let label = try label(named: old, accountID: accountID) else { throw StoreError.unknownLabel(old) }
            if label.kind == .system { throw StoreError.systemLabel(label.displayName) }
            if let clash = try shownLabel(exactly: newName, accountID: accountID, except: label.id) {
                throw StoreError.labelExists(clash.displayName)
            }
            let existing = try overlayRow(labelID: label.id, accountID: accountID)
            switch existing?.op {
            case .create? where existing?.state == .pending:
                // Not at Gmail yet (or its answer is not in): it is created with the new
                // name, or renamed once its id is known (`mapProvisionalLabel`).
                try db.execute("UPDATE label_overlay SET name = ?, updated_at = ? WHERE seq = ?", newName, now, existing!.seq)
            case .some:
                try db.execute("""
                    UPDATE label_overlay SET op = 'rename', name = ?, previous_name = coalesce(previous_name, ?),
                           state = 'pending', sent_at = NULL, attempts = 0, last_error = NULL, next_attempt_at = NULL,
                           updated_at = ?
                     WHERE seq = ?
                    """, newName, label.name, now, existing!.seq)
            case nil:
                try db.execute("""
                    INSERT INTO label_overlay (account_id, label_id, op, name, previous_name, created_at, updated_at)
                    VALUES (?, ?, 'rename', ?, ?, ?, ?)
                    """, accountID, label.id, newName, label.name, now, now)
            }
            var renamed = label
            renamed.name = newName
            return (label, renamed)
        }
    }

    /// What deleting the label `name` would do: the label, and how many messages carry it.
    public func labelDeletionImpact(_ name: String, accountID: Int64) throws -> LabelDeletion {
        try db.read {
            guard let label = try label(named: name, accountID: accountID) else { throw StoreError.unknownLabel(name) }
            if label.kind == .system { throw StoreError.systemLabel(label.displayName) }
            let count = try db.scalarInt("""
                SELECT count(*) FROM messages AS m WHERE m.account_id = ?1 AND \(EffectiveLabels.carries(messageColumn: "m.id", label: "?2"))
                """, accountID, label.id) ?? 0
            return LabelDeletion(label: label, messages: Int(count))
        }
    }

    /// Deletes a label locally: it is hidden at once and every message loses it (queued
    /// removes, in the same transaction). A label created here that no request ever
    /// carried is simply forgotten, with the changes that used it.
    @discardableResult
    public func deleteLabel(_ name: String, accountID: Int64) throws -> LabelDeletion {
        try writeTrackingLabels { touched in
            guard let label = try label(named: name, accountID: accountID) else { throw StoreError.unknownLabel(name) }
            if label.kind == .system { throw StoreError.systemLabel(label.displayName) }
            var targets: [TriageTarget] = []
            try db.forEach("""
                SELECT m.id, m.gmail_id, m.thread_id FROM messages AS m
                 WHERE m.account_id = ?1 AND \(EffectiveLabels.carries(messageColumn: "m.id", label: "?2"))
                """, accountID, label.id) {
                targets.append(TriageTarget(key: $0.int64(0), accountID: accountID, gmailID: $0.string(1), threadID: $0.string(2)))
            }
            let changes = targets.map { LabelChange(target: $0, label: label.id, op: .remove) }
            if !changes.isEmpty {
                _ = try enqueue(changes, slots: try labelSlots(changes), actionID: nil)
                for target in targets {
                    touched.insert(ThreadKey(accountID: accountID, threadID: target.threadID), label: label.id)
                }
            }
            let existing = try overlayRow(labelID: label.id, accountID: accountID)
            if let existing, existing.op == .create, existing.state == .pending, existing.attemptedAt == nil {
                // No request ever carried it: nothing to undo at Gmail.
                try db.execute("DELETE FROM label_overlay WHERE seq = ?", existing.seq)
            } else if let existing {
                try db.execute("""
                    UPDATE label_overlay SET op = 'delete', name = NULL, previous_name = ?,
                           state = 'pending', sent_at = NULL, attempts = 0, last_error = NULL, next_attempt_at = NULL,
                           updated_at = ?
                     WHERE seq = ?
                    """, label.name, now, existing.seq)
            } else {
                try db.execute("""
                    INSERT INTO label_overlay (account_id, label_id, op, name, previous_name, created_at, updated_at)
                    VALUES (?, ?, 'delete', NULL, ?, ?, ?)
                    """, accountID, label.id, label.name, now, now)
            }
            return LabelDeletion(label: label, messages: targets.count)
        }
    }

    private func overlayRow(labelID: String, accountID: Int64) throws -> PendingLabelChange? {
        try db.first("""
            SELECT \(Self.pendingLabelColumns) FROM label_overlay AS o JOIN accounts AS a ON a.id = o.account_id
             WHERE o.account_id = ? AND o.label_id = ?
            """, accountID, labelID, transform: Self.pendingLabelChange(from:))
    }

    // MARK: - Reads

    /// Every label operation not yet confirmed by Gmail, oldest first; one account's when given.
    public func pendingLabelChanges(accountID: Int64? = nil) throws -> [PendingLabelChange] {
        try db.map("""
            SELECT \(Self.pendingLabelColumns) FROM label_overlay AS o JOIN accounts AS a ON a.id = o.account_id
             WHERE ?1 IS NULL OR o.account_id = ?1 ORDER BY o.seq
            """, accountID, transform: Self.pendingLabelChange(from:))
    }

    /// Label operations Gmail refused in the last `rejectionLifetimeMilliseconds`, newest first.
    public func rejectedLabelChanges(accountID: Int64? = nil) throws -> [RejectedLabelChange] {
        try db.map("""
            SELECT r.account_id, a.email, r.label_id, r.op, r.name, r.previous_name, r.reason, r.rejected_at
              FROM rejected_label_changes AS r JOIN accounts AS a ON a.id = r.account_id
             WHERE (?1 IS NULL OR r.account_id = ?1) AND r.rejected_at >= ?2
             ORDER BY r.id DESC
            """, accountID, now - Self.rejectionLifetimeMilliseconds) {
            RejectedLabelChange(accountID: $0.int64(0), accountEmail: $0.string(1), labelID: $0.string(2),
                                op: LabelChangeOp(rawValue: $0.string(3)) ?? .rename, name: $0.optionalString(4),
                                previousName: $0.optionalString(5), reason: $0.string(6), rejectedAt: $0.int64(7))
        }
    }
}

extension String {
    /// Without leading and trailing spaces (U+0020 only: what Gmail's label names lose).
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self).unicodeScalars[...]
        while scalars.first == " " { scalars = scalars.dropFirst() }
        while scalars.last == " " { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
