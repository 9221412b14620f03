/*!
 Every way a query can fail, each with the exact column and message the user sees
 (CONTRACT.md: exit 65, "the message points at the column"). Columns are 1-based and
 count characters (grapheme clusters), not bytes or scalars.
 */

import HudsonQuery
import Testing

@Suite("Errors")
struct ErrorTests {
    @Test("An unterminated quote points at its opening quote", arguments: [
        (#""abc"#, 1), (#"a "b"#, 3), (#"from:"bob"#, 6), (#""a" "b"#, 5), (#"subject:(a "b)"#, 12),
    ])
    func unterminatedQuote(_ query: String, _ column: Int) {
        #expect(parseError(query) == QueryError(column: column, message: "unterminated quote"))
    }

    @Test("An unclosed parenthesis points at the opening one still open", arguments: [
        ("(a b", 1), ("a (b (c)", 3), ("-(a", 2), ("subject:(a b", 9), ("((a)", 1),
    ])
    func unclosedParenthesis(_ query: String, _ column: Int) {
        #expect(parseError(query) == QueryError(column: column, message: "unclosed parenthesis"))
    }

    @Test("An unclosed brace points at the opening one still open", arguments: [("{a b", 1), ("x {a {b}", 3), ("from:{a", 6)])
    func unclosedBrace(_ query: String, _ column: Int) {
        #expect(parseError(query) == QueryError(column: column, message: "unclosed brace"))
    }

    @Test("A closing bracket with nothing open is unmatched")
    func unmatchedClosers() {
        #expect(parseError("a)") == QueryError(column: 2, message: "unmatched )"))
        #expect(parseError(")") == QueryError(column: 1, message: "unmatched )"))
        #expect(parseError("(a) b)") == QueryError(column: 6, message: "unmatched )"))
        #expect(parseError("a}") == QueryError(column: 2, message: "unmatched }"))
        #expect(parseError("} a") == QueryError(column: 1, message: "unmatched }"))
    }

    @Test("A closing bracket of the wrong kind names the one still open")
    func mismatchedClosers() {
        #expect(parseError("(a}") == QueryError(column: 3, message: "mismatched }: the ( at column 1 is still open"))
        #expect(parseError("x {a)") == QueryError(column: 5, message: "mismatched ): the { at column 3 is still open"))
    }

    @Test("An operator without a value points at the operator", arguments: [
        ("from:", 1, "from"), ("a from: b", 3, "from"), ("x subject:)", 3, "subject"),
        (#"subject:"""#, 1, "subject"), (#"label:"  ""#, 1, "label"), ("(in:)", 2, "in"),
        ("Older_Than:", 1, "older_than"),
    ])
    func missingValue(_ query: String, _ column: Int, _ name: String) {
        #expect(parseError(query) == QueryError(column: column, message: "\(name): needs a value"))
    }

    @Test("rfc822msgid: with only angle brackets has no value")
    func emptyMessageID() {
        #expect(parseError("rfc822msgid:<>") == QueryError(column: 13, message: "rfc822msgid: needs a value"))
    }

    @Test("Empty quotes are refused where a phrase was meant")
    func emptyQuotes() {
        #expect(parseError(#""""#) == QueryError(column: 1, message: "empty quotes"))
        #expect(parseError(#"a "  ""#) == QueryError(column: 3, message: "empty quotes"))
        #expect(parseError(#"subject:(a "")"#) == QueryError(column: 12, message: "empty quotes"))
    }

    @Test("An empty group points at its opening bracket")
    func emptyGroups() {
        #expect(parseError("()") == QueryError(column: 1, message: "empty group ()"))
        #expect(parseError("a ( )") == QueryError(column: 3, message: "empty group ()"))
        #expect(parseError("a {}") == QueryError(column: 3, message: "empty group {}"))
        #expect(parseError("subject:()") == QueryError(column: 9, message: "empty group ()"))
        #expect(parseError("-()") == QueryError(column: 2, message: "empty group ()"))
    }

    @Test("A dangling OR points at the OR", arguments: [
        ("OR", 1), ("OR a", 1), ("a OR", 3), ("a OR OR b", 3), ("a OR )", 3), ("(OR a)", 2), ("{OR a}", 2),
        ("a OR AND b", 3), ("from:(alice OR)", 13), ("a b OR", 5),
    ])
    func danglingOr(_ query: String, _ column: Int) {
        #expect(parseError(query) == QueryError(column: column, message: "OR needs a search term on each side"))
    }

    @Test("A dangling AND points at the AND", arguments: [
        ("AND", 1), ("AND a", 1), ("a AND", 3), ("a AND AND b", 3), ("a AND OR b", 3), ("(a AND)", 4),
    ])
    func danglingAnd(_ query: String, _ column: Int) {
        #expect(parseError(query) == QueryError(column: column, message: "AND needs a search term on each side"))
    }

    @Test("AND inside braces is refused")
    func andInsideBraces() {
        #expect(parseError("{a AND b}") == QueryError(column: 4, message: "AND inside { }; group with ( ) instead"))
    }

    @Test("An unknown keyword value points at the value and lists the choices")
    func unknownKeywordValues() {
        #expect(parseError("in:bogus") == QueryError(
            column: 4,
            message: "unknown in: value; expected one of inbox, sent, trash, spam, anywhere, drafts, starred, important, chats, snoozed"))
        #expect(parseError("is:unstarred") == QueryError(
            column: 4, message: "unknown is: value; expected one of unread, read, starred, important, muted, snoozed, awaiting-reply"))
        #expect(parseError("x has:pdf") == QueryError(
            column: 7, message: "unknown has: value; expected one of attachment, drive, userlabels, nouserlabels"))
        #expect(parseError("category:news") == QueryError(
            column: 10,
            message: "unknown category: value; expected one of primary, social, promotions, updates, forums, reservations, purchases"))
    }

    @Test("A bad value inside quotes or a group points at that value")
    func valueColumns() {
        #expect(parseError(#"a in:"bogus""#)?.column == 6)
        #expect(parseError("in:(inbox OR bogus)")?.column == 14)
        #expect(parseError("after:{2024/01/01 2024/02/30}")?.column == 19)
    }

    @Test("Value errors point at the value, after the operator's colon")
    func valueErrorColumns() {
        #expect(parseError("x after:2024/13/01") == QueryError(column: 9, message: "no such date"))
        #expect(parseError("older_than:2w")?.column == 12)
        #expect(parseError("smaller:10G")?.column == 9)
    }

    @Test("Columns count characters, not bytes or scalars")
    func columnsAreCharacters() {
        #expect(parseError(#"café "x"#)?.column == 6)
        #expect(parseError("👍🏽 (")?.column == 3)
        #expect(parseError("🇫🇷🇩🇪 )")?.column == 4)
        #expect(parseError("e\u{301}e\u{301} in:x")?.column == 7)
    }

    @Test("The leftmost problem is reported")
    func leftmostError() {
        #expect(parseError(#") "abc"#) == QueryError(column: 1, message: "unmatched )"))
        #expect(parseError(#"in:x "abc"#)?.column == 4)
        #expect(parseError(#"a OR "b"#) == QueryError(column: 6, message: "unterminated quote"))
        #expect(parseError(#"AND "b"#) == QueryError(column: 1, message: "AND needs a search term on each side"))
    }

    @Test("An error describes itself as column and message")
    func errorDescription() {
        #expect(QueryError(column: 7, message: "unclosed parenthesis").description == "column 7: unclosed parenthesis")
        #expect(parseError("a b (c")?.description == "column 5: unclosed parenthesis")
    }
}
