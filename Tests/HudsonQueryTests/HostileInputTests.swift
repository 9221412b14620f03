/*!
 Input a user, a script or an attacker may send: huge queries, deep nesting, control
 characters, NUL bytes, SQL fragments and syntax from other search languages. The rule
 is the same for all of them: a tree or a `QueryError` with a column inside the query,
 never a crash, a hang or a tree too deep to walk.
 */

import HudsonQuery
import Testing

@Suite("Hostile input")
struct HostileInputTests {
    /// Parses `text` and checks the outcome is sane: an error column within the query
    /// (or just past its end), or a tree that renders and simplifies.
    private func survives(_ text: String) {
        do {
            let query = try Query.parse(text)
            _ = query.description
            _ = query.simplified()
            _ = query.mentionsSpamOrTrash
        } catch {
            #expect(error.column >= 1 && error.column <= text.count + 1, "column \(error.column) outside \(text.count)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test("10 KB of words parses into one flat AND")
    func tenKilobytesOfWords() throws {
        let text = String(repeating: "word ", count: 2048)
        #expect(text.utf8.count == 10_240)
        guard case .and(let children) = try tree(text) else {
            Issue.record("not an AND")
            return
        }
        #expect(children.count == 2048)
    }

    @Test("10 KB of alternatives parses into one flat OR")
    func tenKilobytesOfAlternatives() throws {
        let text = String(repeating: "a OR ", count: 2047) + "a"
        guard case .or(let children) = try tree(text) else {
            Issue.record("not an OR")
            return
        }
        #expect(children.count == 2048)
    }

    @Test("10 KB of mixed operators parses")
    func tenKilobytesOfOperators() throws {
        let chunk = #"from:a@b.c -label:x subject:(a OR "b c") {in:inbox is:unread} larger:1M "#
        let text = String(repeating: chunk, count: 10_240 / chunk.count + 1)
        #expect(text.utf8.count >= 10_240)
        let query = try Query.parse(text)
        #expect(!query.mentionsSpamOrTrash)
    }

    @Test("One 10 KB word or phrase is kept whole")
    func longToken() throws {
        let long = String(repeating: "x", count: 10_240)
        #expect(try tree(long) == word(long))
        #expect(try tree("\"\(long) \(long)\"") == phrase("\(long) \(long)"))
        #expect(try tree("from:\(long)") == node(.from(long)))
    }

    @Test("Nesting up to 100 groups parses")
    func nestingAtTheLimit() throws {
        let text = String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100)
        #expect(try tree(text) == word("a"))
    }

    @Test("1000-deep parentheses fail at the 101st, nothing overflows")
    func deepParentheses() {
        let text = String(repeating: "(", count: 1000) + "a" + String(repeating: ")", count: 1000)
        #expect(parseError(text) == QueryError(column: 101, message: "groups nested deeper than 100"))
    }

    @Test("Deep braces, negated groups and operator groups hit the same limit")
    func deepMixedNesting() {
        let message = "groups nested deeper than 100"
        let braces = String(repeating: "{", count: 1000) + "a" + String(repeating: "}", count: 1000)
        #expect(parseError(braces) == QueryError(column: 101, message: message))
        let negated = String(repeating: "-(", count: 1000) + "a" + String(repeating: ")", count: 1000)
        #expect(parseError(negated) == QueryError(column: 202, message: message))
        let subject = "subject:" + String(repeating: "(", count: 1000) + "a" + String(repeating: ")", count: 1000)
        #expect(parseError(subject) == QueryError(column: 109, message: message))
    }

    @Test("Only openers, only closers, only quotes, only hyphens")
    func repeatedSyntax() throws {
        #expect(parseError(String(repeating: "(", count: 10_240))?.column == 101)
        #expect(parseError(String(repeating: ")", count: 10_240)) == QueryError(column: 1, message: "unmatched )"))
        #expect(parseError(String(repeating: "\"", count: 10_240)) == QueryError(column: 1, message: "empty quotes"))
        #expect(parseError(String(repeating: "\"", count: 10_241)) == QueryError(column: 1, message: "empty quotes"))
        #expect(try tree(String(repeating: "-", count: 10_240)) == word(String(repeating: "-", count: 10_240)))
        #expect(try tree(String(repeating: ":", count: 10_240)) == word(String(repeating: ":", count: 10_240)))
        #expect(parseError(String(repeating: "OR ", count: 3000))?.column == 1)
    }

    @Test("An operator name repeated without spaces is one value")
    func repeatedOperatorNames() throws {
        let value = String(repeating: "from:", count: 2000)
        #expect(try tree("from:" + value) == node(.from(value)))
    }

    @Test("NUL bytes and other controls are spaces")
    func nulBytes() throws {
        #expect(try tree("\u{0}from:bob\u{0}") == node(.from("bob")))
        #expect(try tree("a\u{0}\"b\u{0}c\"") == .and([word("a"), phrase("b c")]))
        #expect(try tree(String(repeating: "\u{0}", count: 10_240)) == .all)
        #expect(try tree("\u{1B}[31mred") == word("[31mred"))
    }

    @Test("Syntax from other languages is words, or an error with a column")
    func foreignSyntax() throws {
        #expect(try tree("NEAR(a b)") == .and([word("NEAR"), .and([word("a"), word("b")])]))
        #expect(try tree("subject:*") == node(.subject("*", quoted: false)))
        #expect(try tree("holiday AROUND 10 vacation") == .and(["holiday", "AROUND", "10", "vacation"].map(word)))
        #expect(try tree("a && b || !c") == .and(["a", "&&", "b", "||", "!c"].map(word)))
        #expect(try tree("date:2024..2025 tag:inbox") == .and([word("date:2024..2025"), word("tag:inbox")]))
    }

    @Test("SQL fragments are words, never anything more")
    func sqlFragments() throws {
        #expect(parseError("'); DROP TABLE x") == QueryError(column: 2, message: "unmatched )"))
        #expect(try tree("' OR 1=1 --") == .and([.or([word("'"), word("1=1")]), word("--")]))
        #expect(try tree(#"from:"a' OR '1'='1""#) == node(.from("a' OR '1'='1")))
        #expect(try tree("x;DELETE FROM messages;") == .and(["x;DELETE", "FROM", "messages;"].map(word)))
    }

    @Test("Lone syntax characters fail at column 1 or are words")
    func loneCharacters() throws {
        #expect(parseError("\"") == QueryError(column: 1, message: "unterminated quote"))
        #expect(parseError("(") == QueryError(column: 1, message: "unclosed parenthesis"))
        #expect(parseError("{") == QueryError(column: 1, message: "unclosed brace"))
        #expect(try tree("-") == word("-"))
        #expect(try tree(":") == word(":"))
        #expect(try tree("\\") == word("\\"))
    }

    @Test("Strange Unicode is text and counts one column per character")
    func strangeUnicode() throws {
        #expect(try tree("a\u{202E}b") == word("a\u{202E}b"))
        #expect(try tree("\u{FEFF}x") == word("\u{FEFF}x"))
        #expect(try tree("\u{301}") == word("\u{301}"))
        // A combining mark fuses with the quote into one character that is not a quote.
        #expect(try tree("\"\u{301}x") == word("\"\u{301}x"))
        #expect(parseError("é\u{301}\u{302}\u{303} (")?.column == 3)
    }

    @Test("A deterministic sweep of random tricky strings never crashes")
    func randomSweep() {
        let alphabet: [String] = [
            "a", "b", " ", "\"", "(", ")", "{", "}", "-", ":", "OR", "AND", "or", "from:", "subject:",
            "in:", "label:", "after:", "2024/02/29", "1M", "\u{0}", "\t", "é", "\u{301}", "👍🏽", "<", ">", "*",
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            var text = ""
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 58)
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += alphabet[Int(state >> 33) % alphabet.count]
            }
            survives(text)
        }
    }
}
