// Gmail filters (gmail-api.md §2.14) as queries of the one parser and hd-mark actions.
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
}
