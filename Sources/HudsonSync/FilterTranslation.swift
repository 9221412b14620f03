/*!
 A Gmail filter (gmail-api.md §2.14) as a Hudson rule: its criteria as one query in
 Gmail's own language, parsed by the one parser (hudson-query(7)), and its label changes
 as hd-mark actions. What cannot be done locally is said, not guessed: a `forward`
 (Gmail forwards arriving mail; Hudson sends nothing for a filter), "never send to spam"
 (a decision taken on arrival), and a criterion that does not parse. A criterion that
 cannot be translated faithfully (a size Gmail's reference does not allow) makes the
 whole filter not replayed, with a note: leaving the term out would select more mail than
 the filter does, never less.
 */
import HudsonGmail
import HudsonQuery
import HudsonStore

/// One filter, translated.
public struct FilterTranslation: Equatable, Sendable {
    public var filterID: String
    /// The query the criteria became (empty when there were none).
    public var queryText: String
    public var actions: [TriageAction]
    /// What is not replayed locally, one sentence each.
    public var notes: [String]
    /// The rule to apply; nil when the query does not parse, or nothing is left to do.
    public var rule: MailRule?
}

public enum FilterTranslator {
    /// Translates `filter`; `labelName` gives the name of a label the store has, by its
    /// id, and nil for a label it does not have (the filter is then not applied).
    public static func translate(_ filter: GmailFilter, labelName: (String) -> String?) -> FilterTranslation {
        var notes: [String] = []
        var unknown: [String] = []
        func name(_ id: String) -> String {
            if let name = labelName(id) { return name }
            unknown.append(id)
            return id
        }
        let queryText: String
        var untranslatable: String?
        switch query(filter.criteria) {
        case .success(let text): queryText = text
        case .failure(let reason):
            queryText = ""
            untranslatable = reason.text
        }
        var actions: [TriageAction] = []
        let removes = filter.action.removeLabelIds ?? []
        for id in filter.action.addLabelIds ?? [] {
            switch id {
            case "INBOX": actions.append(.unarchive)
            case "UNREAD": actions.append(.unread)
            case "STARRED": actions.append(.star)
            case "TRASH": actions.append(.trash)
            case "SPAM": actions.append(.spam)
            case "IMPORTANT": actions.append(.important)
            default: actions.append(.addLabel(name(id)))
            }
        }
        for id in removes {
            switch id {
            case "INBOX": actions.append(.archive)
            case "UNREAD": actions.append(.read)
            case "STARRED": actions.append(.unstar)
            case "TRASH": actions.append(.untrash)
            // "Never send it to Spam" acts on arrival; spam is outside a replay's search.
            case "SPAM": notes.append("never send to spam: Gmail decides it on arrival; nothing to replay")
            case "IMPORTANT": actions.append(.unimportant)
            default: actions.append(.removeLabel(name(id)))
            }
        }
        if let forward = filter.action.forward, !forward.isEmpty {
            notes.append("forward to \(forward): Gmail forwards arriving mail only; Hudson does not send mail for a filter")
        }
        var rule: MailRule?
        for id in unknown {
            notes.append("label \(id) is not in the store (hd-sync brings Gmail's labels)")
        }
        if let untranslatable {
            // Not applied: without the term the query would select more than the filter.
            notes.append(untranslatable)
        } else if !unknown.isEmpty {
            // Not applied: an action on a label the store does not know cannot be queued.
        } else if queryText.isEmpty {
            notes.append("no criteria Hudson can evaluate")
        } else {
            do {
                let query = try Query.parse(queryText)
                if !actions.isEmpty {
                    rule = MailRule(name: "filter:\(filter.id)", queryText: queryText, query: query, actions: actions)
                }
            } catch {
                notes.append("the criteria do not parse as a query (column \(error.column): \(error.message))")
            }
        }
        return FilterTranslation(filterID: filter.id, queryText: queryText, actions: actions, notes: notes, rule: rule)
    }

    /// Why criteria cannot become a query that selects exactly what the filter does.
    struct Untranslatable: Error {
        var text: String
    }

    /// The criteria as one query: each given criterion a term, all of them required; a
    /// criterion that cannot be a term fails the whole query (a query without it would
    /// be wider than the filter).
    static func query(_ criteria: GmailFilterCriteria) -> Result<String, Untranslatable> {
        var terms: [String] = []
        if let from = present(criteria.from) { terms.append("from:(\(from))") }
        // `to` covers To, Cc and Bcc (FilterCriteria, [disc]).
        if let to = present(criteria.to) { terms.append("{to:(\(to)) cc:(\(to)) bcc:(\(to))}") }
        // A case-insensitive phrase of the subject.
        if let subject = present(criteria.subject) {
            terms.append(subject.contains("\"") ? "subject:(\(subject))" : "subject:\"\(subject)\"")
        }
        if let query = present(criteria.query) { terms.append("(\(query))") }
        if let negated = present(criteria.negatedQuery) { terms.append("-(\(negated))") }
        if criteria.hasAttachment == true { terms.append("has:attachment") }
        // excludeChats: Gmail's API lists no chats, so the store holds none: nothing to add.
        switch sizeTerm(criteria) {
        case .success(let term?): terms.append(term)
        case .success(nil): break
        case .failure(let reason): return .failure(reason)
        }
        return .success(terms.joined(separator: " "))
    }

    /// `size` and `sizeComparison` as one term, nil when the filter has no size criterion.
    /// FilterCriteria ([disc]): `size` is the whole RFC 822 message in bytes, an int32, and
    /// `sizeComparison` is `unspecified`, `larger` or `smaller`; proto3 JSON leaves out a
    /// zero or `unspecified` value (gmail-api.md §1). A size below 0 or above int32, a size
    /// without a comparison, or a comparison of another name is no criterion Gmail
    /// documents: the filter is not replayed rather than replayed without it.
    static func sizeTerm(_ criteria: GmailFilterCriteria) -> Result<String?, Untranslatable> {
        let comparison = criteria.sizeComparison ?? "unspecified"
        guard let size = criteria.size, size != 0 else {
            if comparison == "unspecified" { return .success(nil) }
            // "larger than nothing given": proto3's absent 0, but no filter Gmail makes.
            return .failure(Untranslatable(text: "size criterion \(comparison) with no size: not replayed (it would select more)"))
        }
        guard (1...Int64(Int32.max)).contains(size) else {
            return .failure(Untranslatable(text: "size criterion \(size) is not a message size: not replayed (it would select more)"))
        }
        switch comparison {
        case "larger": return .success("larger:\(size)")
        case "smaller": return .success("smaller:\(size)")
        case "unspecified":
            return .failure(Untranslatable(text: "size criterion \(size) with no comparison: not replayed (it would select more)"))
        default:
            return .failure(Untranslatable(
                text: "size comparison \(comparison) is not larger or smaller: not replayed (it would select more)"))
        }
    }

    private static func present(_ value: String?) -> String? {
        guard let value else { return nil }
        let trimmed = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        return trimmed.isEmpty ? nil : trimmed
    }
}
