// Concurrency (issue 10): one `hd-sync --watch` backfilling a large mailbox, eight
// reader loops (hd-ls, hd-search, hd-show: Tests/Reliability/readers.sh) and one
// hd-mark loop on the same store for a fixed time. No busy or locked error may
// surface, every mark must be queued, shown at once and finally reach Gmail, and no
// reader may see half a page: a checker reads the store in snapshots throughout and
// checks what holds only between transactions (a page's messages arrive with the
// backfill progress that lists them; each thread's rollup counts its messages and
// shows its effective INBOX). The same run with writes begun DEFERRED must fail,
// which shows the test can see what it looks for (sqlite-notes.md "Transactions").
// And a reader holding a snapshot for a long while must not leave the WAL growing
// once it lets go (sqlite-notes.md: "checkpoints cannot pass a long-lived reader").
import Foundation
import HudsonTestSupport
import SQLite
import Testing

/// Reads the store in snapshots on its own thread until stopped and records every
/// snapshot in which an invariant of whole transactions does not hold.
final class SnapshotChecker: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var stopped = false
    private(set) var snapshots = 0
    private(set) var violations: [String] = []
    private var thread: Thread?

    init(path: String) { self.path = path }

    func start() {
        let thread = Thread { [self] in run() }
        self.thread = thread
        thread.start()
    }

    func stop() -> (snapshots: Int, violations: [String]) {
        lock.withLock { stopped = true }
        while lock.withLock({ thread != nil }) { Thread.sleep(forTimeInterval: 0.01) }
        return lock.withLock { (snapshots, violations) }
    }

    private func run() {
        defer { lock.withLock { thread = nil } }
        guard let db = try? Connection(path: path, options: ConnectionOptions(access: .readOnly)) else {
            lock.withLock { violations.append("cannot open the store") }
            return
        }
        while !lock.withLock({ stopped }) {
            do {
                let found: [String] = try db.read {
                    var found: [String] = []
                    let listed = try db.scalarInt("SELECT coalesce(sum(backfill_listed), 0) FROM accounts") ?? 0
                    let stored = try db.scalarInt("SELECT count(*) FROM messages") ?? 0
                    if listed != stored { found.append("\(stored) messages stored but \(listed) listed") }
                    let miscounted = try db.scalarInt("""
                        SELECT count(*) FROM thread_rollup AS r
                         WHERE r.message_count <> (SELECT count(*) FROM messages AS m
                                                    WHERE m.account_id = r.account_id AND m.thread_id = r.thread_id)
                        """) ?? 0
                    if miscounted > 0 { found.append("\(miscounted) rollup rows miscount their thread") }
                    let inbox = try db.scalarInt("""
                        SELECT count(*) FROM thread_rollup AS r
                         WHERE r.in_inbox <> EXISTS (SELECT 1 FROM messages AS m JOIN effective_labels AS e ON e.message_id = m.id
                                                      WHERE m.account_id = r.account_id AND m.thread_id = r.thread_id
                                                        AND e.label = 'INBOX'
                                                        AND NOT EXISTS (SELECT 1 FROM effective_labels AS x
                                                                         WHERE x.message_id = m.id AND x.label IN ('TRASH', 'SPAM')))
                        """) ?? 0
                    // (A message in trash or spam keeps no thread in the inbox: EffectiveLabels.listed.)
                    if inbox > 0 { found.append("\(inbox) rollup rows disagree with effective INBOX outside trash and spam") }
                    return found
                }
                lock.withLock {
                    snapshots += 1
                    violations += found
                }
            } catch {
                lock.withLock { violations.append("checker: \(error)") }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

@Suite("Concurrency: a backfilling hd-sync --watch, eight readers and hd-mark on one store", .serialized)
struct ConcurrencyTests {
    struct Outcome {
        var readerFailures: [String] = []
        var readerRuns = 0
        var markFailures: [String] = []
        var marks = 0
        var watch: Exit?
        var snapshots = 0
        var violations: [String] = []
    }

    /// A connected store with a first pass done (so there is mail to mark), and the
    /// large mailbox still mostly to backfill.
    func prepared(environment extra: [String: String] = [:]) throws -> (Rig, FakeGmail, [String]) {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", String(Scale.pick(6000, long: 40_000)), "--demo-span-days", "3000"])
        try rig.connect()
        let first = try rig.run("hd-sync", ["--max-pages", "1", "--prefetch-days", "0"], environment: extra)
        #expect(first.status == 0, "\(first)")
        let ids = try rig.run("hd-search", "--messages", "--ids", "-n", "60", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) }
        #expect(ids.count == 60)
        return (rig, fake, ids)
    }

    /// The run: watch, readers and marker for `seconds`, all with `extra` in their environment.
    func contend(_ rig: Rig, messages: [String], seconds: Int, environment extra: [String: String] = [:],
                 intended: inout [String: (label: String, present: Bool)]) throws -> Outcome {
        var outcome = Outcome()
        let checker = SnapshotChecker(path: rig.storePath)
        checker.start()
        let watch = try rig.start("hd-sync", ["--watch", "--prefetch-days", "0", "--max-pages", "10"], environment: extra)
        let out = rig.dir.path("readers")
        var readerEnvironment = extra
        readerEnvironment["PATH"] = BuiltProducts.directory.path + ":/usr/bin:/bin"
        let readers = try rig.start("/bin/bash", [FakeGmail.repositoryRoot.appendingPathComponent("Tests/Reliability/readers.sh").path,
                                                  String(seconds), out, "8"], environment: readerEnvironment)

        // The marker: message-level marks (the last one for each message decides what
        // Gmail must finally hold), every third one flushed by hd-mark itself. It runs
        // for `seconds` and then on until it has made more than 20 marks (what the tests
        // ask of a run; each takes two to three processes, and a machine busy with other
        // builds and parallel suites made exactly 20 in 20 s), for five times as long at most.
        var generator = SeededGenerator(seed: 42)
        let deadline = Date().addingTimeInterval(Double(seconds))
        let cutoff = Date().addingTimeInterval(Double(seconds) * 5)
        let actions: [(String, String, Bool)] = [("star", "STARRED", true), ("unstar", "STARRED", false),
                                                 ("+Work", "Label_1", true), ("-Work", "Label_1", false)]
        while Date() < deadline || (outcome.marks <= 20 && Date() < cutoff) {
            let id = messages[Int.random(in: 0..<messages.count, using: &generator)]
            let (action, label, present) = actions[Int.random(in: 0..<actions.count, using: &generator)]
            let flush = outcome.marks % 3 == 0
            let mark = try rig.run("hd-mark", (flush ? [] : ["--no-flush"]) + [action, "message:\(id)"], environment: extra)
            outcome.marks += 1
            let noise = mark.stderr.split(separator: "\n").filter { !$0.hasSuffix("queued; the next hd-sync will send it") }
            if mark.status != 0 || !noise.isEmpty {
                outcome.markFailures.append("hd-mark \(action) \(id): exit \(mark.status): \(mark.stderr)")
                continue
            }
            intended[id + " " + label] = (label, present)
            // Every command shows it at once (the overlay), whatever sync is doing.
            let shown = try rig.run("hd-show", ["--no-fetch", "--json", "message:\(id)"], environment: extra)
            let labels = (try? JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])?["label_ids"] as? [String]
            if shown.status != 0 || !shown.stderr.isEmpty || labels.map({ $0.contains(label) == present }) != true {
                outcome.markFailures.append("after hd-mark \(action) \(id), hd-show: exit \(shown.status) \(labels ?? []) \(shown.stderr)")
            }
        }
        let readerExit = rig.finish(readers, timeout: Double(seconds) + 60)
        #expect(readerExit.status == 0, "\(readerExit)")
        watch.signal(SIGINT)
        outcome.watch = rig.finish(watch, timeout: 60)
        (outcome.snapshots, outcome.violations) = checker.stop()
        let failures = (try? String(contentsOfFile: out + "/failures", encoding: .utf8)) ?? "(no failures file)"
        outcome.readerFailures = failures.split(separator: "\n").map(String.init)
        for loop in 1...8 {
            outcome.readerRuns += Int(((try? String(contentsOfFile: out + "/count.\(loop)", encoding: .utf8)) ?? "0")
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        rig.record(outcome.readerFailures.joined(separator: "\n") + outcome.markFailures.joined(separator: "\n"))
        return outcome
    }

    @Test("zero busy errors, every mark queued and shown at once, no half-applied page, and Gmail gets every mark")
    func contention() throws {
        let (rig, fake, messages) = try prepared()
        var intended: [String: (label: String, present: Bool)] = [:]
        let outcome = try contend(rig, messages: messages, seconds: Scale.pick(20, long: 180), intended: &intended)
        #expect(outcome.readerFailures.isEmpty, "reader failures: \(outcome.readerFailures.prefix(10))")
        #expect(outcome.markFailures.isEmpty, "hd-mark failures: \(outcome.markFailures.prefix(10))")
        #expect(outcome.violations.isEmpty, "half-applied states seen: \(outcome.violations.prefix(10))")
        #expect(outcome.watch?.status == 0 && outcome.watch?.killed == false, "\(outcome.watch.map(String.init(describing:)) ?? "")")
        #expect(outcome.watch?.stderr.isEmpty == true, "hd-sync --watch: \(outcome.watch?.stderr ?? "")")
        #expect(outcome.readerRuns > 8 * 20, "the readers ran only \(outcome.readerRuns) commands")
        #expect(outcome.marks > 20, "only \(outcome.marks) marks")
        #expect(outcome.snapshots > 20, "only \(outcome.snapshots) snapshots checked")
        Report.note("readers ran \(outcome.readerRuns) commands, \(outcome.marks) marks, \(outcome.snapshots) snapshots")

        // Every mark reaches Gmail once the queue is drained.
        let drained = try rig.run("hd-sync", "--catch-up", "--prefetch-days", "1", timeout: 600)
        #expect(drained.status == 0, "\(drained)")
        #expect(try rig.queue().isEmpty)
        let server = try fake.messages()
        for (key, mark) in intended {
            let id = String(key.split(separator: " ")[0])
            #expect(server[id]?.labels.contains(mark.label) == mark.present, "\(id): \(mark.label) should be \(mark.present)")
        }
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
        try rig.expectNoSecretsLeaked()
    }

    @Test("the negative control: with write transactions begun DEFERRED, the same run surfaces busy errors")
    func deferredWritesFail() throws {
        let deferred = ["HUDSON_TEST_DEFERRED_WRITES": "1"]
        let (rig, _, messages) = try prepared()
        // A deferred writer fails only when another writer commits between its read and
        // its write: a matter of timing, seen in about half of the 10 s runs on an idle
        // machine and in fewer on a busy one (parallel `swift test`, other builds). So the
        // control runs until it sees one, for up to three minutes, rather than three runs;
        // with BEGIN IMMEDIATE (the test above) no run of any length may surface one.
        var seen = false
        var attempt = 0
        let giveUp = Date().addingTimeInterval(Double(Scale.pick(180, long: 600)))
        while !seen && (attempt == 0 || Date() < giveUp) {
            attempt += 1
            var intended: [String: (label: String, present: Bool)] = [:]
            let outcome = try contend(rig, messages: messages, seconds: Scale.pick(10, long: 60), environment: deferred,
                                      intended: &intended)
            let busy = (outcome.readerFailures + outcome.markFailures + [outcome.watch?.stderr ?? ""])
                .filter { $0.contains("busy") || $0.contains("locked") }
            Report.note("deferred, run \(attempt): \(busy.count) busy errors; watch \(outcome.watch.map { "\($0.status)" } ?? "?")")
            seen = !busy.isEmpty || outcome.watch?.status != 0
        }
        #expect(seen, "with deferred writes no busy error surfaced in \(attempt) runs: the concurrency test could not see one")
    }

    @Test("a reader holding a snapshot makes the WAL grow, and once it ends the WAL is started over")
    func walAfterLongReader() throws {
        let rig = Rig()
        try rig.startFake(["--demo", "--demo-count", String(Scale.pick(16_000, long: 60_000)), "--demo-span-days", "3000"])
        try rig.connect()
        let wal = rig.storePath + "-wal"
        // The WAL header's checkpoint sequence number and salts (bytes 12..<24) change each
        // time a writer starts the WAL over from its first frame, and a TRUNCATE checkpoint
        // empties the file: either is the WAL being reused rather than added to
        // (sqlite.org/fileformat2.html, "WAL File Format").
        func walState() -> (size: Int64, generation: Data) {
            let size = ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? NSNumber)?.int64Value ?? 0
            guard let handle = FileHandle(forReadingAtPath: wal) else { return (size, Data()) }
            defer { try? handle.close() }
            let header = (try? handle.read(upToCount: 24)) ?? Data()
            return (size, header.count == 24 ? header.subdata(in: 12..<24) : Data())
        }
        let watch = try rig.start("hd-sync", ["--watch", "--prefetch-days", "0", "--max-pages", "20"])
        Thread.sleep(forTimeInterval: 2)
        // The long reader: a snapshot held for a while, as a slow script's query would.
        let reader = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readOnly))
        var atEnd = walState()
        let atStart = atEnd.size
        try reader.read {
            _ = try reader.scalarInt("SELECT count(*) FROM messages")
            Thread.sleep(forTimeInterval: Scale.pick(6, long: 30))
            // No checkpoint can pass the held snapshot, so the WAL has not been started
            // over since the read began: this is the generation a restart must change.
            atEnd = walState()
        }
        // With readers of every kind going on, the writer keeps writing. How far the WAL
        // grows while eight readers overlap without a gap is SQLite's checkpoint starvation
        // (sqlite.org/wal.html, "Avoiding Excessively Large WAL Files"), not this test's
        // concern; what the held snapshot must not do is keep the WAL from being started
        // over once it has ended.
        let out = rig.dir.path("readers")
        let readers = try rig.start("/bin/bash", [FakeGmail.repositoryRoot.appendingPathComponent("Tests/Reliability/readers.sh").path,
                                                  String(Scale.pick(10, long: 60)), out, "8"],
                                    environment: ["PATH": BuiltProducts.directory.path + ":/usr/bin:/bin"])
        let messagesAtEnd = try rig.scalar("SELECT count(*) FROM messages") ?? 0
        var largest = atEnd.size
        var startedOver: (seconds: Double, size: Int64)?
        let released = Date()
        func sample() {
            let now = walState()
            largest = max(largest, now.size)
            if startedOver == nil && (now.size < atEnd.size || now.generation != atEnd.generation) {
                startedOver = (Date().timeIntervalSince(released), now.size)
            }
        }
        // The readers stop starting commands after their run time; a reader command that
        // never ended would keep the script, and this loop, going: finish's limit ends it.
        let readersEnd = Date().addingTimeInterval(Double(Scale.pick(10, long: 60)) + 60)
        while readers.isRunning && Date() < readersEnd {
            sample()
            Thread.sleep(forTimeInterval: 0.05)
        }
        rig.finish(readers, timeout: 60)
        // Readers gone, the watch still writing: the next checkpoint completes.
        let quiet = Date()
        while startedOver == nil && Date().timeIntervalSince(quiet) < 20 {
            sample()
            Thread.sleep(forTimeInterval: 0.05)
        }
        let written = (try rig.scalar("SELECT count(*) FROM messages") ?? 0) - messagesAtEnd
        watch.signal(SIGINT)
        let watched = rig.finish(watch, timeout: 60)
        #expect(watched.status == 0, "\(watched)")
        Report.note("WAL: \(atStart) bytes before the reader, \(atEnd.size) when it ended, "
            + (startedOver.map { "started over \(String(format: "%.1f", $0.seconds)) s later at \($0.size) bytes" } ?? "never started over")
            + ", at most \(largest) bytes after; \(written) messages written after")
        // The measurement sees growth: while the snapshot was held the WAL grew.
        #expect(atEnd.size - atStart > 4 << 20, "the WAL grew only \(atEnd.size - atStart) bytes during the long read")
        // Enough was written after the reader ended that a WAL never started over would
        // have had to grow (400 messages are four pages, several megabytes of frames).
        #expect(written > 400, "too little was written after the reader ended (\(written) messages) to tell")
        #expect(startedOver != nil, "the WAL was never started over after the long reader ended (\(atEnd.size) -> \(largest) bytes)")
        try rig.expectNoSecretsLeaked()
    }
}
