// hd-labels create, rename and delete, and hd-mark --create (issue 21 §2, §3), against
// the fake Gmail over HTTP: local-first (offline, every command shows the change at
// once), sent by hd-sync before the changes that use the label, and safe when an answer
// is lost, the server fails, or another device changes labels meanwhile.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Labels as objects against the fake Gmail over HTTP", .serialized)
struct LabelObjectsTests {
    /// A synced demo account with a small mailbox.
    func synced() throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "40", "--demo-span-days", "60"])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func goOffline(_ fake: FakeGmail) throws {
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
    }

    /// Gmail's user labels, by name.
    func gmailLabels(_ fake: FakeGmail) throws -> [String: String] {
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        let labels = try #require(state["labels"] as? [[String: Any]])
        var byName: [String: String] = [:]
        for label in labels where label["type"] as? String == "user" {
            byName[label["name"] as? String ?? ""] = label["id"] as? String
        }
        return byName
    }

    /// The label names hd-labels lists (what completions offer: `hd-labels --ids`).
    func shownNames(_ f: CLIFixture) throws -> [String] {
        try f.run("hd-labels", "--ids").lines.map { line in
            var name = String(line.dropFirst("label:".count))
            if name.hasPrefix("\"") { name = String(name.dropFirst().dropLast()) }
            return name
        }
    }

    func firstThreads(_ f: CLIFixture, _ count: Int) throws -> [String] {
        Array(try f.run("hd-ls", "-n", String(count), "--ids").lines.prefix(count))
    }

    func messages(of thread: String, _ fake: FakeGmail) throws -> [(key: String, value: (thread: String, labels: Set<String>, internalDate: Int64))] {
        let id = String(thread.dropFirst("thread:".count))
        return try fake.messages().filter { $0.value.thread == id }
    }

    @Test("offline: hd-mark --create +NewLabel and a rename show at once in hd-labels, label:, completions and JSON; one hd-sync sends them in order")
    func offlineCreateThenSync() throws {
        let (f, fake) = try synced()
        let targets = try firstThreads(f, 2)
        try goOffline(fake)
        let refused = try f.run("hd-mark", "+Receipts2026", targets[0])
        #expect(refused.status == 64 && refused.stderr.hasPrefix("hd-mark: Receipts2026: no such label\n"), "\(refused)")
        let mark = try f.run("hd-mark", "--create", "+Receipts2026", targets[0], targets[1])
        #expect(mark.status == 0, "\(mark)")
        #expect(mark.stderr.hasPrefix("hd-mark: created label Receipts2026\n"), "\(mark)")
        #expect(try shownNames(f).contains("Receipts2026"))
        #expect(Set(try f.run("hd-search", "--ids", "label:receipts2026").lines) == Set(targets))
        let rename = try f.run("hd-labels", "rename", "Receipts2026", "Receipts/2026")
        #expect(rename.status == 0, "\(rename)")
        #expect(try shownNames(f).contains("Receipts/2026") && !shownNames(f).contains("Receipts2026"))
        #expect(Set(try f.run("hd-search", "--ids", "label:receipts-2026").lines) == Set(targets))
        #expect(try f.run("hd-search", "--ids", "label:receipts2026").status == 1)
        #expect(Set(try f.run("hd-ls", "--label", "Receipts/2026", "--ids").lines) == Set(targets))
        let json = try f.run("hd-labels", "--json").lines.first { $0.contains("\"name\":\"Receipts/2026\"") } ?? ""
        #expect(json.contains("\"local_change\":\"create\""), "\(json)")
        // Completions ask hd-labels: the bash function offers the new name.
        f.environment["PATH"] = BuiltProducts.directory.path + ":/usr/bin:/bin"
        let completion = try f.shell("""
            source '\(FakeGmail.repositoryRoot.path)/completions/bash/hd-mark'
            COMP_LINE='hd-mark +Rec'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(hd-mark +Rec); COMP_CWORD=1
            _hudson_hd_mark; printf '%s\\n' "${COMPREPLY[@]}"
            """)
        #expect(completion.lines.contains("+Receipts/2026"), "\(completion)")
        let renaming = try f.shell("""
            source '\(FakeGmail.repositoryRoot.path)/completions/bash/hd-labels'
            COMP_LINE='hd-labels rename Rec'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(hd-labels rename Rec); COMP_CWORD=2
            _hudson_hd_labels; printf '%s\\n' "${COMPREPLY[@]}"
            """)
        #expect(Set(renaming.lines) == ["Receipts", "Receipts/2026"], "\(renaming)")
        let pending = try f.run("hd-pending")
        #expect(pending.lines.first?.hasPrefix("label:Receipts/2026\tcreate Receipts/2026\tpending\t") == true, "\(pending)")
        #expect(try gmailLabels(fake)["Receipts/2026"] == nil)

        // Back online: one pass creates the label at Gmail, then the changes that use it.
        try fake.admin("DELETE", "faults")
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        let id = try #require(try gmailLabels(fake)["Receipts/2026"])
        #expect(try gmailLabels(fake).keys.filter { $0.lowercased().hasPrefix("receipts") }.sorted() == ["Receipts", "Receipts/2026"])
        let paths = try fake.requests().map { "\($0.method) \($0.path)" }
        let create = try #require(paths.firstIndex { $0.hasSuffix("POST /gmail/v1/users/me/labels") })
        let modify = try #require(paths.firstIndex { $0.hasSuffix("/modify") || $0.hasSuffix("/batchModify") })
        #expect(create < modify, "\(paths)")
        for target in targets {
            #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })
        }
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(Set(try f.run("hd-search", "--ids", "label:receipts-2026").lines) == Set(targets))
        let label = try f.run("hd-labels", "--json").lines.first { $0.contains("\"name\":\"Receipts/2026\"") } ?? ""
        #expect(label.contains("\"label_id\":\"\(id)\"") && label.contains("\"local_change\":null"), "\(label)")
    }

    @Test("online: create with a color, rename (every message keeps the label), delete --yes (every message loses it)")
    func onlineCreateRenameDelete() throws {
        let (f, fake) = try synced()
        let create = try f.run("hd-labels", "create", "Travel/2027", "--color", "#000000:#16a766")
        #expect(create.status == 0 && create.stderr == "hd-labels: created label Travel/2027\n", "\(create)")
        let id = try #require(try gmailLabels(fake)["Travel/2027"])
        let target = try #require(try firstThreads(f, 1).first)
        #expect(try f.run("hd-mark", "+Travel/2027", target).status == 0)
        #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })

        #expect(try f.run("hd-labels", "rename", "travel/2027", "Trips/2027").status == 0)
        #expect(try gmailLabels(fake)["Trips/2027"] == id && gmailLabels(fake)["Travel/2027"] == nil)
        #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })
        #expect(try f.run("hd-search", "--ids", "label:trips/2027").lines == [target])

        // A script must say --yes; nothing is deleted without it.
        let asked = try f.run("hd-labels", "delete", "Trips/2027")
        #expect(asked.status == 64 && asked.stderr.hasPrefix("hd-labels: standard input is not a terminal: give --yes"), "\(asked)")
        #expect(try shownNames(f).contains("Trips/2027"))
        let count = try messages(of: target, fake).count
        let delete = try f.run("hd-labels", "delete", "--yes", "Trips/2027")
        #expect(delete.status == 0 && delete.stderr == "hd-labels: deleted label Trips/2027: \(count) message(s) lose it\n", "\(delete)")
        #expect(try !shownNames(f).contains("Trips/2027"))
        #expect(try f.run("hd-search", "--ids", "label:trips/2027").status == 1)
        #expect(try gmailLabels(fake)["Trips/2027"] == nil)
        #expect(try messages(of: target, fake).allSatisfy { !$0.value.labels.contains(id) })
        // Sync brings the labelRemoved echoes; nothing is left over, nothing refused.
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
        #expect(try !shownNames(f).contains("Trips/2027"))
    }

    @Test("bad input: one line, the right exit status, nothing half-done")
    func badInput() throws {
        let (f, _) = try synced()
        let before = try f.run("hd-labels").stdout
        for (arguments, status, message) in [
            (["create", ""], Int32(65), "hd-labels: a label name cannot be empty\n"),
            (["create", "  "], 65, "a label name cannot be empty\n"),
            (["create", "a\u{1B}[31mb"], 65, "a label name cannot hold control characters"),
            (["create", "INBOX"], 65, "hd-labels: INBOX: a system label; it cannot be created, renamed or deleted\n"),
            (["create", "work"], 65, "hd-labels: Work: a label with this name exists\n"),
            (["create", "X", "--color", "#123456:#16a766"], 64, "--color: "),
            (["rename", "Work", "Receipts"], 65, "hd-labels: Receipts: a label with this name exists\n"),
            (["rename", "Starred", "Stars"], 65, "a system label"),
            (["rename", "Nope", "Other"], 64, "hd-labels: Nope: no such label\n"),
            (["delete", "--yes", "Nope"], 64, "hd-labels: Nope: no such label\n"),
            (["delete", "--yes", "TRASH"], 65, "a system label"),
            (["rename", "Work"], 64, "usage: hd-labels rename"),
            (["frobnicate"], 64, "unknown command"),
        ] {
            let result = try CommandRunner.run(BuiltProducts.executable("hd-labels"), arguments, environment: f.environment)
            #expect(result.status == status && result.stderr.contains(message) && result.stdout.isEmpty,
                    "\(arguments): \(result)")
            #expect(!result.stderr.contains("\u{1B}"), "\(arguments): \(result)")
        }
        #expect(try f.run("hd-labels").stdout == before)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("a create whose answer is lost (after Gmail made the label) is not made twice; 5xx, 429 and a dropped connection leave it pending")
    func createFaults() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        for (name, rule) in [
            ("Lost/Answer", ["mode": "apply_then_drop", "times": -1] as [String: Any]),
            ("Lost/Status", ["mode": "apply_then_status", "status": 503, "times": -1]),
            ("Server/Error", ["status": 500, "times": -1]),
            ("Rate/Limited", ["status": 429, "times": -1, "retry_after": 0]),
            ("Dropped", ["mode": "drop", "times": -1]),
        ] {
            var rule = rule
            rule["method"] = "POST"
            rule["path"] = "/labels$"
            try fake.faults([rule])
            let mark = try f.run("hd-mark", "--create", "+\(name)", target)
            #expect(mark.status == 0 && mark.stderr.contains("created label \(name)"), "\(name): \(mark)")
            #expect(try f.run("hd-search", "--ids", "label:\"\(name)\"").lines == [target], "\(name)")
            let pending = try f.run("hd-pending")
            #expect(pending.lines.contains { $0.contains("\tcreate \(name)\tpending\t") }, "\(name): \(pending)")
            // The server is well again: a catch-up waits out the back-off a 5xx or 429 set.
            try fake.admin("DELETE", "faults")
            let catchUp = try f.run("hd-sync", "--catch-up")
            #expect(catchUp.status == 0, "\(name): \(catchUp)")
            let labels = try gmailLabels(fake)
            #expect(labels.keys.filter { $0 == name }.count == 1, "\(name): \(labels)")
            let id = try #require(try gmailLabels(fake)[name])
            #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) }, "\(name)")
            #expect(try f.run("hd-sync").status == 0)
            let left = try f.run("hd-pending").stdout
            #expect(left.isEmpty, "\(name): \(left)")
        }
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
    }

    @Test("a create and a delete that time out (Gmail answers after hd-mark's flush gave up, and applies them): one label, deleted once")
    func timeouts() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        try fake.faults([["method": "POST", "path": "/labels$", "delay_ms": 6000, "times": 1]])
        let mark = try f.run("hd-mark", "--create", "+Slow", target)
        #expect(mark.status == 0 && mark.stderr.contains("queued; the next hd-sync will send it"), "\(mark)")
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let labels = try gmailLabels(fake)
        #expect(labels.keys.filter { $0 == "Slow" }.count == 1, "\(labels)")
        let id = try #require(try gmailLabels(fake)["Slow"])
        #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })
        try fake.faults([["method": "DELETE", "path": "/labels/", "delay_ms": 6000, "times": 1]])
        let delete = try f.run("hd-labels", "delete", "--yes", "Slow")
        #expect(delete.status == 0 && delete.stderr.contains("queued; the next hd-sync will send it"), "\(delete)")
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        #expect(try gmailLabels(fake)["Slow"] == nil)
        #expect(try messages(of: target, fake).allSatisfy { !$0.value.labels.contains(id) })
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
    }

    @Test("while Gmail keeps failing a create, the changes that use the label wait (never sent with a provisional id, never refused) and the rest goes")
    func changesWaitForTheirLabel() throws {
        let (f, fake) = try synced()
        let targets = try firstThreads(f, 2)
        #expect(try f.run("hd-mark", "--no-flush", "--create", "+Waiting", targets[0]).status == 0)
        #expect(try f.run("hd-mark", "--no-flush", "star", targets[1]).status == 0)
        try fake.faults([["method": "POST", "path": "/labels$", "status": 500, "times": -1]])
        let pass = try f.run("hd-sync")
        #expect(pass.status == 0 || pass.status == 75, "\(pass)")
        #expect(try messages(of: targets[1], fake).contains { $0.value.labels.contains("STARRED") })
        let pending = try f.run("hd-pending")
        #expect(pending.lines.contains { $0.contains("\tcreate Waiting\tpending\t") }, "\(pending)")
        #expect(pending.lines.contains { $0.contains("\t+Waiting\tpending\t") }, "\(pending)")
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
        #expect(try f.run("hd-search", "--ids", "label:waiting").lines == [targets[0]])
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let id = try #require(try gmailLabels(fake)["Waiting"])
        #expect(try messages(of: targets[0], fake).allSatisfy { $0.value.labels.contains(id) })
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("a rename or delete whose answer is lost, or that meets a 5xx, reaches Gmail once; nothing is treated as unsent")
    func renameDeleteFaults() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        #expect(try f.run("hd-labels", "create", "Alpha").status == 0)
        #expect(try f.run("hd-mark", "+Alpha", target).status == 0)
        let id = try #require(try gmailLabels(fake)["Alpha"])
        try fake.faults([["method": "PATCH", "path": "/labels/", "mode": "apply_then_drop", "times": -1]])
        let rename = try f.run("hd-labels", "rename", "Alpha", "Beta")
        #expect(rename.status == 0 && rename.stderr.contains("queued; the next hd-sync will send it"), "\(rename)")
        #expect(try gmailLabels(fake)["Beta"] == id)  // Gmail applied it; the answer was lost
        #expect(try shownNames(f).contains("Beta") && !shownNames(f).contains("Alpha"))
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        #expect(try gmailLabels(fake)["Beta"] == id && f.run("hd-pending", "--count").stdout == "0\n")

        try fake.faults([["method": "DELETE", "path": "/labels/", "mode": "apply_then_status", "status": 500, "times": 1],
                         ["method": "DELETE", "path": "/labels/", "status": 503, "times": -1]])
        let delete = try f.run("hd-labels", "delete", "--yes", "Beta")
        #expect(delete.status == 0, "\(delete)")
        #expect(try gmailLabels(fake)["Beta"] == nil)
        #expect(try f.run("hd-search", "--ids", "label:beta").status == 1)
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync", "--catch-up").status == 0)
        let left = try f.run("hd-pending").stdout
        #expect(left.isEmpty, "\(left)")
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
        #expect(try messages(of: target, fake).allSatisfy { !$0.value.labels.contains(id) })
        #expect(try !shownNames(f).contains("Beta"))
    }

    @Test("another device: a label created, renamed or deleted elsewhere shows at the next hd-sync; a local change using a deleted label is refused once, recorded, and the rest is sent")
    func anotherDevice() throws {
        let (f, fake) = try synced()
        let targets = try firstThreads(f, 2)
        _ = try fake.admin("POST", "create-label", ["name": "Remote/New"])
        let workID = try #require(try gmailLabels(fake)["Work"])
        _ = try fake.admin("POST", "rename-label", ["id": workID, "name": "Job"])
        #expect(try f.run("hd-sync").status == 0)
        let names = try shownNames(f)
        #expect(names.contains("Remote/New") && names.contains("Job") && !names.contains("Work"), "\(names)")
        #expect(try f.run("hd-search", "--ids", "label:work").status == 1)

        // Queue an add of "Job" offline; meanwhile it is deleted elsewhere.
        #expect(try f.run("hd-mark", "--no-flush", "+Job", targets[0]).status == 0)
        #expect(try f.run("hd-mark", "--no-flush", "star", targets[1]).status == 0)
        _ = try fake.admin("POST", "delete-label", ["id": workID])
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        #expect(try !shownNames(f).contains("Job"))
        #expect(try f.run("hd-sync").status == 0)
        let left = try f.run("hd-pending").stdout
        #expect(left.isEmpty, "\(left)")
        let rejected = try f.run("hd-pending", "--rejected")
        #expect(rejected.lines.count >= 1 && rejected.lines.allSatisfy { $0.contains("rejected") }, "\(rejected)")
        #expect(try messages(of: targets[1], fake).contains { $0.value.labels.contains("STARRED") })
    }

    @Test("a provisional label and one created elsewhere with the same name become one label")
    func nameClash() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        try goOffline(fake)
        #expect(try f.run("hd-mark", "--create", "+Shared", target).status == 0)
        try fake.admin("DELETE", "faults")
        _ = try fake.admin("POST", "create-label", ["name": "shared"])
        let id = try #require(try gmailLabels(fake)["shared"])
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        #expect(try gmailLabels(fake).keys.filter { $0.lowercased() == "shared" }.count == 1)
        #expect(try shownNames(f).filter { $0.lowercased() == "shared" }.count == 1)
        #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("a rename Gmail refuses (the name is taken there) is recorded and shown, and does not hold up the queue")
    func refusedRename() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        try goOffline(fake)
        #expect(try f.run("hd-labels", "rename", "Family", "Kin").status == 0)
        #expect(try f.run("hd-mark", "archive", target).status == 0)
        try fake.admin("DELETE", "faults")
        _ = try fake.admin("POST", "create-label", ["name": "Kin"])
        let sync = try f.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        #expect(sync.stderr.contains("label operation(s) refused by Gmail"), "\(sync)")
        let rejected = try f.run("hd-pending", "--rejected", "--json")
        #expect(rejected.lines.contains { $0.contains("\"type\":\"rejected_label_change\"") && $0.contains("\"op\":\"rename\"") }, "\(rejected)")
        #expect(try shownNames(f).contains("Family"))
        #expect(try messages(of: target, fake).allSatisfy { !$0.value.labels.contains("INBOX") })
    }

    @Test("offline: rename Work to Jobs, delete Family, rename Jobs to Family: Gmail gets them so that the last one is not refused")
    func renameOntoADeletedName() throws {
        let (f, fake) = try synced()
        let workID = try #require(try gmailLabels(fake)["Work"])
        try goOffline(fake)
        #expect(try f.run("hd-labels", "rename", "Work", "Jobs").status == 0)
        #expect(try f.run("hd-labels", "delete", "--yes", "Family").status == 0)
        let rename = try f.run("hd-labels", "rename", "Jobs", "Family")
        #expect(rename.status == 0, "\(rename)")
        #expect(try shownNames(f).filter { $0 == "Family" || $0 == "Work" || $0 == "Jobs" } == ["Family"])
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-sync").status == 0)
        let labels = try gmailLabels(fake)
        #expect(labels["Family"] == workID && labels["Work"] == nil && labels["Jobs"] == nil, "\(labels)")
        #expect(try f.run("hd-pending", "--rejected", "--count").stdout == "0\n")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("a create Gmail refuses (a name it reserves) is said at once, exits 65, is undone here and listed by hd-pending --rejected")
    func refusedCreate() throws {
        let (f, fake) = try synced()
        let create = try f.run("hd-labels", "create", "Sent Mail")
        #expect(create.status == 65, "\(create)")
        #expect(create.stderr.contains("hd-labels: Gmail refused it: ") && create.stderr.contains("Invalid label name"), "\(create)")
        #expect(try !shownNames(f).contains("Sent Mail") && gmailLabels(fake)["Sent Mail"] == nil)
        let rejected = try f.run("hd-pending", "--rejected", "--json")
        #expect(rejected.lines.contains { $0.contains("\"type\":\"rejected_label_change\"") && $0.contains("\"op\":\"create\"") }, "\(rejected)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("on a terminal, delete says how many messages lose the label and asks: n keeps it, y deletes it",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script(1) gives the command a terminal"))
    func deleteAsksOnATerminal() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        // script(1) runs the command on a pseudo-terminal fed from the pipe.
        let no = try f.shell("echo n | script -qec 'hd-labels delete --no-flush Work' /dev/null")
        #expect(no.status == 0 && no.stdout.contains("delete label Work? 2 message(s) lose it [y/N]"), "\(no)")
        #expect(no.stdout.contains("hd-labels: not deleted"), "\(no)")
        #expect(try f.run("hd-labels", "--ids").lines.contains("label:Work"))
        let yes = try f.shell("echo y | script -qec 'hd-labels delete --no-flush Work' /dev/null")
        #expect(yes.status == 0 && yes.stdout.contains("hd-labels: deleted label Work: 2 message(s) lose it"), "\(yes)")
        #expect(try !f.run("hd-labels", "--ids").lines.contains("label:Work"))
        #expect(try f.run("hd-search", "--ids", "label:work").status == 1)
    }

    @Test("hd-undo of hd-mark --create +New removes the label from the messages; the label stays")
    func undoCreate() throws {
        let (f, fake) = try synced()
        let target = try #require(try firstThreads(f, 1).first)
        #expect(try f.run("hd-mark", "--create", "+Undoable", target).status == 0)
        let id = try #require(try gmailLabels(fake)["Undoable"])
        #expect(try messages(of: target, fake).allSatisfy { $0.value.labels.contains(id) })
        #expect(try f.run("hd-undo").status == 0)
        #expect(try f.run("hd-search", "--ids", "label:undoable").status == 1)
        #expect(try messages(of: target, fake).allSatisfy { !$0.value.labels.contains(id) })
        #expect(try shownNames(f).contains("Undoable") && gmailLabels(fake)["Undoable"] == id)

        // Offline: the undo cancels the change that never left; the label is still created.
        try goOffline(fake)
        let offlineMark = try f.run("hd-mark", "--create", "+Offline/Undo", target)
        #expect(offlineMark.status == 0, "\(offlineMark)")
        let offlineUndo = try f.run("hd-undo")
        #expect(offlineUndo.status == 0, "\(offlineUndo)")
        #expect(try f.run("hd-search", "--ids", "label:offline/undo").status == 1)
        let pending = try f.run("hd-pending")
        let about = pending.lines.filter { $0.contains("Offline/Undo") }
        #expect(about.count == 1 && about[0].contains("\tcreate Offline/Undo\tpending\t"), "\(pending)")
        try fake.admin("DELETE", "faults")
        #expect(try f.run("hd-sync").status == 0)
        let made = try #require(try gmailLabels(fake)["Offline/Undo"])
        #expect(try fake.messages().values.allSatisfy { !$0.labels.contains(made) })
    }
}
