/*!
 Every `name:value` operator of gmail-api.md §6 in each value form (bare, quoted,
 grouped), the distribution of an operator over its group, the keyword operators'
 value sets, and Gmail's rule that an unknown `name:` is plain text.
 */

import HudsonQuery
import Testing

@Suite("Operators")
struct OperatorTests {
    @Test("Each text-valued operator keeps its value", arguments: [
        ("from:bob@example.org", Term.from("bob@example.org")),
        ("to:alice", Term.to("alice")),
        ("cc:carol@x.org", Term.cc("carol@x.org")),
        ("bcc:dave", Term.bcc("dave")),
        ("deliveredto:me@x.org", Term.deliveredTo("me@x.org")),
        ("subject:dinner", Term.subject("dinner", quoted: false)),
        ("filename:report.pdf", Term.filename("report.pdf")),
        ("filename:pdf", Term.filename("pdf")),
        ("list:dev@lists.example.org", Term.list("dev@lists.example.org")),
        ("from:me", Term.from("me")),
    ])
    func textOperators(_ query: String, _ expected: Term) throws {
        #expect(try tree(query) == node(expected))
    }

    @Test("Each typed operator reads its value", arguments: [
        ("label:receipts", Term.label(LabelName("receipts"))),
        ("in:inbox", Term.location(.inbox)),
        ("is:unread", Term.flag(.unread)),
        ("has:attachment", Term.has(.attachment)),
        ("category:promotions", Term.category(.promotions)),
        ("after:2024/12/01", Term.after(.day(year: 2024, month: 12, day: 1))),
        ("before:2025/01/01", Term.before(.day(year: 2025, month: 1, day: 1))),
        ("newer:2024/12/01", Term.after(.day(year: 2024, month: 12, day: 1))),
        ("older:2025/01/01", Term.before(.day(year: 2025, month: 1, day: 1))),
        ("older_than:1y", Term.olderThan(RelativeAge(amount: 1, unit: .year))),
        ("newer_than:2d", Term.newerThan(RelativeAge(amount: 2, unit: .day))),
        ("larger:10M", Term.larger(10 * 1024 * 1024)),
        ("smaller:5K", Term.smaller(5 * 1024)),
        ("size:1000000", Term.larger(1_000_000)),
        ("rfc822msgid:<CAF=abc123@mail.gmail.com>", Term.rfc822MessageID("CAF=abc123@mail.gmail.com")),
    ])
    func typedOperators(_ query: String, _ expected: Term) throws {
        #expect(try tree(query) == node(expected))
    }

    @Test("older: and newer: are synonyms of before: and after:")
    func olderNewerSynonyms() throws {
        #expect(try tree("older:2024/01/02") == tree("before:2024/01/02"))
        #expect(try tree("newer:2024/01/02") == tree("after:2024/01/02"))
    }

    @Test("size: means larger than, like larger:")
    func sizeMeansLarger() throws {
        #expect(try tree("size:2M") == tree("larger:2M"))
    }

    @Test("Operator names are case-insensitive")
    func caseInsensitiveNames() throws {
        #expect(try tree("FROM:bob") == node(.from("bob")))
        #expect(try tree("Subject:Hi") == node(.subject("Hi", quoted: false)))
        #expect(try tree("Older_Than:3D") == node(.olderThan(RelativeAge(amount: 3, unit: .day))))
        #expect(try tree("RFC822MsgID:a@b") == node(.rfc822MessageID("a@b")))
    }

    @Test("Operator values keep their case")
    func valuesKeepCase() throws {
        #expect(try tree("from:Bob@Example.ORG") == node(.from("Bob@Example.ORG")))
    }

    @Test("A quoted value may contain spaces and brackets")
    func quotedValues() throws {
        #expect(try tree(#"from:"Bob Smith""#) == node(.from("Bob Smith")))
        #expect(try tree(#"subject:"dinner (and) a movie""#) == node(.subject("dinner (and) a movie", quoted: true)))
        #expect(try tree(#"label:"My Label""#) == node(.label(LabelName("My Label"))))
        #expect(try tree(#"filename:"q3 report.pdf""#) == node(.filename("q3 report.pdf")))
        #expect(try tree(#"in:"Inbox""#) == node(.location(.inbox)))
    }

    @Test("subject: records whether its value was quoted")
    func subjectQuotedFlag() throws {
        #expect(try tree("subject:dinner") == node(.subject("dinner", quoted: false)))
        #expect(try tree(#"subject:"dinner""#) == node(.subject("dinner", quoted: true)))
    }

    @Test("A bare value runs verbatim to the next space or bracket")
    func bareValueVerbatim() throws {
        #expect(try tree("from:OR") == node(.from("OR")))
        #expect(try tree("from:-bob") == node(.from("-bob")))
        #expect(try tree("subject:*") == node(.subject("*", quoted: false)))
        #expect(try tree("from:a:b") == node(.from("a:b")))
        #expect(try tree("subject:from:x") == node(.subject("from:x", quoted: false)))
        #expect(try tree("from:bob(x)") == .and([node(.from("bob")), word("x")]))
        #expect(try tree(#"from:bob"x y""#) == .and([node(.from("bob")), phrase("x y")]))
    }

    @Test("An operator group applies the operator to each term, ANDed")
    func groupDistributes() throws {
        #expect(try tree("subject:(dinner movie)") == .and([
            node(.subject("dinner", quoted: false)), node(.subject("movie", quoted: false)),
        ]))
    }

    @Test("An operator group keeps OR inside it")
    func groupWithOr() throws {
        #expect(try tree("from:(alice OR bob)") == .or([node(.from("alice")), node(.from("bob"))]))
    }

    @Test("An operator with braces ORs its terms")
    func operatorBraces() throws {
        #expect(try tree("from:{alice bob}") == .or([node(.from("alice")), node(.from("bob"))]))
    }

    @Test("An operator group keeps negation, nesting and quoting")
    func groupStructure() throws {
        #expect(try tree(#"subject:(a -b (c OR "d e"))"#) == .and([
            node(.subject("a", quoted: false)),
            .not(node(.subject("b", quoted: false))),
            .or([node(.subject("c", quoted: false)), node(.subject("d e", quoted: true))]),
        ]))
    }

    @Test("A one-term operator group is the plain operator")
    func singleTermGroup() throws {
        #expect(try tree("label:(work)") == node(.label(LabelName("work"))))
    }

    @Test("Typed operators distribute over their groups too")
    func typedGroups() throws {
        #expect(try tree("in:(inbox OR sent)") == .or([node(.location(.inbox)), node(.location(.sent))]))
        #expect(try tree("is:(unread starred)") == .and([node(.flag(.unread)), node(.flag(.starred))]))
        #expect(try tree("larger:{1M 2K}") == .or([node(.larger(1_048_576)), node(.larger(2048))]))
    }

    @Test("Inside an operator group, name: is text for that operator")
    func operatorsInsideGroupsAreText() throws {
        #expect(try tree("subject:(re: from:x)") == .and([
            node(.subject("re:", quoted: false)), node(.subject("from:x", quoted: false)),
        ]))
    }

    @Test("Operators are recognised again after an operator group closes")
    func operatorsAfterGroup() throws {
        #expect(try tree("subject:(a) from:b") == .and([node(.subject("a", quoted: false)), node(.from("b"))]))
        #expect(try tree("(subject:(a)) from:b") == .and([node(.subject("a", quoted: false)), node(.from("b"))]))
    }

    @Test("Operators combine with OR, AND, braces and negation like words")
    func operatorsCombine() throws {
        #expect(try tree("from:a OR from:b") == .or([node(.from("a")), node(.from("b"))]))
        #expect(try tree("{from:a from:b}") == .or([node(.from("a")), node(.from("b"))]))
        #expect(try tree("-label:receipts") == .not(node(.label(LabelName("receipts")))))
        #expect(try tree("in:inbox -is:read has:attachment") == .and([
            node(.location(.inbox)), .not(node(.flag(.read))), node(.has(.attachment)),
        ]))
    }

    @Test("An unknown name:value is a plain word, as in Gmail", arguments: [
        "http://x", "note:1", "foo:bar", ":x", "x:", "a:b:c", "fromm:bob", "https://example.org/a?b=c",
    ])
    func unknownOperatorIsWord(_ query: String) throws {
        #expect(try tree(query) == word(query))
    }

    @Test("Only the first colon of a word can make an operator")
    func firstColonOnly() throws {
        #expect(try tree("note:from:bob") == word("note:from:bob"))
    }

    @Test("Every in: value is accepted, in any case", arguments: Term.Location.allCases)
    func everyLocation(_ location: Term.Location) throws {
        #expect(try tree("in:\(location.rawValue)") == node(.location(location)))
        #expect(try tree("in:\(location.rawValue.uppercased())") == node(.location(location)))
    }

    @Test("Every is: value is accepted, in any case", arguments: Term.Flag.allCases)
    func everyFlag(_ flag: Term.Flag) throws {
        #expect(try tree("is:\(flag.rawValue)") == node(.flag(flag)))
        #expect(try tree("IS:\(flag.rawValue.uppercased())") == node(.flag(flag)))
    }

    @Test("Every has: value is accepted", arguments: Term.HasKind.allCases)
    func everyHasKind(_ kind: Term.HasKind) throws {
        #expect(try tree("has:\(kind.rawValue)") == node(.has(kind)))
    }

    @Test("has:userlabels and has:nouserlabels are spelt as Gmail spells them")
    func userLabelSpelling() throws {
        #expect(try tree("has:userlabels") == node(.has(.userLabels)))
        #expect(try tree("has:NoUserLabels") == node(.has(.noUserLabels)))
    }

    @Test("Every category: value is accepted, in any case", arguments: Term.Category.allCases)
    func everyCategory(_ category: Term.Category) throws {
        #expect(try tree("category:\(category.rawValue)") == node(.category(category)))
        #expect(try tree("category:\(category.rawValue.uppercased())") == node(.category(category)))
    }

    @Test("rfc822msgid: drops optional angle brackets and keeps the rest verbatim")
    func messageID() throws {
        #expect(try tree("rfc822msgid:<a.B=c@x.org>") == node(.rfc822MessageID("a.B=c@x.org")))
        #expect(try tree("rfc822msgid:a.B=c@x.org") == node(.rfc822MessageID("a.B=c@x.org")))
        #expect(try tree(#"rfc822msgid:"<a@b>""#) == node(.rfc822MessageID("a@b")))
        #expect(try tree("rfc822msgid:<half") == node(.rfc822MessageID("<half")))
    }
}
