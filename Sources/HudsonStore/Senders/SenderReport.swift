/*!
 `hd-senders`' report (issue 42): the mail a query selects (through the one query
 translator), grouped by list (`List-Id`, RFC 2919) or else by sender address, with what
 the user did with it: read, left unread out of the inbox, starred or replied to. Mail
 the account sent (SENT) is not counted: it is not mail anyone sent the user.

 Each group's unsubscribe offer is that of its newest message that carries
 `List-Unsubscribe` and that the group's own domain signed: Gmail's verdict has a DKIM
 pass for a domain aligned with both the message's From and the group's identity (the
 List-Id, RFC 2919, whose namespace is the list owner's domain; for an address, its
 domain). Anyone can write a List-Id or a From: without this, a newer message signed by
 another domain, or not signed at all, would lend the group its offer (RFC 8058 §4 asks
 that the offer be the signer's). UnsubscribeOffer.swift then decides which methods are
 safe, with that message's From address. Groups are per account: two accounts on one
 list unsubscribe each with its own mail.
 */
import HudsonQuery
import SQLite

public struct SenderSummary: Equatable, Sendable {
    public enum Kind: String, Sendable { case address, list }

    public var kind: Kind
    /// The address, or the list's id (inside List-Id's angle brackets), lowercased.
    public var key: String
    /// The sender's name, or the list's description, from the newest message.
    public var name: String?
    public var messages: Int
    public var threads: Int
    public var read: Int
    public var archivedUnread: Int
    public var starredOrReplied: Int
    /// Epoch ms of the newest message.
    public var lastSeen: Int64
    public var listHeaders: ListHeaders
    /// The newest message that carries List-Unsubscribe, if any (its Gmail id and account).
    public var offeringMessage: String?
    /// That message's From address, lowercased (the domain its offer must align with).
    public var offeringFrom: String? = nil
    public var accountID: Int64
    /// When the group's newest recorded unsubscribe was made (`--after-unsubscribe`).
    public var unsubscribedAt: Int64?
    /// Messages of the group whose list headers are not known (migration 035): with none
    /// offering, the group's offer is unknown rather than none.
    public var headersUnknown: Int
    /// The group's mail offers List-Unsubscribe, but none of it signed by the group's own
    /// domain (`vouches`): no offer is taken from it.
    public var offersUnvouched = false

    /// The domain the group is known by: the List-Id (RFC 2919: a list-label in its
    /// owner's domain), or the address's domain.
    public var identityDomain: String {
        kind == .list ? key : String(key.split(separator: "@").last ?? "")
    }

    /// Whether a message of the group with these list headers and From may give the
    /// group's offer: Gmail found a DKIM signature valid for a domain aligned with both
    /// the From address and the group's identity (UnsubscribeOffer.vouched).
    public func vouches(_ headers: ListHeaders, from: String?) -> Bool {
        guard let from else { return false }
        return UnsubscribeOffer.vouched(headers, from: from, identity: identityDomain)
    }

    /// The query term that selects this group's mail: `list:ID` or `from:ADDRESS`.
    /// The group as `unsubscribes.sender` and the SQL name it: an address, or `list:ID`.
    public var groupKey: String { kind == .list ? "list:" + key : key }

    /// A key with anything but letters, digits and `@._+-=` is quoted (its quotes dropped),
    /// so the term stays one term of the query language.
    public var queryTerm: String {
        let plain = key.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "@._+-=".unicodeScalars.contains($0))
        }
        let value = plain ? key : "\"" + key.filter { $0 != "\"" && $0 != "\\" } + "\""
        return (kind == .list ? "list:" : "from:") + value
    }
}

public enum SenderSort: String, Sendable, CaseIterable {
    /// Most messages first.
    case volume
    /// Least read first (then most messages).
    case read
    /// Most recent first.
    case lastSeen = "last-seen"
}

extension Store {
    /// The groups of the mail `query` selects, sorted, at most `limit`.
    public func senders(matching query: Query, options: SearchOptions, sort: SenderSort, limit: Int) throws -> [SenderSummary] {
        try db.read {
            let compiled = try compileSearch(query, options: options)
            let statement = try db.prepare("""
                \(Self.senderGroupsSQL(selection: "SELECT m.id \(compiled.everyMatchFromAndWhere)", labels: compiled.labelSource))
                 ORDER BY \(Self.senderOrder(sort))
                 LIMIT ?
                """)
            var summaries = try statement.map(compiled.arguments + [.integer(Int64(min(limit, Int(Int64.max))))]) { senderSummary($0) }
            try vouchOffers(&summaries, selection: "SELECT m.id \(compiled.everyMatchFromAndWhere)",
                            arguments: compiled.arguments, labels: compiled.labelSource)
            return summaries
        }
    }

    /// Groups whose unsubscribe was recorded (any state that may have reached the sender:
    /// not a mailto one whose outbox entry was cancelled or failed) and that sent mail
    /// after it, newest unsubscribe first.
    public func sendersAfterUnsubscribe(accountID: Int64?, limit: Int) throws -> [SenderSummary] {
        try db.read {
            let labels = EffectiveLabels.source(queueIsEmpty: try queueIsEmpty())
            // The mail of each recorded sender after its newest unsubscribe.
            let selection = """
                SELECT m.id FROM messages AS m
                  JOIN (SELECT u.account_id, u.sender, max(u.created_at) AS at FROM unsubscribes AS u
                         WHERE \(Self.unsubscribeMayHaveReachedSQL) GROUP BY u.account_id, u.sender) AS u
                    ON u.account_id = m.account_id AND m.internal_date > u.at
                 WHERE (?1 IS NULL OR m.account_id = ?1)
                   AND u.sender = \(Self.senderKeySQL)
                """
            let statement = try db.prepare("""
                \(Self.senderGroupsSQL(selection: selection, labels: labels, unsubscribedAt: true))
                 ORDER BY 13 DESC, s.n_messages DESC
                 LIMIT ?2
                """)
            var summaries = try statement.map([accountID, Int64(min(limit, Int(Int64.max)))]) { senderSummary($0) }
            try vouchOffers(&summaries, selection: selection, arguments: [accountID], labels: labels)
            return summaries
        }
    }

    /// Gives each group the offer of its newest offering message that the group's own
    /// domain signed (`SenderSummary.vouches`). The grouping took the newest offering
    /// message whoever signed it; only for a group where that one does not qualify are
    /// the older ones read, newest first, from the same selection (`arguments` are the
    /// selection's; one more, the keys, is bound after them). A group with none keeps no
    /// offer at all.
    func vouchOffers(_ summaries: inout [SenderSummary], selection: String, arguments: [any SQLiteBindable],
                     labels: String) throws {
        var unresolved: [String: [Int]] = [:]
        for (index, summary) in summaries.enumerated() where summary.listHeaders.unsubscribe != nil
            && !summary.vouches(summary.listHeaders, from: summary.offeringFrom) {
            summaries[index].listHeaders = ListHeaders()
            summaries[index].offeringMessage = nil
            summaries[index].offeringFrom = nil
            summaries[index].offersUnvouched = true
            unresolved["\(summary.accountID) \(summary.groupKey)", default: []].append(index)
        }
        guard !unresolved.isEmpty else { return }
        let keys = Set(unresolved.keys.map { String($0.drop { $0 != " " }.dropFirst()) })
        let statement = try db.prepare("""
            SELECT k.key, m.account_id, m.list_unsubscribe, m.list_unsubscribe_post, m.authentication_results, m.dkim_signatures,
                   m.gmail_id, (SELECT lower(a.address) FROM message_addresses AS a WHERE a.message_id = m.id AND a.role = 'from' LIMIT 1)
              FROM (SELECT \(Self.senderKeySQL) AS key, m.id FROM messages AS m
                     WHERE m.id IN (\(selection)) AND m.list_unsubscribe IS NOT NULL
                       AND NOT \(EffectiveLabels.carries(messageColumn: "m.id", label: "'SENT'", source: labels))
                     LIMIT -1) AS k
              JOIN messages AS m ON m.id = k.id
             WHERE k.key IN (SELECT value FROM json_each(?))
             ORDER BY m.id DESC
            """)
        try statement.bind(arguments + [Self.jsonArray(keys.sorted()) as any SQLiteBindable])
        defer { statement.reset() }
        while !unresolved.isEmpty, try statement.step() {
            let row = statement.currentRow
            let group = "\(row.int64(1)) \(row.string(0))"
            guard let indexes = unresolved[group] else { continue }
            let headers = ListHeaders(unsubscribe: row.optionalString(2), unsubscribePost: row.optionalString(3),
                                      authenticationResults: row.optionalString(4), dkimSignatures: row.optionalString(5))
            let from = row.optionalString(7)
            guard summaries[indexes[0]].vouches(headers, from: from) else { continue }
            for index in indexes {
                summaries[index].listHeaders = headers
                summaries[index].offeringMessage = row.optionalString(6)
                summaries[index].offeringFrom = from
                summaries[index].offersUnvouched = false
            }
            unresolved[group] = nil
        }
    }

    /// What a group is: the list's id (inside List-Id's angle brackets) as `list:ID`, else
    /// the From address, both lowercased; NULL for a message with neither.
    static let senderKeySQL = """
        (CASE WHEN m.list_id IS NOT NULL AND trim(m.list_id) <> ''
              THEN 'list:' || lower(trim(CASE WHEN instr(m.list_id, '<') > 0 AND instr(m.list_id, '>') > instr(m.list_id, '<')
                                              THEN substr(m.list_id, instr(m.list_id, '<') + 1,
                                                          instr(m.list_id, '>') - instr(m.list_id, '<') - 1)
                                              ELSE m.list_id END))
              ELSE (SELECT lower(a.address) FROM message_addresses AS a WHERE a.message_id = m.id AND a.role = 'from' LIMIT 1)
         END)
        """

    /// Columns: 0 key, 1 read, 2 archived unread, 3 messages, 4 threads, 5 starred or
    /// replied, 6 last seen, 7-10 the offering message's list headers, 11 its Gmail id,
    /// 12 the newest unsubscribe, 13 the name, 14 the account (groups are per account), 15
    /// how many messages' list headers are unknown, 16 the offering message's From address.
    ///
    /// The per-message row is computed once: its `LIMIT -1` (no limit) keeps SQLite from
    /// flattening it into the grouping, which evaluated the key three times and the unread
    /// test twice per message (SQLite's query flattener, rule 9). A group is of one
    /// account, so its threads are counted by id alone, not by a text joined for each
    /// message. Together: 770 to 505 ms at 1,000,000 messages, whole process (docs/performance.md).
    static func senderGroupsSQL(selection: String, labels: String, unsubscribedAt: Bool = false) -> String {
        func carries(_ label: String) -> String {
            EffectiveLabels.carries(messageColumn: "m.id", label: "'\(label)'", source: labels)
        }
        return """
            SELECT s.key, s.n_read, s.n_archived_unread, s.n_messages, s.n_threads, s.n_engaged, s.last_seen,
                   o.list_unsubscribe, o.list_unsubscribe_post, o.authentication_results, o.dkim_signatures, o.gmail_id,
                   \(unsubscribedAt ? "(SELECT max(created_at) FROM unsubscribes AS u WHERE u.sender = s.key AND u.account_id = n.account_id)" : "NULL"),
                   CASE WHEN s.key LIKE 'list:%'
                        THEN nullif(trim(substr(n.list_id, 1, instr(n.list_id || '<', '<') - 1), ' "'), '')
                        ELSE (SELECT a.name FROM message_addresses AS a WHERE a.message_id = n.id AND a.role = 'from' LIMIT 1) END,
                   n.account_id, s.n_unknown,
                   (SELECT lower(a.address) FROM message_addresses AS a WHERE a.message_id = o.id AND a.role = 'from' LIMIT 1)
              FROM (SELECT key, sum(NOT headers_known) AS n_unknown, sum(NOT unread) AS n_read, sum(unread AND NOT inbox) AS n_archived_unread,
                           count(*) AS n_messages, count(DISTINCT thread_id) AS n_threads,
                           sum(starred OR replied) AS n_engaged, max(internal_date) AS last_seen,
                           max(id) AS newest_id, max(CASE WHEN offers THEN id END) AS offer_id
                      FROM (SELECT \(senderKeySQL) AS key, m.id, m.account_id, m.thread_id, m.internal_date,
                                   m.list_unsubscribe IS NOT NULL AS offers, m.list_headers_known AS headers_known,
                                   \(carries("UNREAD")) AS unread, \(carries("INBOX")) AS inbox, \(carries("STARRED")) AS starred,
                                   EXISTS (SELECT 1 FROM messages AS r
                                            WHERE r.thread_id = m.thread_id AND r.account_id = m.account_id
                                              AND r.internal_date > m.internal_date
                                              AND EXISTS (SELECT 1 FROM \(labels) AS rl WHERE rl.message_id = r.id AND rl.label = 'SENT')) AS replied
                              FROM messages AS m
                             WHERE m.id IN (\(selection))
                               AND NOT \(carries("SENT"))
                             LIMIT -1)
                     WHERE key IS NOT NULL
                     GROUP BY account_id, key) AS s
              JOIN messages AS n ON n.id = s.newest_id
              LEFT JOIN messages AS o ON o.id = s.offer_id
            """
    }

    static func senderOrder(_ sort: SenderSort) -> String {
        switch sort {
        case .volume: return "s.n_messages DESC, s.last_seen DESC, s.key"
        case .read: return "CAST(s.n_read AS REAL) / s.n_messages, s.n_messages DESC, s.key"
        case .lastSeen: return "s.last_seen DESC, s.n_messages DESC, s.key"
        }
    }

    func senderSummary(_ row: Row) -> SenderSummary {
        let key = row.string(0)
        let isList = key.hasPrefix("list:")
        return SenderSummary(
            kind: isList ? .list : .address, key: isList ? String(key.dropFirst(5)) : key, name: row.optionalString(13),
            messages: row.int(3), threads: row.int(4), read: row.int(1), archivedUnread: row.int(2),
            starredOrReplied: row.int(5), lastSeen: row.int64(6),
            listHeaders: ListHeaders(unsubscribe: row.optionalString(7), unsubscribePost: row.optionalString(8),
                                     authenticationResults: row.optionalString(9), dkimSignatures: row.optionalString(10)),
            offeringMessage: row.optionalString(11), offeringFrom: row.optionalString(16),
            accountID: row.int64(14), unsubscribedAt: row.optionalInt64(12), headersUnknown: row.int(15))
    }
}
