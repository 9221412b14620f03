import Foundation
import HudsonTestSupport
import Testing

@Suite("hd-mark trash, untrash, spam, unspam, important against the fake Gmail over HTTP", .serialized)
struct TrashSpamCommandTests {
    func synced(count: Int = 300, lookbackDays: Int = 90) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", "\(count)", "--demo-span-days", "730"])
        try f.connect(fake, lookbackDays: lookbackDays)
        let sync = try f.run("hd-sync", "--catch-up", "--prefetch-days", "0")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }

    func threads(_ output: String) -> [String] {
        output.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    func id(_ reference: String) -> String { String(reference.drop { $0 != ":" }.dropFirst()) }

    /// The stored messages of a thread, as the server has them now.
    func serverThread(_ fake: FakeGmail, _ f: CLIFixture, _ thread: String) throws -> [String: Set<String>] {
        let stored = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines.map(id))
        var result: [String: Set<String>] = [:]
        for (message, value) in try fake.messages() where value.thread == id(thread) && stored.contains(message) {
            result[message] = value.labels
        }
        return result
    }

    func writes(_ fake: FakeGmail) throws -> [String] {
        try fake.requests().map(\.path).filter { $0.hasSuffix("/modify") || $0.hasSuffix("/batchModify") || $0.hasSuffix("trash") }
    }

    @Test("offline, trash leaves every list and search but in:trash at once; online, one hd-sync sends it and the echo retires it")
    func offlineTrashThenSync() throws {
        let (f, fake) = try synced()
        let targets = Array(threads(try f.run("hd-ls", "-n", "3").stdout))
        #expect(targets.count == 3)
        try fake.faults([["mode": "drop", "times": -1, "path": "^/(gmail|batch|token)"]])
        let mark = try f.run("hd-mark", "trash", targets[0], targets[1], targets[2])
        #expect(mark.status == 0 && mark.stderr == "hd-mark: queued; the next hd-sync will send it\n", "\(mark)")
        #expect(Set(threads(try f.run("hd-ls", "-n", "0").stdout)).isDisjoint(with: targets))
        #expect(Set(threads(try f.run("hd-search", "-n", "0", "in:trash").stdout)).isSuperset(of: targets))
        #expect(Set(threads(try f.run("hd-search", "-n", "0", "is:unread").stdout)).isDisjoint(with: targets))
        let pending = try f.run("hd-pending").lines
        #expect(pending.contains { $0.contains("\t+TRASH\tpending\t") }, "\(pending)")

        try fake.admin("DELETE", "faults")
        try fake.clearRequests()
        #expect(try f.run("hd-sync").status == 0)
        #expect(try writes(fake).allSatisfy { $0.hasSuffix("/batchModify") || $0.hasSuffix("/modify") })
        for thread in targets {
            for (message, labels) in try serverThread(fake, f, thread) {
                #expect(labels.contains("TRASH") && !labels.contains("INBOX"), "\(message): \(labels.sorted())")
            }
        }
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(Set(threads(try f.run("hd-search", "-n", "0", "in:trash").stdout)).isSuperset(of: targets))
        #expect(Set(threads(try f.run("hd-ls", "-n", "0").stdout)).isDisjoint(with: targets))
    }

    @Test("undo of a trash whose batchModify answer was lost after Gmail applied it puts the thread back, at Gmail too")
    func undoAfterLostAnswer() throws {
        let (f, fake) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let before = try serverThread(fake, f, target)
        try fake.faults([["mode": "apply_then_drop", "times": 1, "path": "/(modify|batchModify)$"]])
        let mark = try f.run("hd-mark", "trash", target)
        #expect(mark.status == 0, "\(mark)")
        #expect(try serverThread(fake, f, target).values.allSatisfy { $0.contains("TRASH") })
        let undo = try f.run("hd-undo")
        #expect(undo.status == 0, "\(undo)")
        #expect(threads(try f.run("hd-ls", "-n", "1").stdout).first == target)
        for _ in 0..<3 where try f.run("hd-pending", "--count").stdout != "0\n" {
            #expect(try f.run("hd-sync").status == 0)
        }
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
        #expect(try serverThread(fake, f, target) == before)
        #expect(threads(try f.run("hd-ls", "-n", "1").stdout).first == target)
    }

    @Test("mail trashed on another device arrives in in:trash; untrash brings it back to the inbox at Gmail; a thread partly in trash stays listed")
    func untrashFromAnotherDevice() throws {
        let (f, fake) = try synced()
        // A thread of two messages or more, in the inbox.
        var chosen: (thread: String, messages: [String])?
        for thread in threads(try f.run("hd-ls", "-n", "0").stdout) {
            let members = try serverThread(fake, f, thread).keys.sorted()
            if members.count >= 2 { chosen = (thread, members); break }
        }
        let (thread, members) = try #require(chosen)
        try fake.modify(members[0], add: ["TRASH"], remove: ["INBOX"])
        #expect(try f.run("hd-sync").status == 0)
        #expect(threads(try f.run("hd-search", "--messages", "-n", "0", "in:trash").stdout).contains("message:\(members[0])"))
        #expect(!threads(try f.run("hd-search", "--messages", "-n", "0", "in:anywhere", "-in:trash").stdout).contains("message:\(members[0])"))
        let mark = try f.run("hd-mark", "untrash", thread)
        #expect(mark.status == 0, "\(mark)")
        let server = try serverThread(fake, f, thread)
        #expect(server[members[0]]?.contains("TRASH") == false && server[members[0]]?.contains("INBOX") == true, "\(server)")
        #expect(threads(try f.run("hd-search", "-n", "0", "in:trash").stdout).contains(thread) == false)
    }

    @Test("spam, unspam and important reach Gmail as label changes; in:spam and is:important follow at once")
    func spamAndImportant() throws {
        let (f, fake) = try synced()
        let targets = threads(try f.run("hd-ls", "-n", "2").stdout)
        #expect(try f.run("hd-mark", "spam", targets[0]).status == 0)
        #expect(threads(try f.run("hd-search", "-n", "0", "in:spam").stdout).contains(targets[0]))
        #expect(!threads(try f.run("hd-ls", "-n", "0").stdout).contains(targets[0]))
        for labels in try serverThread(fake, f, targets[0]).values {
            #expect(labels.contains("SPAM") && !labels.contains("INBOX") && !labels.contains("TRASH"), "\(labels.sorted())")
        }
        #expect(try f.run("hd-mark", "unspam", targets[0]).status == 0)
        #expect(threads(try f.run("hd-ls", "-n", "0").stdout).contains(targets[0]))
        for labels in try serverThread(fake, f, targets[0]).values { #expect(!labels.contains("SPAM")) }

        #expect(try f.run("hd-mark", "unimportant", targets[1]).status == 0)
        #expect(!threads(try f.run("hd-search", "-n", "0", "is:important").stdout).contains(targets[1]))
        #expect(try f.run("hd-mark", "important", targets[1]).status == 0)
        #expect(threads(try f.run("hd-search", "-n", "0", "is:important").stdout).contains(targets[1]))
        for labels in try serverThread(fake, f, targets[1]).values { #expect(labels.contains("IMPORTANT")) }
        #expect(try f.run("hd-sync").status == 0)
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }

    @Test("1,000 threads trashed reach Gmail in at most 5 label-changing requests")
    func thousandThreads() throws {
        let (f, fake) = try synced(count: 3_000, lookbackDays: 1_000)
        let targets = threads(try f.run("hd-search", "-n", "1000", "in:anywhere", "-in:trash", "-in:spam").stdout)
        #expect(targets.count == 1000)
        let mark = try f.run("hd-mark", "--no-flush", "trash", stdin: targets.joined(separator: "\n") + "\n")
        #expect(mark.status == 0, "\(mark)")
        try fake.clearRequests()
        #expect(try f.run("hd-sync", "--push").status == 0)
        let sent = try writes(fake)
        #expect(!sent.isEmpty && sent.count <= 5, "\(sent.count) requests: \(sent.prefix(10))")
        let server = try fake.messages()
        let stored = Set(try f.run("hd-search", "--messages", "--ids", "in:anywhere").lines.map(id))
        let trashedThreads = Set(targets.map(id))
        let untrashed = server.filter { trashedThreads.contains($0.value.thread) && stored.contains($0.key) && !$0.value.labels.contains("TRASH") }
        #expect(untrashed.isEmpty, "\(untrashed.count) messages not trashed at Gmail")
    }

    @Test("permanent deletion is not an action: a clear usage error, nothing queued")
    func noDelete() throws {
        let (f, _) = try synced()
        let target = try #require(threads(try f.run("hd-ls", "-n", "1").stdout).first)
        let result = try f.run("hd-mark", "delete", target)
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("no action"), "\(result)")
        #expect(try f.run("hd-pending", "--count").stdout == "0\n")
    }
}
