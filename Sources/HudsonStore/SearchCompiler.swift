/*!
 The one translator from a parsed query (HudsonQuery's AST) to SQL over the store
 (STYLE.md rule 4: "Query-to-SQL lives only in Search"). Every user term is bound as a
 parameter or becomes a quoted FTS5 string in a MATCH expression Hudson builds itself,
 so no user text is ever spliced into SQL or read as FTS5 syntax (NEAR, *, ^, column
 filters). Label, `is:` and `in:` operators read the effective labels, so a thread
 archived a moment ago no longer matches `in:inbox`.

 Plan: the top-level conjuncts that are pure full text are merged into one MATCH that
 drives the query in rowid order — the message key follows the date, so newest-first is
 a walk that stops after a page (sqlite-notes.md, FTS5 measurements); everything else
 is a condition on `messages AS m`. Full-text parts nested under OR/NOT become
 `m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH ?)`.
 */
import HudsonQuery
import SQLite

public struct SearchOptions: Sendable {
    public enum Sort: String, Sendable { case newest, relevance }

    public var accountID: Int64?
    public var sort: Sort
    /// Now, in epoch milliseconds, for `older_than:`/`newer_than:`.
    public var now: Int64
    /// The epoch second at which a calendar day starts in the user's time zone (the CLI
    /// knows the zone; the store does not read the environment). UTC by default.
    public var startOfDay: @Sendable (_ year: Int, _ month: Int, _ day: Int) -> Int64

    public init(
        accountID: Int64? = nil, sort: Sort = .newest, now: Int64,
        startOfDay: @escaping @Sendable (Int, Int, Int) -> Int64 = SearchOptions.utcStartOfDay
    ) {
        self.accountID = accountID
        self.sort = sort
        self.now = now
        self.startOfDay = startOfDay
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date, times 86400.
    public static let utcStartOfDay: @Sendable (Int, Int, Int) -> Int64 = { year, month, day in
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return (era * 146_097 + dayOfEra - 719_468) * 86_400
    }
}

/// A compiled query: what `--explain` shows and what the store runs.
public struct CompiledSearch: Sendable, CustomStringConvertible {
    /// `FROM ... WHERE ...` selecting from `messages AS m` (and `fts_messages` when driven by it).
    public var fromAndWhere: String
    public var arguments: [SQLiteValue]
    /// The driving MATCH expression, when the query has top-level full-text terms.
    public var match: String?
    /// ORDER BY for newest-first or relevance.
    public var orderBy: String

    public var description: String {
        var lines = ["sql: SELECT m.id ... \(fromAndWhere) ORDER BY \(orderBy)"]
        if let match { lines.append("fts: \(match)") }
        lines.append("arguments: " + arguments.map(Self.render).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }

    static func render(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let v): return "'" + v.replacingAll("'", with: "''") + "'"
        case .blob(let b): return "x'<\(b.count) bytes>'"
        }
    }
}

struct SearchCompiler {
    let options: SearchOptions
    /// Label ids whose name (normalised the way Gmail compares) or id matches, per query name.
    let resolveLabel: (LabelName) throws -> [String]
    /// The account addresses `from:me`/`to:me` stand for.
    let ownAddresses: [String]

    private var arguments: [SQLiteValue] = []

    init(options: SearchOptions, ownAddresses: [String], resolveLabel: @escaping (LabelName) throws -> [String]) {
        self.options = options
        self.ownAddresses = ownAddresses
        self.resolveLabel = resolveLabel
    }

    mutating func compile(_ query: Query) throws -> CompiledSearch {
        arguments = []
        let root = query.simplified().root
        var conjuncts: [QueryNode]
        switch root {
        case .and(let children): conjuncts = children
        case .all: conjuncts = []
        default: conjuncts = [root]
        }
        // Merge the pure full-text conjuncts into one driving MATCH.
        var matchParts: [String] = []
        var rest: [QueryNode] = []
        for node in conjuncts {
            if let expression = FullText.expression(node), FullText.hasPositive(node) {
                matchParts.append("(\(expression))")
            } else if FullText.isEmptyText(node) {
                continue  // a word with nothing to index (punctuation): Gmail ignores it
            } else {
                rest.append(node)
            }
        }
        let match = matchParts.isEmpty ? nil : matchParts.joined(separator: " AND ")
        var conditions: [String] = []
        var from = "FROM messages AS m"
        if let match {
            from = "FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid"
            conditions.append("fts_messages MATCH ?")
            arguments.append(.text(match))
        }
        if let accountID = options.accountID {
            conditions.append("m.account_id = ?")
            arguments.append(.integer(accountID))
        }
        for node in rest {
            conditions.append(try condition(node))
        }
        // Gmail's default scope: spam and trash only when the query asks for them. A
        // negated mention (`-in:trash`) asks for nothing, so spam stays out then too.
        let wanted = Self.scopesAskedFor(query.root, negated: false)
        if !wanted.contains("SPAM") { conditions.append("NOT \(carries("SPAM"))") }
        if !wanted.contains("TRASH") { conditions.append("NOT \(carries("TRASH"))") }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let orderBy: String
        if match != nil {
            orderBy = options.sort == .relevance ? "bm25(fts_messages), fts_messages.rowid DESC" : "fts_messages.rowid DESC"
        } else {
            orderBy = "m.id DESC"
        }
        return CompiledSearch(fromAndWhere: from + whereClause, arguments: arguments, match: match, orderBy: orderBy)
    }

    // MARK: - Conditions

    private mutating func condition(_ node: QueryNode) throws -> String {
        switch node {
        case .all:
            return "1"
        case .and(let children):
            return "(" + (try children.map { try condition($0) }).joined(separator: " AND ") + ")"
        case .or(let children):
            return "(" + (try children.map { try condition($0) }).joined(separator: " OR ") + ")"
        case .not(let child):
            return "NOT " + (try condition(child))
        case .term(let term):
            if let expression = FullText.expression(node) {
                arguments.append(.text(expression))
                return "m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH ?)"
            }
            if FullText.isEmptyText(node) { return "1" }
            return try condition(term)
        }
    }

    /// "m effectively carries label" with the label bound (EffectiveLabels owns the rule).
    private mutating func carries(_ label: String) -> String {
        arguments.append(.text(label))
        return EffectiveLabels.carries(messageColumn: "m.id")
    }

    private mutating func carriesAny(_ labels: [String]) -> String {
        guard !labels.isEmpty else { return "0" }
        return "(" + labels.map { carries($0) }.joined(separator: " OR ") + ")"
    }

    private mutating func address(role: String, _ value: String) -> String {
        let wanted = value.lowercased() == "me" ? ownAddresses : [value]
        guard !wanted.isEmpty else { return "0" }
        var parts: [String] = []
        for address in wanted {
            if Self.isFullAddress(address) {
                // Exact addresses are index seeks on message_addresses, not full-text scans.
                arguments.append(.text(address))
                arguments.append(.text(role))
                parts.append("m.id IN (SELECT message_id FROM message_addresses WHERE address = ? AND role = ?)")
            } else if let expression = FullText.column(role == "from" ? "sender" : "recipients", phrase: address, prefix: true) {
                // The account's own address with no '@'? Not reachable in practice; kept total.
                arguments.append(.text(expression))
                parts.append("m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH ?)")
            }
        }
        return parts.isEmpty ? "1" : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// SPAM and/or TRASH when the query names them outside a negation: `in:spam`,
    /// `in:trash`, `label:spam`, `label:trash`, or `in:anywhere` for both.
    static func scopesAskedFor(_ node: QueryNode, negated: Bool) -> Set<String> {
        switch node {
        case .all: return []
        case .not(let child): return scopesAskedFor(child, negated: !negated)
        case .and(let children), .or(let children):
            return children.reduce(into: Set<String>()) { $0.formUnion(scopesAskedFor($1, negated: negated)) }
        case .term(let term):
            guard !negated else { return [] }
            switch term {
            case .location(.spam): return ["SPAM"]
            case .location(.trash): return ["TRASH"]
            case .location(.anywhere): return ["SPAM", "TRASH"]
            case .label(let name) where name.normalized == "spam": return ["SPAM"]
            case .label(let name) where name.normalized == "trash": return ["TRASH"]
            default: return []
            }
        }
    }

    static func isFullAddress(_ text: String) -> Bool {
        guard let at = text.firstIndex(of: "@") else { return false }
        return at != text.startIndex && text.index(after: at) != text.endIndex
    }

    private mutating func dayStart(_ value: DateValue) -> Int64 {
        switch value {
        case .epochSeconds(let seconds): return seconds * 1000
        case .day(let year, let month, let day): return options.startOfDay(year, month, day) * 1000
        }
    }

    private func ageCutoff(_ age: RelativeAge) -> Int64 {
        let days: Int64
        switch age.unit {
        case .day: days = Int64(age.amount)
        case .month: days = Int64(age.amount) * 30
        case .year: days = Int64(age.amount) * 365
        }
        return options.now - days * 86_400_000
    }

    private mutating func bound(_ sql: String, _ value: SQLiteValue) -> String {
        arguments.append(value)
        return sql
    }

    private mutating func condition(_ term: Term) throws -> String {
        switch term {
        case .text, .phrase, .subject:
            return "1"  // handled as full text above
        case .from(let value): return address(role: "from", value)
        case .to(let value), .deliveredTo(let value): return address(role: "to", value)
        case .cc(let value): return address(role: "cc", value)
        case .bcc(let value): return address(role: "bcc", value)
        case .label(let name): return carriesAny(try resolveLabel(name))
        case .location(let location):
            switch location {
            case .inbox: return carries("INBOX")
            case .sent: return carries("SENT")
            case .trash: return carries("TRASH")
            case .spam: return carries("SPAM")
            case .drafts: return carries("DRAFT")
            case .starred: return carries("STARRED")
            case .important: return carries("IMPORTANT")
            case .chats: return carries("CHAT")
            case .anywhere: return "1"
            case .snoozed: return "0"  // snoozing is not exposed by the Gmail API
            }
        case .flag(let flag):
            switch flag {
            case .unread: return carries("UNREAD")
            case .read: return "NOT " + carries("UNREAD")
            case .starred: return carries("STARRED")
            case .important: return carries("IMPORTANT")
            case .muted, .snoozed: return "0"  // not exposed by the Gmail API
            }
        case .has(let kind):
            switch kind {
            case .attachment: return "m.has_attachment = 1"
            case .userLabels, .noUserLabels:
                let exists = "EXISTS (SELECT 1 FROM \(EffectiveLabels.view) AS el JOIN labels AS l ON l.account_id = m.account_id AND l.id = el.label WHERE el.message_id = m.id AND l.type = 'user')"
                return kind == .userLabels ? exists : "NOT " + exists
            case .drive: return "0"
            }
        case .filename(let name):
            let lowered = name.lowercased()
            arguments.append(.text("%" + Self.escapeLike(lowered) + "%"))
            arguments.append(.text(lowered))
            return "EXISTS (SELECT 1 FROM attachments AS a WHERE a.message_id = m.id AND (lower(a.filename) LIKE ? ESCAPE '\\' OR a.mime_type LIKE '%/' || ?))"
        case .after(let value): return bound("m.internal_date >= ?", .integer(dayStart(value)))
        case .before(let value): return bound("m.internal_date < ?", .integer(dayStart(value)))
        case .newerThan(let age): return bound("m.internal_date >= ?", .integer(ageCutoff(age)))
        case .olderThan(let age): return bound("m.internal_date < ?", .integer(ageCutoff(age)))
        case .larger(let bytes): return bound("m.size_estimate > ?", .integer(bytes))
        case .smaller(let bytes): return bound("m.size_estimate < ?", .integer(bytes))
        case .category(let category):
            switch category {
            case .primary: return carries("CATEGORY_PERSONAL")
            case .social: return carries("CATEGORY_SOCIAL")
            case .promotions: return carries("CATEGORY_PROMOTIONS")
            case .updates: return carries("CATEGORY_UPDATES")
            case .forums: return carries("CATEGORY_FORUMS")
            case .reservations, .purchases: return "0"  // no API label carries these
            }
        case .rfc822MessageID(let id):
            let bare = id.hasPrefix("<") && id.hasSuffix(">") ? String(id.dropFirst().dropLast()) : id
            return bound("m.message_id_header = ?", .text("<\(bare)>"))
        case .list(let list):
            // List-Id carries the list address with '@' as '.': dev@lists.example.org → <dev.lists.example.org>
            let dotted = list.lowercased().replacingAll("@", with: ".")
            return bound("lower(m.list_id) LIKE ? ESCAPE '\\'", .text("%" + Self.escapeLike(dotted) + "%"))
        }
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingAll("\\", with: "\\\\").replacingAll("%", with: "\\%").replacingAll("_", with: "\\_")
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
