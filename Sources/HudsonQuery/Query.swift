/*!
 The abstract syntax of a Gmail search (gmail-api.md §6): a tree of and/or/not over
 terms, where each term is one full-text word or phrase or one `operator:value`. The
 tree is the hand-off to the store's translator, so it holds only validated, typed
 values (dates without time zones, sizes in bytes, keyword values as enums) and says
 nothing about SQL. `Query.parse` builds it; `simplified()` normalises it.
 */

/// A parsed search.
public struct Query: Equatable, Sendable {
    /// The tree as written: groups the user typed stay nested; call `simplified()` to flatten.
    public var root: QueryNode

    public init(root: QueryNode) {
        self.root = root
    }

    /// Parses Gmail's search syntax. A query of only whitespace (or control
    /// characters) is `.all`, "match everything", not an error.
    public static func parse(_ text: String) throws(QueryError) -> Query {
        var parser = Parser(text)
        return Query(root: try parser.parseQuery())
    }

    /// The same query with nested and/or flattened, one-child groups collapsed and
    /// double negations removed.
    public func simplified() -> Query {
        Query(root: root.simplified())
    }

    /// True when the query names spam or trash anywhere (`in:spam`, `in:trash`,
    /// `in:anywhere`, `label:spam`, `label:trash`), negated or not. Gmail leaves spam and
    /// trash out of a search unless the query names them (gmail-api.md §6, `in:anywhere`),
    /// so the translator adds that default scope only when this is false.
    public var mentionsSpamOrTrash: Bool {
        root.contains { term in
            switch term {
            case .location(let location):
                return location == .spam || location == .trash || location == .anywhere
            case .label(let name):
                return name.normalized == "spam" || name.normalized == "trash"
            default:
                return false
            }
        }
    }
}

extension Query {
    /// True when the query looks words or phrases up in message text (a bare word or a
    /// quoted phrase, negated or not), which includes bodies: a message whose body is not
    /// stored can be missed by it (hd-search says how many there are).
    public var searchesText: Bool {
        root.contains { term in
            switch term {
            case .text, .phrase: return true
            default: return false
            }
        }
    }
}

/// One node of the query tree.
public indirect enum QueryNode: Equatable, Sendable {
    /// Matches every message: the query was empty.
    case all
    case term(Term)
    /// Every child matches. The parser never builds one with fewer than two children.
    case and([QueryNode])
    /// At least one child matches. The parser never builds one with fewer than two children.
    case or([QueryNode])
    case not(QueryNode)

    /// True when some term in the tree satisfies `predicate`.
    public func contains(where predicate: (Term) -> Bool) -> Bool {
        switch self {
        case .all:
            return false
        case .term(let term):
            return predicate(term)
        case .and(let children), .or(let children):
            return children.contains { $0.contains(where: predicate) }
        case .not(let inner):
            return inner.contains(where: predicate)
        }
    }

    /// Flattens `and` inside `and` and `or` inside `or`, collapses one-child groups,
    /// removes `not(not(x))`, drops `all` from an `and` and lets it absorb an `or`.
    /// The result means the same as the input; the translator emits less SQL for it.
    public func simplified() -> QueryNode {
        switch self {
        case .all, .term:
            return self
        case .not(let inner):
            let simple = inner.simplified()
            if case .not(let doubled) = simple { return doubled }
            return .not(simple)
        case .and(let children):
            var flat: [QueryNode] = []
            for child in children {
                switch child.simplified() {
                case .all: continue
                case .and(let grandchildren): flat.append(contentsOf: grandchildren)
                case let other: flat.append(other)
                }
            }
            if flat.isEmpty { return .all }
            return flat.count == 1 ? flat[0] : .and(flat)
        case .or(let children):
            var flat: [QueryNode] = []
            for child in children {
                switch child.simplified() {
                case .all: return .all
                case .or(let grandchildren): flat.append(contentsOf: grandchildren)
                case let other: flat.append(other)
                }
            }
            // An empty `or` matches nothing and has no simpler spelling; keep it.
            return flat.count == 1 ? flat[0] : .or(flat)
        }
    }
}

/// One search condition. Strings are kept as typed (after unquoting); matching rules
/// such as case-folding and `from:me` belong to the translator.
public enum Term: Equatable, Sendable {
    /// A bare word: full-text search, Gmail may stem it.
    case text(String)
    /// A "quoted phrase": the words in this order.
    case phrase(String)
    case from(String)
    case to(String)
    case cc(String)
    case bcc(String)
    case deliveredTo(String)
    /// `subject:`; `quoted` when the value was a "quoted phrase" rather than a bare word.
    case subject(String, quoted: Bool)
    case label(LabelName)
    /// `in:`
    case location(Location)
    /// `is:`
    case flag(Flag)
    case has(HasKind)
    case filename(String)
    /// `after:` and its synonym `newer:`.
    case after(DateValue)
    /// `before:` and its synonym `older:`.
    case before(DateValue)
    case olderThan(RelativeAge)
    case newerThan(RelativeAge)
    /// `larger:` and `size:` (Gmail's `size:` means "larger than"), in bytes.
    case larger(Int64)
    /// `smaller:`, in bytes.
    case smaller(Int64)
    case category(Category)
    /// `rfc822msgid:` without its angle brackets.
    case rfc822MessageID(String)
    case list(String)
    /// `snoozed:before:DATE` (Hudson's own, issue 41): a live snooze waking before the day.
    case snoozedBefore(DateValue)
    /// `awaiting-reply:AGE` (Hudson's own, issue 41): `is:awaiting-reply` sent longer ago than AGE.
    case awaitingReply(RelativeAge)
}
