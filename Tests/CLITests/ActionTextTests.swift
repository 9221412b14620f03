// One label, one field, in the recorded actions too (issue 37 §3): `hd-undo --list` shows
// an action as the actions it was, so a label named with a blank or a comma is quoted
// there as in the rules file, while JSON gives each action as one hd-mark argument.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Recorded actions name each label as one field")
struct ActionTextTests {
    @Test("hd-undo --list quotes a label with a blank or a comma; the action still undoes")
    func undoListQuotesLabels() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        for name in ["Travel 2026", "Work, Projects"] {
            let created = try f.run("hd-labels", "create", "--no-flush", name)
            #expect(created.status == 0, "\(created)")
        }
        let marked = try f.run("hd-mark", "--no-flush", "+Travel 2026", "+Work, Projects", "star", "thread:ta")
        #expect(marked.status == 0, "\(marked)")
        let listed = try f.run("hd-undo", "--list")
        #expect(listed.stdout.contains(#"+"Travel 2026" +"Work, Projects" star"#), "\(listed.stdout)")
        let undone = try f.run("hd-undo", "--no-flush")
        #expect(undone.status == 0, "\(undone)")
    }
}
