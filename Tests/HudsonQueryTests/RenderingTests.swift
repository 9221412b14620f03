/*!
 The tree rendering that `hd-search --explain` prints (an output contract, so every
 form is pinned here), the normalising simplification, and the spam-and-trash scope
 question the translator asks before applying Gmail's default scope.
 */

import HudsonQuery
import Testing

@Suite("Rendering and simplification")
struct RenderingTests {
    private func explain(_ text: String) throws -> String {
        try Query.parse(text).description
    }

    @Test("A tree renders as one S-expression line")
    func sExpression() throws {
        #expect(try explain(#"from:alice (x OR "a b")"#) == #"(and (from "alice") (or (text "x") (phrase "a b")))"#)
        #expect(try explain("-(a b)") == #"(not (and (text "a") (text "b")))"#)
        #expect(try explain("") == "(all)")
    }

    @Test("Every term has a fixed rendering", arguments: [
        ("word", #"(text "word")"#),
        (#""a phrase""#, #"(phrase "a phrase")"#),
        ("from:a@b.c", #"(from "a@b.c")"#),
        ("to:a", #"(to "a")"#),
        ("cc:a", #"(cc "a")"#),
        ("bcc:a", #"(bcc "a")"#),
        ("deliveredto:a", #"(deliveredto "a")"#),
        ("subject:dinner", #"(subject "dinner")"#),
        (#"subject:"dinner plans""#, #"(subject (phrase "dinner plans"))"#),
        ("label:Travel/2026", #"(label "Travel/2026" :normalized "travel-2026")"#),
        ("in:inbox", "(in inbox)"),
        ("is:unread", "(is unread)"),
        ("has:nouserlabels", "(has nouserlabels)"),
        ("filename:a.pdf", #"(filename "a.pdf")"#),
        ("after:2024/3/9", "(after 2024-03-09)"),
        ("before:03/09/2024", "(before 2024-03-09)"),
        ("after:1733011200", "(after @1733011200)"),
        ("older_than:2d", "(older_than 2d)"),
        ("newer_than:6M", "(newer_than 6m)"),
        ("larger:1K", "(larger 1024)"),
        ("smaller:2m", "(smaller 2097152)"),
        ("category:Social", "(category social)"),
        ("rfc822msgid:<a@b>", #"(rfc822msgid "a@b")"#),
        ("list:dev@x.org", #"(list "dev@x.org")"#),
    ])
    func termRendering(_ query: String, _ rendering: String) throws {
        #expect(try explain(query) == rendering)
    }

    @Test("Quotes, backslashes, controls and bidi overrides are escaped")
    func escaping() throws {
        #expect(QueryNode.term(.text("say \"hi\"\\")).description == #"(text "say \"hi\"\\")"#)
        #expect(QueryNode.term(.phrase("a\u{1}b\u{7F}c\u{9B}d")).description == #"(phrase "a\u{1}b\u{7F}c\u{9B}d")"#)
        #expect(try explain("a\u{202E}b\u{2066}c") == #"(text "a\u{202E}b\u{2066}c")"#)
        #expect(try explain("café") == #"(text "café")"#)
    }

    @Test("Dates render in ISO order with padding")
    func dateRendering() {
        #expect(DateValue.day(year: 987, month: 3, day: 9).description == "0987-03-09")
        #expect(DateValue.epochSeconds(0).description == "@0")
        #expect(RelativeAge(amount: 12, unit: .year).description == "12y")
    }

    @Test("A query renders as its root")
    func queryDescription() throws {
        let query = try Query.parse("a OR b")
        #expect(query.description == query.root.description)
    }

    // MARK: Simplification

    @Test("Simplification flattens nested AND and OR")
    func flattens() throws {
        #expect(try Query.parse("(a b) (c d)").simplified().root == .and(["a", "b", "c", "d"].map(word)))
        #expect(try Query.parse("(a OR b) OR c").simplified().root == .or(["a", "b", "c"].map(word)))
        #expect(try Query.parse("{a b} OR {c d}").simplified().root == .or(["a", "b", "c", "d"].map(word)))
        #expect(try Query.parse("-((a b) c)").simplified().root == .not(.and(["a", "b", "c"].map(word))))
    }

    @Test("Simplification keeps AND and OR apart")
    func keepsMixedGroups() throws {
        let query = try Query.parse("(a OR b) (c d)")
        #expect(query.simplified().root == .and([.or([word("a"), word("b")]), word("c"), word("d")]))
    }

    @Test("Simplification removes double negation")
    func doubleNegation() throws {
        #expect(try Query.parse("-(-a)").simplified().root == word("a"))
        #expect(try Query.parse("-(-(-a))").simplified().root == .not(word("a")))
        #expect(try Query.parse("-(-(a b))").simplified().root == .and([word("a"), word("b")]))
    }

    @Test("Simplification collapses one-child groups and handles all")
    func collapses() {
        #expect(QueryNode.and([word("a")]).simplified() == word("a"))
        #expect(QueryNode.or([.and([word("a")])]).simplified() == word("a"))
        #expect(QueryNode.and([.all, word("a")]).simplified() == word("a"))
        #expect(QueryNode.and([]).simplified() == .all)
        #expect(QueryNode.or([word("a"), .all]).simplified() == .all)
        #expect(QueryNode.or([]).simplified() == .or([]))
    }

    @Test("Simplification is idempotent and keeps the rendering stable")
    func idempotent() throws {
        let query = try Query.parse(#"a (b (c OR {d e})) -(-(f)) subject:(x y)"#).simplified()
        #expect(query.simplified() == query)
        #expect(query.description
            == #"(and (text "a") (text "b") (or (text "c") (text "d") (text "e")) (text "f") (subject "x") (subject "y"))"#)
    }

    // MARK: Spam and trash scope

    @Test("Naming spam or trash anywhere in the tree is detected", arguments: [
        "in:spam", "in:trash", "in:anywhere", "label:spam", "label:Trash", "-in:trash", "a OR (b in:spam)",
        "{x label:SPAM}", "in:(inbox OR trash)",
    ])
    func mentionsSpamOrTrash(_ query: String) throws {
        #expect(try Query.parse(query).mentionsSpamOrTrash)
    }

    @Test("Other queries keep Gmail's default scope", arguments: [
        "", "spam", "\"in:trash\"", "in:inbox", "label:spammy", "subject:trash", "is:unread", "from:spam@x.org",
    ])
    func doesNotMentionSpamOrTrash(_ query: String) throws {
        #expect(try !Query.parse(query).mentionsSpamOrTrash)
    }

    @Test("contains(where:) visits every term")
    func containsWhere() throws {
        let root = try tree("a (b OR -from:c)")
        #expect(root.contains { $0 == .from("c") })
        #expect(!root.contains { $0 == .text("c") })
    }
}
