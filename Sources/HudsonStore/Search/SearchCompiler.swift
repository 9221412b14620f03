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
    /// `oldest` is for readers that want a series in the order it was written (`git am`
    /// of a patch series read back with `hd-show --mbox`; notmuch's `--sort=oldest-first`).
    public enum Sort: String, Sendable { case newest, oldest, relevance }

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
    /// ORDER BY for newest-first, oldest-first or relevance.
    public var orderBy: String
    /// The message key as read from the table that drives the query (`m.id`, the
    /// full-text rowid, the address index's key): a condition on it seeks that index.
    var keyColumn = "m.id"
    /// Where the labels of `m` are read from (EffectiveLabels.source).
    var labelSource: String = EffectiveLabels.view
    /// The same selection, with the same arguments, for a read of every match: spam and
    /// trash are left out as one list read once (`EffectiveLabels.carriesAny`) instead of
    /// two seeks per message, which a page of 50 wants and a whole result does not.
    var everyMatchFromAndWhere: String
    /// The same selection for counting messages, with the same arguments, when no
    /// condition reads a column of `messages`: from the driving table alone (the full-text
    /// doclist, the address index), spam and trash left out as one list instead of two
    /// seeks per message. Counting 27,000 matches at 100,000 messages read every matching
    /// message's wide row only to join it (40 ms against 8 ms; issue 19).
    var countFromAndWhere: String?

    /// Adds a condition on `m` to the WHERE clause (its `?` after every other argument).
    mutating func require(_ condition: String, _ values: SQLiteValue...) {
        func add(to selection: inout String) {
            selection += (selection.contains(" WHERE ") ? " AND " : " WHERE ") + condition
        }
        add(to: &fromAndWhere)
        add(to: &everyMatchFromAndWhere)
        arguments += values
        countFromAndWhere = nil  // the condition may read `m`
    }

    public var description: String {
        var lines = ["sql: SELECT m.id ... \(fromAndWhere) ORDER BY \(orderBy)"]
        if let countFromAndWhere { lines.append("count sql: SELECT count(*) \(countFromAndWhere)") }
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
    /// How far message keys stand from their date's first key (key − date in ms × 1000):
    /// 0...999 when every key follows its date, wider when `message_key_exceptions` lists
    /// messages that stray (a crowded millisecond, a date changed by a later snapshot).
    /// A date range is then searched as the key range widened by that much, and the
    /// dates themselves still compared; nil searches dates without a key range.
    let keyDisplacement: ClosedRange<Int64>?
    /// Whether a label id is a user label (small, as a rule: worth listing).
    let isUserLabel: (String) -> Bool
    /// Where effective labels are read from (EffectiveLabels.source).
    let labelSource: String
    /// Whether few enough messages are larger than a size that listing them from the
    /// size index beats walking the mail newest first.
    let isRareSize: (Int64) -> Bool
    /// About how many messages carry a label (the kept `label_counts`): of several labels
    /// a query asks for, the one with the fewest members drives it.
    let labelMessages: (String) -> Int64

    /// How `has:attachment` and `filename:` read a message whose attachments are not known
    /// (no stored body, no answer from Gmail): as stored (the guess), or each term as the
    /// value that lets the most (`most`) or the fewest (`least`) messages match, by the
    /// term's polarity. The query is monotone in each term once its negations are counted,
    /// so least ⊆ stored ⊆ most, and the differences are the matches that rest on a guess
    /// and the messages that may match too (`Store.attachmentGuesses`).
    enum AttachmentReading: Sendable { case stored, most, least }
    var attachmentReading = AttachmentReading.stored

    private var arguments: [SQLiteValue] = []
    /// Whether the term being compiled is under an odd number of negations.
    private var negated = false
    /// Message-key bounds implied by the query's top-level dates (lower inclusive, upper
    /// exclusive), when keys follow dates.
    private var keyBounds: (lower: Int64?, upper: Int64?)?

    init(
        options: SearchOptions, ownAddresses: [String], keyDisplacement: ClosedRange<Int64>? = nil,
        isUserLabel: @escaping (String) -> Bool = { _ in false }, labelSource: String = EffectiveLabels.view,
        isRareSize: @escaping (Int64) -> Bool = { $0 >= SearchCompiler.rareSize },
        labelMessages: @escaping (String) -> Int64 = { _ in 0 },
        resolveLabel: @escaping (LabelName) throws -> [String]
    ) {
        self.labelSource = labelSource
        self.isRareSize = isRareSize
        self.labelMessages = labelMessages
        self.options = options
        self.ownAddresses = ownAddresses
        self.keyDisplacement = keyDisplacement
        self.isUserLabel = isUserLabel
        self.resolveLabel = resolveLabel
    }

    /// The size above which mail is taken as rare when the store is not asked (1 MiB).
    static let rareSize: Int64 = 1 << 20
    /// At most this many messages larger than a size are listed from the size index: a
    /// page of 50 threads walked newest first reads thousands of messages when one in a
    /// hundred passes, and listing 5,000 keys off the index costs about a millisecond.
    static let rareSizeMessages = 5_000

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
        keyBounds = keyDisplacement.flatMap { Self.keyBounds(of: conjuncts, in: self, displacement: $0) }
        var conditions: [String] = []
        var from = "FROM messages AS m"
        // Without full text, a top-level exact address drives the query from its index
        // (address, role, message_id), walked backwards: newest first, stopping after a
        // page, where an IN list would first collect every message of that sender.
        var addressDriver: (address: String, role: String)?
        if match == nil, let index = rest.firstIndex(where: { Self.exactAddress($0, own: ownAddresses) != nil }) {
            addressDriver = Self.exactAddress(rest[index], own: ownAddresses)
            rest.remove(at: index)
        }
        // Without either, a top-level `larger:` that few messages pass is first listed from
        // the size index (migration 015): its entries hold the key, so the list is read
        // without touching a message and walked newest first, reading only the messages a
        // page shows, where walking every message tests thousands for one page. A size much
        // of the mail passes is found sooner by that walk; the planner, without statistics,
        // cannot tell the two apart, so the store counts (`isRareSize`, a bounded read of
        // the same index).
        var sizeListed = false
        if match == nil && addressDriver == nil && keyBounds == nil, let bytes = rest.lazy.compactMap({ node -> Int64? in
            if case .term(.larger(let bytes)) = node { return bytes }
            return nil
        }).first, isRareSize(bytes) {
            conditions.append("m.id IN (SELECT rowid FROM messages INDEXED BY messages_by_size WHERE size_estimate > ?)")
            arguments.append(.integer(bytes))
            sizeListed = true
        }
        // Else a top-level label drives the query from its index (label, message), walked
        // backwards, stopping after a page: listing the label's members first read all of
        // them in the range (6,662 for `label:Work` and six months at 2,000,000 messages),
        // or all 69,794 without one, and a label tested on each message walks every newer
        // message (docs/performance.md, "A label's page"). Only while nothing is queued,
        // when the index holds the effective labels; of several labels, the one with the
        // fewest members, each other tested on the rows it yields. A term that implies a
        // label (`is:awaiting-reply`: mail the account sent) may drive by it, and is still
        // tested.
        var labelDriver: (table: String, label: String)?
        if match == nil && addressDriver == nil && !sizeListed, let table = EffectiveLabels.labelIndexTable(source: labelSource) {
            var candidates: [(index: Int, label: String, wholeTerm: Bool)] = []
            for (index, node) in rest.enumerated() {
                guard case .term(let term) = node else { continue }
                if let asked = try labelsAsked(term) {
                    if asked.count == 1 { candidates.append((index, asked[0], true)) }
                } else if let implied = Self.labelImplied(term) {
                    candidates.append((index, implied, false))
                }
            }
            // The counts are read only to choose between labels.
            let best = candidates.count < 2 ? candidates.first
                : candidates.map { ($0, labelMessages($0.label)) }.min { $0.1 < $1.1 }?.0
            if let best {
                labelDriver = (table, best.label)
                if best.wholeTerm { rest.remove(at: best.index) }
            }
        }
        // The key follows the date, so the top-level dates also bound the key: the index
        // that drives the query (the full-text doclist, the address or label index, or the
        // messages table) seeks the range instead of walking every newer message first.
        let keyColumn = match != nil ? "fts_messages.rowid" : addressDriver != nil ? "a.message_id"
            : labelDriver != nil ? "ld.message_id" : "m.id"
        if let match {
            from = "FROM fts_messages JOIN messages AS m ON m.id = fts_messages.rowid"
            conditions.append("fts_messages MATCH ?")
            arguments.append(.text(match))
        } else if let addressDriver {
            from = "FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id"
            conditions.append("a.address = ?")
            conditions.append("a.role = ?")
            arguments.append(.text(addressDriver.address))
            arguments.append(.text(addressDriver.role))
        } else if let labelDriver {
            // CROSS JOIN keeps the label's index outside: the planner, without statistics,
            // may otherwise walk the messages and seek each one's label.
            from = "FROM \(labelDriver.table) AS ld CROSS JOIN messages AS m ON m.id = ld.message_id"
            conditions.append("ld.label = ?")
            arguments.append(.text(labelDriver.label))
        }
        if let lower = keyBounds?.lower {
            conditions.append("\(keyColumn) >= ?")
            arguments.append(.integer(lower))
        }
        if let upper = keyBounds?.upper {
            conditions.append("\(keyColumn) < ?")
            arguments.append(.integer(upper))
        }
        if let accountID = options.accountID {
            conditions.append("m.account_id = ?")
            arguments.append(.integer(accountID))
        }
        for node in rest {
            if case .term(let term) = node, let labels = try listedLabels(term) {
                conditions.append(carriesList(labels))
            } else {
                conditions.append(try condition(node))
            }
        }
        // Gmail's default scope: spam and trash only when the query asks for them. A
        // negated mention (`-in:trash`) asks for nothing, so spam stays out then too.
        let wanted = Self.scopesAskedFor(query.root, negated: false)
        let outOfScope = ["SPAM", "TRASH"].filter { !wanted.contains($0) }
        var listScopedConditions = conditions
        for label in outOfScope {
            arguments.append(.text(label))
            conditions.append("NOT " + EffectiveLabels.carriesFew(messageColumn: "m.id", source: labelSource))
        }
        if !outOfScope.isEmpty {
            listScopedConditions.append("NOT " + EffectiveLabels.carriesAny(
                messageColumn: keyColumn, labels: outOfScope.count, source: labelSource))
        }
        func whereClause(_ conditions: [String]) -> String {
            conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        }
        // The driving table alone answers a count when nothing else reads `m`: every
        // full-text row and address row is a message's (triggers delete them with it).
        let drivingFrom = match != nil ? "FROM fts_messages"
            : addressDriver != nil ? "FROM message_addresses AS a"
            : labelDriver.map { "FROM \($0.table) AS ld" } ?? from
        let countReadsMessages = from != drivingFrom && (options.accountID != nil || !rest.isEmpty)
        let countFromAndWhere = countReadsMessages ? nil : drivingFrom + whereClause(listScopedConditions)
        // The driving index's key is m.id's order, read off that index.
        let direction = options.sort == .oldest ? "ASC" : "DESC"
        let orderBy = match != nil && options.sort == .relevance ? "bm25(fts_messages), fts_messages.rowid DESC"
            : "\(keyColumn) \(direction)"
        return CompiledSearch(fromAndWhere: from + whereClause(conditions), arguments: arguments, match: match,
                              orderBy: orderBy, keyColumn: keyColumn, labelSource: labelSource,
                              everyMatchFromAndWhere: from + whereClause(listScopedConditions),
                              countFromAndWhere: countFromAndWhere)
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
            negated.toggle()
            defer { negated.toggle() }
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
        return EffectiveLabels.carries(messageColumn: "m.id", source: labelSource)
    }

    /// For a top-level term that only asks for a label: the labels to list instead of
    /// testing each message, or nil to test. Listing wins within a date range (the list
    /// is bounded by it) and for user labels (small as a rule); a big system label
    /// (INBOX, a category) with no range is better tested on the newest messages, which
    /// stops after a page.
    private func listedLabels(_ term: Term) throws -> [String]? {
        guard let labels = try labelsAsked(term), !labels.isEmpty else { return nil }
        return keyBounds != nil || labels.allSatisfy(isUserLabel) ? labels : nil
    }

    /// A label every message a term selects carries, for a term that asks more than that.
    static func labelImplied(_ term: Term) -> String? {
        switch term {
        case .flag(.awaitingReply), .awaitingReply: return "SENT"  // awaitingReply(sentBefore:)
        default: return nil
        }
    }

    /// The labels a term asks a message to carry (any of them), for a term that asks
    /// nothing else; nil for any other term.
    private func labelsAsked(_ term: Term) throws -> [String]? {
        let labels: [String]
        switch term {
        case .label(let name): labels = try resolveLabel(name)
        case .location(.inbox): labels = ["INBOX"]
        case .location(.sent): labels = ["SENT"]
        case .location(.starred), .flag(.starred): labels = ["STARRED"]
        case .location(.important), .flag(.important): labels = ["IMPORTANT"]
        case .flag(.unread): labels = ["UNREAD"]
        default: return nil
        }
        return labels
    }

    private mutating func carriesList(_ labels: [String]) -> String {
        let bounds = (lower: keyBounds?.lower, upper: keyBounds?.upper)
        let parts = labels.map { label -> String in
            arguments.append(.text(label))
            if let lower = bounds.lower { arguments.append(.integer(lower)) }
            if let upper = bounds.upper { arguments.append(.integer(upper)) }
            return EffectiveLabels.carriesList(
                messageColumn: "m.id", bounded: (bounds.lower != nil, bounds.upper != nil), source: labelSource)
        }
        return "(" + parts.joined(separator: " OR ") + ")"
    }

    /// The message-key bounds of the top-level date conjuncts: `after:`/`newer_than:`
    /// give a lower bound (inclusive), `before:`/`older_than:` an upper one (exclusive);
    /// several of a kind intersect. A message of date d (ms) has a key in d × 1000 +
    /// `displacement`, so "date >= a" implies "key >= a × 1000 + displacement's lower end"
    /// and "date < b" (date <= b − 1) implies "key < b × 1000 + upper end − 999"; with the
    /// usual 0...999 the bounds are exact. A bound at the clamp of absurd dates is dropped,
    /// where keys stop following dates in order.
    private static func keyBounds(
        of conjuncts: [QueryNode], in compiler: SearchCompiler, displacement: ClosedRange<Int64>
    ) -> (lower: Int64?, upper: Int64?)? {
        var compiler = compiler
        var lower: Int64?
        var upper: Int64?
        for node in conjuncts {
            guard case .term(let term) = node else { continue }
            switch term {
            case .after(let value): lower = max(lower ?? .min, compiler.dayStart(value))
            case .newerThan(let age): lower = max(lower ?? .min, compiler.ageCutoff(age))
            case .before(let value): upper = min(upper ?? .max, compiler.dayStart(value))
            case .olderThan(let age): upper = min(upper ?? .max, compiler.ageCutoff(age))
            // The message it matches is older than the age: the same bound as older_than:.
            case .awaitingReply(let age): upper = min(upper ?? .max, compiler.ageCutoff(age))
            default: continue
            }
        }
        let limit = keyLimit
        let lowerKey = lower.map(key(milliseconds:)).flatMap { key -> Int64? in
            guard abs(key) < limit else { return nil }
            return key + min(0, displacement.lowerBound)
        }
        let upperKey = upper.map(key(milliseconds:)).flatMap { key -> Int64? in
            guard abs(key) < limit else { return nil }
            return key + max(0, displacement.upperBound - 999)
        }
        guard lowerKey != nil || upperKey != nil else { return nil }
        return (lowerKey, upperKey)
    }

    /// Keys of dates beyond this (about 285,000 years from 1970) are clamped to it.
    static let keyLimit: Int64 = 9_000_000_000_000_000

    /// Displacements farther than this from a date's key give no useful range (and the
    /// widened bound must not overflow): such a store searches dates without key ranges.
    static let keyDisplacementLimit: Int64 = 1_000_000_000_000_000

    /// A date in ms as a message key (`allocateMessageKey`'s clamp for absurd dates).
    static func key(milliseconds: Int64) -> Int64 {
        let limit = keyLimit
        let (product, overflow) = milliseconds.multipliedReportingOverflow(by: 1000)
        if overflow { return milliseconds < 0 ? -limit : limit }
        return max(-limit, min(limit, product))
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
                // Exact addresses are index seeks on message_addresses, not full-text scans;
                // within the query's date range when it has one (the index ends with the key).
                arguments.append(.text(address))
                arguments.append(.text(role))
                var sql = "m.id IN (SELECT message_id FROM message_addresses WHERE address = ? AND role = ?"
                if let lower = keyBounds?.lower {
                    sql += " AND message_id >= ?"
                    arguments.append(.integer(lower))
                }
                if let upper = keyBounds?.upper {
                    sql += " AND message_id < ?"
                    arguments.append(.integer(upper))
                }
                parts.append(sql + ")")
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

    /// A term that is one exact address in one role (`from:ann@example.org`,
    /// `to:me` with one own address): the (address, role) an index range gives.
    static func exactAddress(_ node: QueryNode, own: [String]) -> (address: String, role: String)? {
        guard case .term(let term) = node else { return nil }
        let value: String
        let role: String
        switch term {
        case .from(let v): (value, role) = (v, "from")
        case .to(let v), .deliveredTo(let v): (value, role) = (v, "to")
        case .cc(let v): (value, role) = (v, "cc")
        case .bcc(let v): (value, role) = (v, "bcc")
        default: return nil
        }
        let addresses = value.lowercased() == "me" ? own : [value]
        guard addresses.count == 1, let address = addresses.first, isFullAddress(address) else { return nil }
        return (address, role)
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
            // Gmail's own snooze is not in its API; Hudson's is (issue 41, Queue/Snoozes.swift).
            case .snoozed: return Store.snoozedSearchCondition(before: false)
            }
        case .flag(let flag):
            switch flag {
            case .unread: return carries("UNREAD")
            case .read: return "NOT " + carries("UNREAD")
            case .starred: return carries("STARRED")
            case .important: return carries("IMPORTANT")
            case .muted: return "0"  // not exposed by the Gmail API
            case .snoozed: return Store.snoozedSearchCondition(before: false)
            case .awaitingReply: return awaitingReply(sentBefore: nil)
            }
        case .has(let kind):
            switch kind {
            case .attachment: return judged("m.has_attachment = 1", unknown: Self.attachmentUnknown)
            case .userLabels, .noUserLabels:
                let exists = "EXISTS (SELECT 1 FROM \(labelSource) AS el JOIN \(Store.shownLabels) AS l ON l.account_id = m.account_id AND l.id = el.label WHERE el.message_id = m.id AND l.type = 'user')"
                return kind == .userLabels ? exists : "NOT " + exists
            case .drive: return "0"
            }
        case .filename(let name):
            let lowered = name.lowercased()
            arguments.append(.text("%" + Self.escapeLike(lowered) + "%"))
            arguments.append(.text(lowered))
            // Only a part with a name is an attachment (has:attachment, migration 014).
            return judged("EXISTS (SELECT 1 FROM attachments AS a WHERE a.message_id = m.id AND a.filename <> '' AND (lower(a.filename) LIKE ? ESCAPE '\\' OR a.mime_type LIKE '%/' || ?))",
                          unknown: Self.filenameUnknown)
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
        case .snoozedBefore(let value): return bound(Store.snoozedSearchCondition(before: true), .integer(dayStart(value)))
        case .awaitingReply(let age): return awaitingReply(sentBefore: ageCutoff(age))
        case .list(let list):
            // List-Id carries the list address with '@' as '.': dev@lists.example.org → <dev.lists.example.org>
            let dotted = list.lowercased().replacingAll("@", with: ".")
            return bound("lower(m.list_id) LIKE ? ESCAPE '\\'", .text("%" + Self.escapeLike(dotted) + "%"))
        }
    }

    /// `is:awaiting-reply` and `awaiting-reply:AGE` (issue 41): `m` is its thread's newest
    /// message (the rollup's, so one message per thread) and the account sent it (SENT),
    /// so nobody has answered since; sent before `sentBefore` (epoch ms) when given.
    private mutating func awaitingReply(sentBefore: Int64?) -> String {
        var sql = "m.id = (SELECT r.newest_message_id FROM thread_rollup AS r WHERE r.thread_id = m.thread_id AND r.account_id = m.account_id) AND "
            + carries("SENT")
        if let sentBefore { sql += " AND " + bound("m.internal_date < ?", .integer(sentBefore)) }
        return "(\(sql))"
    }

    /// A message whose `has_attachment` is still the guess from its Content-Type.
    static let attachmentUnknown = "m.attachment_known = 0"
    /// A message whose attachments' names are not stored: no body, and not known to have
    /// no attachment at all (then no `filename:` matches it, whatever the name).
    static let filenameUnknown = "(m.body_state = 0 AND NOT (m.attachment_known = 1 AND m.has_attachment = 0))"

    /// `stored`, or as `attachmentReading` asks for messages that are `unknown`.
    private func judged(_ stored: String, unknown: String) -> String {
        switch (attachmentReading, negated) {
        case (.stored, _): return stored
        case (.most, false), (.least, true): return "(\(stored) OR \(unknown))"
        case (.most, true), (.least, false): return "(\(stored) AND NOT \(unknown))"
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
