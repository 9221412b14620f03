/*!
 Splits query text into tokens, one at a time, for the parser. It decides everything
 that depends on characters rather than structure: where words end, which `name:` is an
 operator, when `-` negates, when `OR`/`AND` are keywords, and what an operator's value
 is. Positions are 1-based columns in `Character`s (grapheme clusters): the lexer works
 on `Array(text)`, so a column is an index plus one, and each character is looked at a
 bounded number of times (linear time on any input). Syntax characters are recognised
 only as whole characters, so a quote with a combining mark on it is text.
 */

/// The operators of gmail-api.md §6, by their lower-case name before the colon.
enum Operator: String, CaseIterable {
    case from, to, cc, bcc, subject, label, `in`, `is`, has, filename
    case after, before, older, newer
    case olderThan = "older_than", newerThan = "newer_than"
    case larger, smaller, size, category, rfc822msgid, list, deliveredto
    /// Hudson's own (issue 41; Gmail has no API snooze): `snoozed:before:DATE`, `awaiting-reply:3d`.
    case snoozed, awaitingReply = "awaiting-reply"

    /// No name is longer than this; longer prefixes are not looked up.
    static let longestName = 14
}

/// What follows an operator's colon.
enum OperatorValue: Equatable {
    /// `from:bob`: the rest of the word, verbatim, with the column where it starts.
    case word(String, column: Int)
    /// `from:"Bob Smith"`: the quoted text, with the column of the opening quote.
    case phrase(String, column: Int)
    /// `subject:(a b)` or `from:{a b}`: the next token opens the group.
    case group
    /// `from:` followed by a space, a closing bracket or the end.
    case missing
}

struct Token: Equatable {
    enum Kind: Equatable {
        case word(String)
        case phrase(String)
        case op(Operator, OperatorValue)
        case minus
        case or, and
        case openParen, closeParen, openBrace, closeBrace
        case end
    }

    var kind: Kind
    /// 1-based column of the token's first character.
    var column: Int
}

struct Lexer {
    private let characters: [Character]
    private var index = 0
    /// One entry per open `(` or `{`: true inside an operator's group, where words are
    /// values (`subject:(re: from:x)` searches the subject for "re:" and "from:x").
    private var literalGroups: [Bool] = []
    /// Set after an operator whose value is a group, for the bracket that comes next.
    private var nextGroupIsLiteral = false
    /// Set after a negating `-`: `-OR` excludes the word "OR" rather than dangling.
    private var afterMinus = false

    init(_ text: String) {
        characters = Array(text)
    }

    /// The column just past the last character, where end-of-query errors point.
    var endColumn: Int { characters.count + 1 }

    mutating func next() throws(QueryError) -> Token {
        while index < characters.count, Self.isSpace(characters[index]) { index += 1 }
        let keywordsAllowed = !afterMinus
        afterMinus = false
        let groupIsLiteral = nextGroupIsLiteral || (literalGroups.last ?? false)
        nextGroupIsLiteral = false
        let column = index + 1
        guard index < characters.count else { return Token(kind: .end, column: column) }

        switch characters[index] {
        case "(", "{":
            let isParen = characters[index] == "("
            literalGroups.append(groupIsLiteral)
            index += 1
            return Token(kind: isParen ? .openParen : .openBrace, column: column)
        case ")", "}":
            let isParen = characters[index] == ")"
            if !literalGroups.isEmpty { literalGroups.removeLast() }
            index += 1
            return Token(kind: isParen ? .closeParen : .closeBrace, column: column)
        case "\"":
            return Token(kind: .phrase(try quoted()), column: column)
        case "-" where negates(before: index + 1):
            index += 1
            afterMinus = true
            return Token(kind: .minus, column: column)
        default:
            return try word(column: column, keywordsAllowed: keywordsAllowed)
        }
    }

    /// A `-` negates only when a term starts right after it (`-from:x`, `-(a b)`,
    /// `-"a b"`). A lone `-`, `- x`, and `--x` are words; inside a word (`e-mail`,
    /// `x-ray`) the word lexer never gets here.
    private func negates(before next: Int) -> Bool {
        guard next < characters.count else { return false }
        let character = characters[next]
        if character == "(" || character == "{" || character == "\"" { return true }
        return !Self.isDelimiter(character) && character != "-"
    }

    /// A bare word, an `OR`/`AND` keyword, or an operator with its value. Only the first
    /// colon can make an operator, so `http://x` and `note:1` stay words, as in Gmail.
    private mutating func word(column: Int, keywordsAllowed: Bool) throws(QueryError) -> Token {
        let start = index
        let literal = literalGroups.last ?? false
        var sawColon = false
        while index < characters.count, !Self.isDelimiter(characters[index]) {
            if characters[index] == ":", !sawColon, !literal {
                sawColon = true
                if index > start, index - start <= Operator.longestName,
                   let op = Operator(rawValue: String(characters[start..<index]).lowercased()) {
                    index += 1
                    return Token(kind: .op(op, try operatorValue()), column: column)
                }
            }
            index += 1
        }
        let text = String(characters[start..<index])
        // Gmail: "`OR` must be upper case" (gmail-api.md §6); `or` and `and` are words.
        if keywordsAllowed && text == "OR" { return Token(kind: .or, column: column) }
        if keywordsAllowed && text == "AND" { return Token(kind: .and, column: column) }
        return Token(kind: .word(text), column: column)
    }

    /// The value right after an operator's colon. A bare value runs to the next space or
    /// bracket and is taken verbatim, so `from:OR`, `from:-x` and `subject:*` are values.
    private mutating func operatorValue() throws(QueryError) -> OperatorValue {
        guard index < characters.count else { return .missing }
        let character = characters[index]
        let column = index + 1
        if character == "\"" { return .phrase(try quoted(), column: column) }
        if character == "(" || character == "{" {
            nextGroupIsLiteral = true
            return .group
        }
        if Self.isDelimiter(character) { return .missing }
        let start = index
        while index < characters.count, !Self.isDelimiter(characters[index]) { index += 1 }
        return .word(String(characters[start..<index]), column: column)
    }

    /// The text between a `"` at `index` and the next `"`. Gmail has no escapes inside
    /// quotes, so a backslash is text. Control characters become spaces so that they
    /// (NUL above all) never reach the store.
    private mutating func quoted() throws(QueryError) -> String {
        let open = index
        index += 1
        var text = ""
        while index < characters.count {
            let character = characters[index]
            index += 1
            if character == "\"" { return text }
            text.append(Self.isControl(character) ? " " : character)
        }
        throw QueryError(column: open + 1, message: "unterminated quote")
    }

    /// Whitespace separates terms; so do control characters (C0, DEL, C1), which
    /// cannot be meant as search text.
    static func isSpace(_ character: Character) -> Bool {
        character.isWhitespace || isControl(character)
    }

    static func isControl(_ character: Character) -> Bool {
        guard let value = character.unicodeScalars.first?.value else { return false }
        return value < 0x20 || (0x7F...0x9F).contains(value)
    }

    /// Characters that end a bare word.
    static func isDelimiter(_ character: Character) -> Bool {
        switch character {
        case "\"", "(", ")", "{", "}": return true
        default: return isSpace(character)
        }
    }
}
