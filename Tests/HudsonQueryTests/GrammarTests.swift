/*!
 The shape of the language without operators: words, phrases, juxtaposition, `OR`,
 `AND`, `( )`, `{ }` and `-`, with Gmail's precedence (gmail-api.md §6), its case rule
 for keywords and its hyphen rules. Trees are compared as parsed, not simplified.
 */

import HudsonQuery
import Testing

@Suite("Grammar")
struct GrammarTests {
    @Test("An empty or blank query matches everything", arguments: ["", " ", "\t\n  ", "\u{0}\u{1}\u{1F}", "\r\n"])
    func blankMatchesAll(_ text: String) throws {
        #expect(try tree(text) == .all)
    }

    @Test("A bare word is a full-text term")
    func bareWord() throws {
        #expect(try tree("hello") == word("hello"))
        #expect(try tree("  hello  ") == word("hello"))
    }

    @Test("A quoted string is one phrase, spaces and all")
    func quotedPhrase() throws {
        #expect(try tree(#""dinner and a movie""#) == phrase("dinner and a movie"))
        #expect(try tree(#""  padded  ""#) == phrase("  padded  "))
    }

    @Test("Quotes keep operators, keywords and brackets as text")
    func quotesAreLiteral() throws {
        #expect(try tree(#""from:bob OR (x) {y} -z""#) == phrase("from:bob OR (x) {y} -z"))
    }

    @Test("A backslash has no special meaning inside quotes")
    func noEscapesInQuotes() throws {
        #expect(try tree(#""a\" b"#) == .and([phrase(#"a\"#), word("b")]))
    }

    @Test("Terms side by side are ANDed")
    func juxtapositionIsAnd() throws {
        #expect(try tree("a b c") == .and([word("a"), word("b"), word("c")]))
    }

    @Test("Explicit AND means the same as juxtaposition")
    func explicitAnd() throws {
        #expect(try tree("a AND b") == .and([word("a"), word("b")]))
        #expect(try tree("a AND b c") == .and([word("a"), word("b"), word("c")]))
        #expect(try tree("a AND b") == tree("a b"))
    }

    @Test("OR joins alternatives into one node")
    func orChain() throws {
        #expect(try tree("a OR b OR c") == .or([word("a"), word("b"), word("c")]))
    }

    @Test("OR binds tighter than implicit AND")
    func orTighterThanImplicitAnd() throws {
        #expect(try tree("a b OR c") == .and([word("a"), .or([word("b"), word("c")])]))
        #expect(try tree("a OR b c") == .and([.or([word("a"), word("b")]), word("c")]))
        #expect(try tree("a OR b c OR d") == .and([.or([word("a"), word("b")]), .or([word("c"), word("d")])]))
    }

    @Test("OR binds tighter than explicit AND")
    func orTighterThanExplicitAnd() throws {
        #expect(try tree("a AND b OR c") == .and([word("a"), .or([word("b"), word("c")])]))
        #expect(try tree("a OR b AND c") == .and([.or([word("a"), word("b")]), word("c")]))
    }

    @Test("Only upper-case OR and AND are keywords; other spellings are words")
    func keywordCase() throws {
        #expect(try tree("a or b") == .and([word("a"), word("or"), word("b")]))
        #expect(try tree("a Or b") == .and([word("a"), word("Or"), word("b")]))
        #expect(try tree("a and b") == .and([word("a"), word("and"), word("b")]))
        #expect(try tree("a ORB ANDY") == .and([word("a"), word("ORB"), word("ANDY")]))
    }

    @Test("Keywords are recognised next to brackets")
    func keywordsNextToBrackets() throws {
        #expect(try tree("(a)OR(b)") == .or([word("a"), word("b")]))
        #expect(try tree("a OR(b c)") == .or([word("a"), .and([word("b"), word("c")])]))
    }

    @Test("Parentheses group and override precedence")
    func parenthesesGroup() throws {
        #expect(try tree("(a b) OR c") == .or([.and([word("a"), word("b")]), word("c")]))
        #expect(try tree("a (b OR c)") == .and([word("a"), .or([word("b"), word("c")])]))
        #expect(try tree("(a OR b) (c OR d)") == .and([.or([word("a"), word("b")]), .or([word("c"), word("d")])]))
    }

    @Test("Redundant parentheses leave no trace, nested groups stay nested")
    func redundantParentheses() throws {
        #expect(try tree("((a))") == word("a"))
        #expect(try tree("( a )") == word("a"))
        #expect(try tree("(a b) c") == .and([.and([word("a"), word("b")]), word("c")]))
    }

    @Test("Braces are an OR of their items")
    func bracesAreOr() throws {
        #expect(try tree("{a b c}") == .or([word("a"), word("b"), word("c")]))
        #expect(try tree("x {a b}") == .and([word("x"), .or([word("a"), word("b")])]))
        #expect(try tree("{a}") == word("a"))
    }

    @Test("Braces may hold OR, groups and negations")
    func bracesItems() throws {
        #expect(try tree("{a OR b c}") == .or([.or([word("a"), word("b")]), word("c")]))
        #expect(try tree("{(a b) c}") == .or([.and([word("a"), word("b")]), word("c")]))
        #expect(try tree("{-a b}") == .or([.not(word("a")), word("b")]))
        #expect(try tree("{a b} OR c") == .or([.or([word("a"), word("b")]), word("c")]))
    }

    @Test("A leading hyphen negates the term after it")
    func hyphenNegatesTerm() throws {
        #expect(try tree("-a") == .not(word("a")))
        #expect(try tree(#"-"a b""#) == .not(phrase("a b")))
        #expect(try tree("x -y") == .and([word("x"), .not(word("y"))]))
    }

    @Test("A hyphen negates a parenthesised or braced group")
    func hyphenNegatesGroup() throws {
        #expect(try tree("-(a b)") == .not(.and([word("a"), word("b")])))
        #expect(try tree("-{a b}") == .not(.or([word("a"), word("b")])))
        #expect(try tree("-(-a)") == .not(.not(word("a"))))
    }

    @Test("Negation binds tighter than OR")
    func negationTighterThanOr() throws {
        #expect(try tree("-a OR b") == .or([.not(word("a")), word("b")]))
        #expect(try tree("a OR -b") == .or([word("a"), .not(word("b"))]))
    }

    @Test("A hyphen inside a word is part of the word")
    func hyphenInsideWord() throws {
        #expect(try tree("e-mail x-ray") == .and([word("e-mail"), word("x-ray")]))
        #expect(try tree("a- b") == .and([word("a-"), word("b")]))
        #expect(try tree("-e-mail") == .not(word("e-mail")))
    }

    @Test("A lone hyphen, or one before another hyphen, is a word")
    func loneHyphen() throws {
        #expect(try tree("-") == word("-"))
        #expect(try tree("a - b") == .and([word("a"), word("-"), word("b")]))
        #expect(try tree("--x") == word("--x"))
        #expect(try tree("(a -)") == .and([word("a"), word("-")]))
    }

    @Test("A negated OR or AND is the word itself")
    func negatedKeywordIsWord() throws {
        #expect(try tree("-OR") == .not(word("OR")))
        #expect(try tree("a -AND b") == .and([word("a"), .not(word("AND")), word("b")]))
    }

    @Test("Words end at quotes and brackets")
    func wordBoundaries() throws {
        #expect(try tree(#"a"b c"d"#) == .and([word("a"), phrase("b c"), word("d")]))
        #expect(try tree("NEAR(a b)") == .and([word("NEAR"), .and([word("a"), word("b")])]))
        #expect(try tree("x{y}") == .and([word("x"), word("y")]))
    }

    @Test("Punctuation other than quotes and brackets belongs to words")
    func punctuationInWords() throws {
        #expect(try tree("it's 10:30 a@b.c #tag 50% [x]") == .and([
            word("it's"), word("10:30"), word("a@b.c"), word("#tag"), word("50%"), word("[x]"),
        ]))
    }

    @Test("Unicode words are kept as typed")
    func unicodeWords() throws {
        #expect(try tree("café 日本 👍🏽") == .and([word("café"), word("日本"), word("👍🏽")]))
    }

    @Test("Control characters and Unicode spaces separate terms")
    func controlsAreSpace() throws {
        #expect(try tree("a\u{0}b\tc\u{7}d\u{7F}e") == .and(["a", "b", "c", "d", "e"].map(word)))
        #expect(try tree("a\u{A0}b\u{3000}c\u{85}d") == .and(["a", "b", "c", "d"].map(word)))
    }

    @Test("Control characters inside quotes become spaces")
    func controlsInQuotes() throws {
        #expect(try tree("\"a\u{0}b\nc\"") == phrase("a b c"))
    }
}
