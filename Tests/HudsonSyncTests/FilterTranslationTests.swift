// Gmail filters (gmail-api.md §2.14) as queries of the one parser and hd-mark actions.
import Foundation
import HudsonGmail
import HudsonQuery
import HudsonStore
import HudsonSync
import Testing

@Suite("FilterTranslator: Gmail filters as Hudson queries and actions")
struct FilterTranslationTests {
    func translate(_ criteria: GmailFilterCriteria, _ action: GmailFilterAction) -> FilterTranslation {
        FilterTranslator.translate(GmailFilter(id: "f", criteria: criteria, action: action)) {
            ["Label_5": "Newsletters", "Label_9": "Label_9"][$0]
        }
    }

    @Test("every criterion becomes a term of one query the parser accepts")
    func criteria() throws {
        let t = translate(
            GmailFilterCriteria(from: "ada OR grace", to: "team@example.org", subject: "  weekly   digest ", query: "list:x OR y",
                                negatedQuery: "from:me", hasAttachment: true, excludeChats: true, size: 1_048_576,
                                sizeComparison: "smaller"),
            GmailFilterAction(addLabelIds: ["Label_5"], removeLabelIds: ["INBOX"]))
        #expect(t.queryText == "from:(ada OR grace) {to:(team@example.org) cc:(team@example.org) bcc:(team@example.org)} "
                + "subject:\"weekly digest\" (list:x OR y) -(from:me) has:attachment smaller:1048576")
        let rule = try #require(t.rule)
        let parsed = try Query.parse(t.queryText)
        #expect(rule.query == parsed)
        #expect(rule.actions == [.addLabel("Newsletters"), .archive])
        #expect(rule.name == "filter:f" && t.notes.isEmpty)
    }

    @Test("system labels become hd-mark's actions; a label without a name keeps its id")
    func actions() {
        let t = translate(GmailFilterCriteria(from: "x"),
                          GmailFilterAction(addLabelIds: ["STARRED", "TRASH", "IMPORTANT", "Label_9", "UNREAD", "SPAM", "INBOX"],
                                            removeLabelIds: ["UNREAD", "STARRED", "IMPORTANT", "Label_5", "TRASH"]))
        #expect(t.actions == [.star, .trash, .important, .addLabel("Label_9"), .unread, .spam, .unarchive,
                              .read, .unstar, .unimportant, .removeLabel("Newsletters"), .untrash])
    }

    @Test("what cannot be replayed is said, not guessed")
    func notes() {
        let unknown = translate(GmailFilterCriteria(from: "x"), GmailFilterAction(addLabelIds: ["STARRED", "Label_404"]))
        #expect(unknown.rule == nil && unknown.actions == [.star, .addLabel("Label_404")])
        #expect(unknown.notes == ["label Label_404 is not in the store (hd-sync brings Gmail's labels)"])
        let forward = translate(GmailFilterCriteria(subject: "invoice"), GmailFilterAction(forward: "books@example.net"))
        #expect(forward.rule == nil && forward.actions.isEmpty)
        #expect(forward.notes == ["forward to books@example.net: Gmail forwards arriving mail only; Hudson does not send mail for a filter"])
        let never = translate(GmailFilterCriteria(from: "x"), GmailFilterAction(removeLabelIds: ["SPAM"]))
        #expect(never.rule == nil && never.notes == ["never send to spam: Gmail decides it on arrival; nothing to replay"])
        let bad = translate(GmailFilterCriteria(query: "from:(x"), GmailFilterAction(addLabelIds: ["STARRED"]))
        #expect(bad.rule == nil && bad.notes.count == 1)
        #expect(bad.notes.first?.hasPrefix("the criteria do not parse as a query (column ") == true, "\(bad.notes)")
        let empty = translate(GmailFilterCriteria(excludeChats: true), GmailFilterAction(addLabelIds: ["STARRED"]))
        #expect(empty.rule == nil && empty.notes == ["no criteria Hudson can evaluate"])
    }

    @Test("a size criterion that cannot be a term exactly makes the filter not replayed, never replayed wider")
    func untranslatableSize() {
        let star = GmailFilterAction(addLabelIds: ["STARRED"])
        for (size, comparison) in [(Int64(-5), "larger"), (-5, "smaller"), (5_000, nil), (5_000, "unspecified"), (5_000, "bigger"),
                                   (5_000, ""), (Int64(Int32.max) + 1, "larger"), (Int64.min, "smaller")] as [(Int64, String?)] {
            let t = translate(GmailFilterCriteria(from: "d@x.example", size: size, sizeComparison: comparison), star)
            #expect(t.rule == nil && t.notes.count == 1 && t.notes[0].contains("not replayed (it would select more)"),
                    "\(size) \(comparison ?? "nil"): \(t)")
            #expect(!t.queryText.contains("from:"), "\(size) \(comparison ?? "nil"): \(t)")
        }
        // A comparison with no size (proto3 leaves a 0 out): no filter Gmail makes; not replayed.
        let noSize = translate(GmailFilterCriteria(from: "d@x.example", sizeComparison: "larger"), star)
        #expect(noSize.rule == nil && noSize.notes.count == 1, "\(noSize)")
        // What Gmail documents still translates: no size at all, or a size and its comparison.
        let plain = translate(GmailFilterCriteria(from: "d@x.example", sizeComparison: "unspecified"), star)
        #expect(plain.rule != nil && plain.queryText == "from:(d@x.example)" && plain.notes.isEmpty, "\(plain)")
        let large = translate(GmailFilterCriteria(from: "d@x.example", size: 1, sizeComparison: "larger"), star)
        #expect(large.rule != nil && large.queryText == "from:(d@x.example) larger:1", "\(large)")
    }

    @Test("a filter list whose filter has an id of another shape: that filter is left out and its id kept, the rest read")
    func filterIDShape() throws {
        let json = """
            {"filter": [{"id": "../bad", "criteria": {"from": "a"}, "action": {"addLabelIds": ["STARRED"]}},
                        {"id": "ANe1Bm000001", "criteria": {"from": "b"}, "action": {"addLabelIds": ["STARRED"]}},
                        {"id": "a/b", "criteria": {"from": "c"}}, {"id": "", "criteria": {"from": "c"}}]}
            """
        let list = try JSONDecoder().decode(GmailFilterList.self, from: Data(json.utf8))
        #expect(list.filters.map(\.id) == ["ANe1Bm000001"])
        #expect(list.unusableIDs == ["../bad", "a/b", ""])
        #expect(try JSONDecoder().decode(GmailFilterList.self, from: Data("{}".utf8)) == GmailFilterList(filters: []))
    }
}
