/*!
 Builds the query tree from the lexer's tokens by recursive descent, with Gmail's
 precedence (gmail-api.md §6): `OR` binds tighter than juxtaposition, so `a b OR c` is
 a AND (b OR c); explicit `AND` means the same as juxtaposition; `-` applies to the one
 term or group after it; `( )` groups; `{ }` is an OR of its items. An operator whose
 value is a group applies to every term inside (`subject:(dinner movie)`). Errors stop
 at the first problem from the left and carry its column. Nesting is capped so that
 hostile input cannot exhaust the stack here or in any recursive walk of the tree.
 */

struct Parser {
    /// Deepest allowed nesting of `( )`, `{ }` and operator groups. Real queries stay
    /// under five; every recursive walk of the tree (equality, rendering, translation)
    /// stays shallow too.
    static let maximumDepth = 100

    private var lexer: Lexer
    private var token: Token
    private var depth = 0

    init(_ text: String) {
        lexer = Lexer(text)
        token = Token(kind: .end, column: 1)
    }

    mutating func parseQuery() throws(QueryError) -> QueryNode {
        try advance()
        if token.kind == .end { return .all }
        let root = try parseConjunction(context: nil)
        switch token.kind {
        case .closeParen:
            throw QueryError(column: token.column, message: "unmatched )")
        case .closeBrace:
            throw QueryError(column: token.column, message: "unmatched }")
        default:
            return root
        }
    }

    private mutating func advance() throws(QueryError) {
        token = try lexer.next()
    }

    /// Terms side by side, or joined by `AND`, up to a closing bracket or the end.
    /// `context` is the operator of an enclosing operator group, if any.
    private mutating func parseConjunction(context: Operator?) throws(QueryError) -> QueryNode {
        var items: [QueryNode] = []
        while true {
            switch token.kind {
            case .end, .closeParen, .closeBrace:
                return items.count == 1 ? items[0] : .and(items)
            case .and:
                let and = token
                if items.isEmpty { throw dangling(and, "AND") }
                try advance()
                guard startsTerm(token.kind) else { throw dangling(and, "AND") }
            case .or:
                throw dangling(token, "OR")
            default:
                items.append(try parseDisjunction(context: context))
            }
        }
    }

    /// `x OR y OR z`.
    private mutating func parseDisjunction(context: Operator?) throws(QueryError) -> QueryNode {
        var items = [try parseUnary(context: context)]
        while token.kind == .or {
            let or = token
            try advance()
            guard startsTerm(token.kind) else { throw dangling(or, "OR") }
            items.append(try parseUnary(context: context))
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    private mutating func parseUnary(context: Operator?) throws(QueryError) -> QueryNode {
        guard token.kind == .minus else { return try parsePrimary(context: context) }
        // The lexer emits `-` only right before a term, so no check is needed here.
        try advance()
        return .not(try parsePrimary(context: context))
    }

    /// One term or group. A term is checked before the next token is read, so that the
    /// leftmost problem is the one reported.
    private mutating func parsePrimary(context: Operator?) throws(QueryError) -> QueryNode {
        let current = token
        let result: QueryNode
        switch current.kind {
        case .word(let text):
            if let op = context {
                result = .term(try Self.term(op, text, quoted: false, column: current.column))
            } else {
                result = .term(.text(text))
            }
        case .phrase(let text):
            guard Self.hasContent(text) else {
                throw QueryError(column: current.column, message: "empty quotes")
            }
            if let op = context {
                result = .term(try Self.term(op, text, quoted: true, column: current.column))
            } else {
                result = .term(.phrase(text))
            }
        case .op(let op, .group):
            try advance()
            return try parseGroup(context: op)
        case .op(let op, let value):
            result = .term(try Self.operatorTerm(op, value, column: current.column))
        case .openParen, .openBrace:
            return try parseGroup(context: context)
        default:
            throw QueryError(column: current.column, message: "expected a search term")
        }
        try advance()
        return result
    }

    /// An operator with a bare or quoted value. Inside an operator group the lexer takes
    /// `name:` as text, so operators never nest and no context is needed here.
    private static func operatorTerm(_ op: Operator, _ value: OperatorValue, column: Int) throws(QueryError) -> Term {
        let needsValue = QueryError(column: column, message: "\(op.rawValue): needs a value")
        switch value {
        case .missing, .group:
            throw needsValue
        case .word(let text, let valueColumn):
            return try term(op, text, quoted: false, column: valueColumn)
        case .phrase(let text, let valueColumn):
            guard hasContent(text) else { throw needsValue }
            return try term(op, text, quoted: true, column: valueColumn)
        }
    }

    /// `( ... )` as a conjunction or `{ ... }` as a disjunction; `token` is the opener.
    private mutating func parseGroup(context: Operator?) throws(QueryError) -> QueryNode {
        let open = token
        let isParen = open.kind == .openParen
        let (opener, closer): (String, Token.Kind) = isParen ? ("(", .closeParen) : ("{", .closeBrace)
        let pair = isParen ? "()" : "{}"
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw QueryError(column: open.column, message: "groups nested deeper than \(Self.maximumDepth)")
        }
        try advance()
        if token.kind == closer {
            throw QueryError(column: open.column, message: "empty group \(pair)")
        }
        let inner = isParen ? try parseConjunction(context: context) : try parseBraceItems(context: context)
        switch token.kind {
        case closer:
            try advance()
            depth -= 1
            return inner
        case .end:
            let what = isParen ? "unclosed parenthesis" : "unclosed brace"
            throw QueryError(column: open.column, message: what)
        default:
            let found = isParen ? "}" : ")"
            throw QueryError(column: token.column, message: "mismatched \(found): the \(opener) at column \(open.column) is still open")
        }
    }

    /// The items of `{a b c}`, any of which may match (gmail-api.md §6: `{from:a from:b}`).
    /// `OR` between items is redundant and allowed. `AND` is refused: Gmail does not say
    /// what `{a AND b c}` means, and `( )` inside the braces says it without doubt.
    private mutating func parseBraceItems(context: Operator?) throws(QueryError) -> QueryNode {
        var items: [QueryNode] = []
        while true {
            switch token.kind {
            case .end, .closeParen, .closeBrace:
                return items.count == 1 ? items[0] : .or(items)
            case .and:
                throw QueryError(column: token.column, message: "AND inside { }; group with ( ) instead")
            case .or:
                throw dangling(token, "OR")
            default:
                items.append(try parseDisjunction(context: context))
            }
        }
    }

    private func startsTerm(_ kind: Token.Kind) -> Bool {
        switch kind {
        case .word, .phrase, .op, .minus, .openParen, .openBrace: return true
        case .or, .and, .closeParen, .closeBrace, .end: return false
        }
    }

    private func dangling(_ keyword: Token, _ name: String) -> QueryError {
        QueryError(column: keyword.column, message: "\(name) needs a search term on each side")
    }

    private static func hasContent(_ text: String) -> Bool {
        text.contains { !Lexer.isSpace($0) }
    }

    /// The term for one operator value; `column` is where the value starts, for errors.
    static func term(_ op: Operator, _ value: String, quoted: Bool, column: Int) throws(QueryError) -> Term {
        do throws(ValueError) {
            switch op {
            case .from: return .from(value)
            case .to: return .to(value)
            case .cc: return .cc(value)
            case .bcc: return .bcc(value)
            case .deliveredto: return .deliveredTo(value)
            case .subject: return .subject(value, quoted: quoted)
            case .label: return .label(LabelName(value))
            case .filename: return .filename(value)
            case .list: return .list(value)
            case .rfc822msgid: return .rfc822MessageID(try messageID(value))
            case .in: return .location(try ValueReader.keyword(value, as: Term.Location.self, operator: "in"))
            case .is: return .flag(try ValueReader.keyword(value, as: Term.Flag.self, operator: "is"))
            case .has: return .has(try ValueReader.keyword(value, as: Term.HasKind.self, operator: "has"))
            case .category:
                return .category(try ValueReader.keyword(value, as: Term.Category.self, operator: "category"))
            // Gmail pairs `older:` with `before:` and `newer:` with `after:` (gmail-api.md §6).
            case .after, .newer: return .after(try ValueReader.date(value))
            case .before, .older: return .before(try ValueReader.date(value))
            case .olderThan: return .olderThan(try ValueReader.relativeAge(value))
            case .newerThan: return .newerThan(try ValueReader.relativeAge(value))
            // Gmail's `size:` finds messages larger than the size, like `larger:`.
            case .larger, .size: return .larger(try ValueReader.size(value))
            case .smaller: return .smaller(try ValueReader.size(value))
            case .snoozed:
                guard value.lowercased().hasPrefix("before:") else {
                    throw ValueError(message: "snoozed: takes before:DATE (snoozed:before:2026-12-08)")
                }
                return .snoozedBefore(try ValueReader.date(String(value.dropFirst("before:".count))))
            case .awaitingReply: return .awaitingReply(try ValueReader.relativeAge(value))
            }
        } catch {
            throw QueryError(column: column, message: error.message)
        }
    }

    /// A Message-ID with its optional angle brackets removed: users paste
    /// `<CAF=abc@mail.gmail.com>` from headers (gmail-api.md §6), the store keeps the bare id.
    private static func messageID(_ value: String) throws(ValueError) -> String {
        guard value.first == "<", value.last == ">", value.count >= 2 else { return value }
        let bare = String(value.dropFirst().dropLast())
        if !hasContent(bare) { throw ValueError(message: "rfc822msgid: needs a value") }
        return bare
    }
}
