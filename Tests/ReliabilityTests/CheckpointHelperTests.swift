// The checkpoint after hd-mark and hd-undo, done by a helper once the command has exited
// (HudsonCLI/CheckpointHelper.swift): the command's close leaves the WAL alone while the
// helper holds the store, the helper copies it into the store file only after the
// command is gone (however it went), and then removes it.
import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("The checkpoint helper of hd-mark and hd-undo")
struct CheckpointHelperTests {
    /// A connected store on a small demo mailbox, synced, and two inbox threads.
    func prepared() throws -> (rig: Rig, fake: FakeGmail, threads: [String]) {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", "40"])
        try rig.connect()
        let sync = try rig.run("hd-sync")
        try #require(sync.status == 0, "\(sync)")
        let inbox = try rig.run("hd-ls", "--ids", "-n", "2")
        let threads = inbox.lines.filter { $0.hasPrefix("thread:") }
        try #require(threads.count == 2, "\(inbox)")
        return (rig, fake, threads)
    }

    @Test("hd-mark and hd-undo leave the WAL to their helper, which copies it into the store once the command has exited, and removes it")
    func helperCheckpointsAfterExit() throws {
        let (rig, fake, threads) = try prepared()
        let thread = threads[0]
        for (command, arguments, inInbox) in [("hd-mark", ["archive", thread], false), ("hd-undo", [String](), true)] {
            // The push the command waits for is held back two seconds: long enough to find
            // the helper while the command still runs.
            try fake.faults([["path": "odify$", "mode": "delay", "delay_ms": 2000, "times": 1]])
            let started = try rig.start(command, arguments)
            let helper = try #require(Self.helper(of: rig.storePath), "\(command): no checkpoint helper holds the store")
            // The helper goes on when every writer of its standard input is gone: this test
            // becomes one too, and so holds it back past the command's exit. (Stopping it
            // with SIGSTOP would not do: the command's exit orphans their process group,
            // and the kernel then sends its stopped members SIGHUP and SIGCONT.)
            let hold = open("/proc/\(helper)/fd/0", O_WRONLY | O_CLOEXEC)
            try #require(hold >= 0, "cannot open the helper's pipe: errno \(errno)")
            let exit = rig.finish(started)
            #expect(exit.status == 0, "\(command): \(exit)")
            #expect(SharedQuotaTests.isRunning(helper), "\(command): the helper did not wait")
            // The command is gone and its close copied nothing: the change is in the WAL
            // (every command sees it) but not yet in the store file.
            #expect(Self.walBytes(rig.storePath) > 0, "\(command): no WAL after the command")
            #expect(try Self.inInbox(thread, storeFileAlone: rig.storePath) == !inInbox,
                    "\(command): the store file already has the change; the command's close checkpointed")
            let listed = try rig.run("hd-ls", "--ids", "-n", "0")
            #expect(listed.lines.contains(thread) == inInbox, "\(command): \(listed)")
            close(hold)
            #expect(Self.waitUntilEnded(helper), "\(command): the helper \(helper) still runs")
            #expect(Self.walBytes(rig.storePath) == 0,
                    "\(command): the WAL still holds \(Self.walBytes(rig.storePath)) bytes; held by \(Self.holders(of: rig.storePath))")
            #expect(try Self.inInbox(thread, storeFileAlone: rig.storePath) == inInbox,
                    "\(command): the store file does not have the change after the helper")
        }
        try StoreDump.expectSound(rig.storePath)
    }

    @Test("hd-mark killed with SIGKILL while its push runs: the helper still copies the change into the store file, and ends")
    func helperOutlivesKilledCommand() throws {
        let (rig, fake, threads) = try prepared()
        try fake.faults([["path": "odify$", "mode": "delay", "delay_ms": 2000, "times": 1]])
        let started = try rig.start("hd-mark", ["archive", threads[1]])
        let helper = try #require(Self.helper(of: rig.storePath), "no checkpoint helper holds the store")
        // hd-mark starts its push once its change is committed.
        try #require(Self.process(["hd-sync", "--push"], path: rig.storePath) != nil, "hd-mark started no push")
        let exit = rig.kill9(started)
        #expect(exit.killed, "\(exit)")
        #expect(Self.waitUntilEnded(helper), "the helper \(helper) still runs after hd-mark was killed")
        // The push goes on and may write more; the change itself is in the store file.
        #expect(try Self.inInbox(threads[1], storeFileAlone: rig.storePath) == false, "the store file lacks the change")
        try StoreDump.expectSound(rig.storePath)
    }

    @Test("--dry-run starts no helper; only a command that declares the option runs as one")
    func helperOnlyWhenWriting() throws {
        let (rig, _, threads) = try prepared()
        let dry = try rig.run("hd-mark", "--dry-run", "archive", threads[0])
        #expect(dry.status == 0, "\(dry)")
        #expect(!FileManager.default.fileExists(atPath: rig.storePath + "-wal"), "a dry run left a WAL: its close did not checkpoint")
        let ls = try rig.run("hd-ls", "--checkpoint-helper", rig.storePath)
        #expect(ls.status == 64, "\(ls)")
        let help = try rig.run("hd-mark", "--help")
        #expect(!help.stdout.contains("checkpoint-helper"), "\(help.stdout)")
    }

    // MARK: - Support

    /// Whether the thread (`thread:ID`) is in the inbox according to the store file alone,
    /// read from a copy without its WAL.
    static func inInbox(_ thread: String, storeFileAlone path: String) throws -> Bool {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-file-\(UUID().uuidString).sqlite3").path
        defer { for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) } }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let db = try Connection(path: copy, options: ConnectionOptions(access: .readOnly))
        let id = String(thread.dropFirst("thread:".count))
        return try db.scalarInt("SELECT in_inbox FROM thread_rollup WHERE thread_id = ?", id) == 1
    }

    /// The pid of the checkpoint helper of the store at `path`, once it has the store
    /// open (before that, the command's close would still checkpoint); waited for up to 30 s.
    static func helper(of path: String) -> Int32? {
        process(["--checkpoint-helper"], path: path) { pid in
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return descriptors.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == path + "-shm"
            }
        }
    }

    /// The pid of a process whose command line has all of `words` and `path`, and for
    /// which `ready` holds; waited for up to 30 s.
    static func process(_ words: [String], path: String, ready: (Int32) -> Bool = { _ in true }) -> Int32? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry),
                      let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
                let line = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                guard line.contains(path), words.allSatisfy({ word in line.contains { $0.hasSuffix(word) } }) else { continue }
                if ready(pid) { return pid }
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    /// The size of the store's WAL (0 when there is none).
    static func walBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }

    /// The command lines of the processes that have the store open.
    static func holders(of path: String) -> [String] {
        var lines: [String] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard Int32(entry) != nil else { continue }
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd")) ?? []
            let holds = descriptors.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\($0)")) == path
            }
            guard holds, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            lines.append("\(entry): " + String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self))
        }
        return lines
    }

    /// Waits up to 30 s for `pid` to end (a zombie not yet reaped has ended).
    static func waitUntilEnded(_ pid: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while SharedQuotaTests.isRunning(pid) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return !SharedQuotaTests.isRunning(pid)
    }
}
