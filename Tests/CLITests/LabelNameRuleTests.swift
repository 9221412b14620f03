// One rule for what a label name may hold, and one for how text shows a list of labels
// (issue 37 §3): hd-labels create and rename and hd-mark --create refuse what a terminal
// would act on, showing it escaped; a label Gmail already has with such a name is synced,
// shown escaped and nameable; a label with a comma stays one field in every text output.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Label names: one rule for what they hold, one field each in text", .serialized)
struct LabelNameRuleTests {
    func synced(_ labels: [String] = []) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "12", "--demo-span-days", "30"])
        for name in labels { try fake.admin("POST", "create-label", ["name": name]) }
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func gmailLabelNames(_ fake: FakeGmail) throws -> [String] {
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        return (state["labels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    static let hostile = ["Bad\u{1B}[31m", "Bell\u{07}", "Del\u{7F}", "C1\u{9B}2J", "Flip\u{202E}txt", "Iso\u{2066}x", "Two\nLines",
                          "Cr\rx", "Tab\tx", "Nul\u{0}x"]

    @Test("hd-labels create and rename and hd-mark --create refuse ESC, BEL, DEL, C1, bidi marks, CR, LF, TAB, NUL: 65, escaped, nothing kept or sent")
    func refused() throws {
        let (f, fake) = try synced()
        let before = try gmailLabelNames(fake)
        let thread = try #require(try f.run("hd-ls", "--ids").lines.first)
        try fake.clearRequests()
        for name in Self.hostile where !name.contains("\u{0}") {   // NUL cannot be an argument
            for arguments in [["hd-labels", "create", name], ["hd-labels", "rename", "Work", name],
                              ["hd-mark", "--create", "+" + name, thread]] {
                let result = try CommandRunner.run(BuiltProducts.executable(arguments[0]), Array(arguments.dropFirst()),
                                                   environment: f.environment)
                #expect(result.status == 65 && result.stderr.contains("a label name cannot hold"), "\(arguments) \(result)")
                #expect(result.stderr.split(separator: "\n").count == 1
                        && !result.stderr.unicodeScalars.contains { TerminalSafetyProbe.unsafe($0) && $0 != "\n" }, "\(result)")
            }
        }
        #expect(try fake.requests().filter { $0.method != "GET" }.isEmpty)
        #expect(try gmailLabelNames(fake) == before)
        let shown = try f.run("hd-labels", "--json").lines.joined()
        #expect(!shown.contains("Bad") && !shown.contains("Flip") && shown.contains("\"Work\""), "\(shown)")
    }

    @Test("a label Gmail has with ESC and U+202E in its name: synced, shown escaped in every text output, named by that spelling or its id")
    func hostileFromGmail() throws {
        let evil = "Evil\u{1B}[2J\u{202E}"
        let (f, fake) = try synced([evil, "Work, Projects"])
        let labels = try f.run("hd-labels")
        #expect(labels.status == 0 && labels.stdout.contains("label:\"Evil\\e[2J\\u{202E}\"\t") && labels.stdout.contains("label:\"Work, Projects\"\t"),
                "\(labels)")
        #expect(!labels.stdout.unicodeScalars.contains { TerminalSafetyProbe.unsafe($0) && $0 != "\n" && $0 != "\t" }, "\(labels)")
        let json = try f.run("hd-labels", "--json").lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let record = try #require(json.first { $0["name"] as? String == evil })
        let id = try #require(record["label_id"] as? String)
        // Put both labels on a thread by the spellings text output shows.
        let thread = try #require(try f.run("hd-ls", "--ids").lines.first)
        let marked = try f.run("hd-mark", "--no-flush", "+Evil\\e[2J\\u{202E}", "+Work, Projects", thread)
        #expect(marked.status == 0, "\(marked)")
        let byEscape = try f.run("hd-ls", "-l", "Evil\\e[2J\\u{202E}", "--ids")
        let byID = try f.run("hd-ls", "-l", id, "--ids")
        #expect(byEscape.status == 0 && byEscape.lines == [thread] && byID.lines == [thread], "\(byEscape) \(byID)")
        let query = try f.run("hd-search", "--ids", "label:\"Evil\\e[2J\\u{202E}\"")
        #expect(query.status == 0 && query.lines.count >= 1, "\(query)")
        // Text: one label, one field, escaped; nothing a terminal would act on.
        let search = try f.run("hd-search", "label:\"Work, Projects\"")
        #expect(search.stdout.contains("\"Evil\\e[2J\\u{202E}\",") && search.stdout.contains("\"Work, Projects\""), "\(search)")
        let list = try f.run("hd-ls", "-l", "Work, Projects")
        #expect(list.stdout.contains("\"Evil\\e[2J\\u{202E}\",") && list.stdout.contains(",\"Work, Projects\""), "\(list)")
        let show = try f.run("hd-show", thread)
        #expect(show.stdout.contains("\nLabels: ") && show.stdout.contains("\"Evil\\e[2J\\u{202E}\", ")
                && show.stdout.contains(", \"Work, Projects\""), "\(show)")
        let pending = try f.run("hd-pending")
        #expect(pending.stdout.contains("+\"Evil\\e[2J\\u{202E}\"\t") && pending.stdout.contains("+\"Work, Projects\"\t"), "\(pending)")
        for output in [search, list, show, pending] {
            #expect(!output.stdout.unicodeScalars.contains { TerminalSafetyProbe.unsafe($0) && $0 != "\n" && $0 != "\t" }, "\(output)")
        }
        // JSON names it as it is; sync keeps it, and Gmail gets the change.
        let searchJSON = try f.run("hd-search", "--json", "label:\"Work, Projects\"")
        #expect(searchJSON.stdout.contains("\"Work, Projects\"") && searchJSON.stdout.contains("Evil\\u001b[2J\\u202e"), "\(searchJSON)")
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        #expect(try gmailLabelNames(fake).contains(evil))
        let threadID = String(thread.dropFirst("thread:".count))
        let messages = try fake.messages().filter { $0.value.thread == threadID }
        #expect(!messages.isEmpty && messages.contains { $0.value.labels.contains(id) }, "\(messages)")
    }

    @Test("a label named with a comma is one field in hd-mark --dry-run and the rules file's diagnostics")
    func commaElsewhere() throws {
        let (f, _) = try synced(["Work, Projects"])
        let thread = try #require(try f.run("hd-ls", "--ids").lines.first)
        let dry = try f.run("hd-mark", "--dry-run", "+Work, Projects", thread)
        #expect(dry.status == 0 && dry.lines.allSatisfy { $0.contains("\t+\"Work, Projects\"\t") }, "\(dry)")
        try FileManager.default.createDirectory(atPath: f.dir.path("config"), withIntermediateDirectories: true)
        try "from:nobody => +\"Trips, 2019\"\n".write(toFile: f.dir.path("config/rules"), atomically: true, encoding: .utf8)
        let check = try f.run("hd-filters", "rules", "check")
        #expect(check.status == 78 && check.stderr.contains("no label named \"Trips, 2019\""), "\(check)")
    }
}
