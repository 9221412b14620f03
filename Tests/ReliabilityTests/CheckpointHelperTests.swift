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
        let store = Self.resolved(rig.storePath)
        // A descriptor the command inherits without close-on-exec, as from a caller's
        // `3>>FILE`: the helper must not keep it (nor keep a caller's pipe open).
        let inherited = rig.dir.path("inherited")
        _ = FileManager.default.createFile(atPath: inherited, contents: nil)
        for (command, arguments, inInbox) in [("hd-mark", ["archive", thread], false), ("hd-undo", [String](), true)] {
            // The push the command waits for is held back two seconds: long enough to find
            // the helper while the command still runs.
            try fake.faults([["path": "odify$", "mode": "delay", "delay_ms": 2000, "times": 1]])
            let started = try rig.start("/bin/sh", ["-c", "exec 3>>\"$0\"; exec \"$@\"", inherited,
                                                    BuiltProducts.executable(command).path] + arguments)
            let helper = try #require(Self.helper(of: rig.storePath), "\(command): no checkpoint helper holds the store")
            // The helper goes on when every writer of its standard input is gone: this test
            // becomes one too, and so holds it back past the command's exit. (Stopping it
            // with SIGSTOP would not do: the command's exit orphans their process group,
            // and the kernel then sends its stopped members SIGHUP and SIGCONT.)
            var hold = open("/proc/\(helper)/fd/0", O_WRONLY | O_CLOEXEC)
            try #require(hold >= 0, "cannot open the helper's pipe: errno \(errno)")
            defer { if hold >= 0 { close(hold) } }
            #expect(!Processes.descriptors(of: helper).contains(Self.resolved(inherited)),
                    "\(command): the helper kept a descriptor it inherited")
            // The push, started once the change is committed, holds no end of the pipe: with
            // the write end it would keep the helper waiting for the push as well.
            let pipe = Processes.descriptorTarget(pid: helper, fd: 0)
            #expect(pipe?.hasPrefix("pipe:") == true, "\(command): the helper's input is \(pipe ?? "nothing")")
            let push = try #require(Self.process(["hd-sync", "--push"], path: rig.storePath), "\(command) started no push")
            #expect(!Processes.descriptors(of: push).contains(pipe ?? "-"), "\(command): the push holds the helper's pipe")
            let exit = rig.finish(started)
            #expect(exit.status == 0, "\(command): \(exit)")
            #expect(Processes.isRunning(helper), "\(command): the helper did not wait")
            // The command is gone and its close copied nothing: the change is in the WAL
            // (every command sees it) but not yet in the store file.
            #expect(Self.walBytes(rig.storePath) > 0, "\(command): no WAL after the command")
            #expect(try Self.inInbox(thread, storeFileAlone: rig.storePath) == !inInbox,
                    "\(command): the store file already has the change; the command's close checkpointed")
            let listed = try rig.run("hd-ls", "--ids", "-n", "0")
            #expect(listed.lines.contains(thread) == inInbox, "\(command): \(listed)")
            close(hold)
            hold = -1
            #expect(Processes.waitUntilEnded(helper), "\(command): the helper \(helper) still runs")
            #expect(Self.walBytes(rig.storePath) == 0,
                    "\(command): the WAL still holds \(Self.walBytes(rig.storePath)) bytes; held by \(Self.holders(of: store))")
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
        let push = try #require(Self.process(["hd-sync", "--push"], path: rig.storePath), "hd-mark started no push")
        let exit = rig.kill9(started)
        #expect(exit.killed, "\(exit)")
        #expect(Processes.waitUntilEnded(helper), "the helper \(helper) still runs after hd-mark was killed")
        // The push goes on, and writes more; once it is done, the store file itself has the change.
        #expect(Processes.waitUntilEnded(push), "the push \(push) still runs")
        #expect(try Self.inInbox(threads[1], storeFileAlone: rig.storePath) == false, "the store file lacks the change")
        try StoreDump.expectSound(rig.storePath)
    }

    @Test("--dry-run starts no helper; the option runs a helper only as a helper's whole command line, with a pipe as input")
    func helperOnlyWhenWriting() throws {
        let (rig, _, threads) = try prepared()
        let dry = try rig.run("hd-mark", "--dry-run", "archive", threads[0])
        #expect(dry.status == 0, "\(dry)")
        #expect(!FileManager.default.fileExists(atPath: rig.storePath + "-wal"), "a dry run left a WAL: its close did not checkpoint")
        let undeclared = try rig.run("hd-ls", "--checkpoint-helper", rig.storePath)
        #expect(undeclared.status == 64, "\(undeclared)")
        let beside = try rig.run("hd-mark", "--no-flush", "archive", threads[0], "--checkpoint-helper", rig.storePath)
        #expect(beside.status == 64 && beside.stderr.contains("for Hudson's own use"), "\(beside)")
        // Typed at a terminal (standard input not a pipe), it would wait there for ever.
        let typed = try rig.run(after: "exec </dev/null", "hd-mark", ["--checkpoint-helper", rig.storePath], timeout: 30)
        #expect(typed.status == 64, "\(typed)")
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
        let shm = resolved(path) + "-shm"
        return process(["--checkpoint-helper"], path: path) { Processes.descriptors(of: $0).contains(shm) }
    }

    /// `path` with its symbolic links resolved, as /proc names open files.
    static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// The pid of a process whose command line has `path` and a word ending in each of
    /// `words`, and for which `ready` holds; waited for up to 30 s.
    static func process(_ words: [String], path: String, ready: (Int32) -> Bool = { _ in true }) -> Int32? {
        Processes.first(timeout: 30, where: { line in
            line.contains(path) && words.allSatisfy { word in line.contains { $0.hasSuffix(word) } }
        }, ready: ready)
    }

    /// The size of the store's WAL (0 when there is none).
    static func walBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }

    /// The command lines of the processes that have the store (its resolved path) open.
    static func holders(of path: String) -> [String] {
        Processes.commandLines().filter { Processes.descriptors(of: $0.pid).contains(path) }
            .map { "\($0.pid): " + $0.words.joined(separator: " ") }
    }

    /// Waits up to 30 s until no checkpoint helper of the store at `path` runs.
    static func waitUntilNoHelper(of path: String) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Processes.commandLines().contains(where: {
            $0.words.contains("--checkpoint-helper") && $0.words.contains(path) && Processes.isRunning($0.pid)
        }) {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }
}
