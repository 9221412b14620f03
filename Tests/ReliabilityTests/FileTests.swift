// Files (issue 10): a store on a tiny file system that fills up (a 1 MB tmpfs when
// this process may mount one, else `ulimit -f`); a read-only store, directory and file
// system; a store written by a newer schema; corrupt stores (flipped bytes, truncated,
// empty, not SQLite, another program's SQLite) that every command must refuse, never
// showing them as an empty mailbox and never writing to them; files created under
// `umask 000`; and credentials that are too open, owned by someone else or a symlink
// (CONTRACT.md "Files" and "Exit status", sqlite-notes.md "How SQLite tests itself").
import Foundation
import HudsonTestSupport
import SQLite
import Testing

/// What this machine lets the suite do: mounting a tmpfs and changing users need root.
enum Privileges {
    static let isRoot = geteuid() == 0

    /// Whether `mount -t tmpfs` works here (a container may forbid it even to root).
    static let canMount: Bool = {
        guard isRoot else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-mount-probe-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? shell("mount -t tmpfs -o size=1m tmpfs '\(probe)'")) == 0 else { return false }
        _ = try? shell("umount '\(probe)'")
        return true
    }()

    @discardableResult
    static func shell(_ script: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A tmpfs mounted for one test, unmounted when it goes away.
final class TinyFileSystem {
    let path: String

    init(at path: String, size: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard try Privileges.shell("mount -t tmpfs -o size=\(size),mode=0755 tmpfs '\(path)'") == 0 else {
            throw FakeGmailError("cannot mount a tmpfs at \(path)")
        }
    }

    func remount(_ options: String) throws {
        guard try Privileges.shell("mount -o remount,\(options) '\(path)'") == 0 else {
            throw FakeGmailError("cannot remount \(path) \(options)")
        }
    }

    deinit { _ = try? Privileges.shell("umount -l '\(path)'") }
}

/// Every command, in the form each uses the store.
let everyCommand: [[String]] = [
    ["hd-ls"], ["hd-search", "in:anywhere"], ["hd-show", "--no-fetch", "message:0000000000000001"], ["hd-pending"], ["hd-labels"],
    ["hd-mark", "--no-flush", "star", "message:0000000000000001"], ["hd-undo", "--no-flush"], ["hd-sync"],
]

@Suite("Files: a full disk, read-only stores, newer and corrupt stores, umask, credentials", .serialized)
struct FileTests {
    /// The bytes of a file, to show a command did not write to it.
    func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test("a file system that fills up: a clear error, no corruption, and the resume completes once there is room")
    func diskFull() throws {
        let reference = Rig()
        let fake = try reference.startFake(pinnedMailbox(count: 400))
        try reference.connect()
        #expect(try reference.run("hd-sync", catchUp).status == 0)

        let rig = Rig()
        let tiny: TinyFileSystem?
        if Privileges.canMount {
            tiny = try TinyFileSystem(at: rig.dir.path("tiny"), size: "1m")
            rig.environment["HUDSON_DB"] = rig.dir.path("tiny/hudson.sqlite3")
        } else {
            tiny = nil  // no mount here: the file size limit stands in for a full disk
        }
        try rig.startFake(pinnedMailbox(count: 400))
        rig.environment.merge(fake.environment) { $1 }
        try rig.connect()
        let limit = tiny == nil ? "trap '' XFSZ; ulimit -f 1024" : "true"
        // One background-sized pass first (pages of 100): a catch-up lists pages of 500,
        // and the first of them alone would not fit, leaving nothing stored to check. The
        // disk may already fill during its bodies (75); its page is committed by then.
        let first = try rig.run(after: limit, "hd-sync", ["--max-pages", "1", "--prefetch-days", "0"])
        #expect([0, 75].contains(first.status), "\(first)")
        let full = try rig.run(after: limit, "hd-sync", catchUp)
        #expect(full.status == 75, "\(full)")
        #expect(full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
        #expect(full.stderr.contains(tiny == nil ? "store:" : "the disk is full"), "\(full.stderr)")
        try StoreDump.expectSound(rig.storePath)
        // What was stored before the disk filled up is still readable, and not as an empty mailbox.
        let listed = try rig.run("hd-ls", "-n", "5")
        #expect(listed.status == 0 && !listed.stdout.isEmpty, "\(listed)")
        let mark = try rig.run(after: limit, "hd-mark", ["--no-flush", "star", try #require(listed.lines.first?.split(separator: "\t").first.map(String.init))])
        #expect([0, 75].contains(mark.status), "\(mark)")
        try StoreDump.expectSound(rig.storePath)

        try tiny?.remount("size=64m")
        let resumed = try rig.run("hd-sync", catchUp)
        #expect(resumed.status == 0, "\(resumed)")
        let queued = try rig.queue()
        #expect(queued.isEmpty, "\(queued)")
        try StoreDump.expectSound(rig.storePath)
        #expect(try reference.run("hd-sync", catchUp).status == 0)  // the mark reached Gmail: both learn it
        StoreDump.expectEqual(try StoreDump.dump(rig.storePath), try StoreDump.dump(reference.storePath), "after the disk was freed")
        Report.note(tiny == nil ? "no mount allowed: a full disk simulated with ulimit -f (EFBIG)" : "a full disk: a 1 MB tmpfs, remounted at 64 MB")
        try rig.expectNoSecretsLeaked()
    }

    /// A synced store, closed, for the tests that damage or lock one.
    func syncedStore() throws -> Rig {
        let rig = Rig()
        try rig.startFake(pinnedMailbox(count: 60))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        return rig
    }

    @Test("a store on a read-only file system: every command exits 78 with a reason, and nothing is written",
          .enabled(if: Privileges.canMount, "mounting a tmpfs needs root"))
    func readOnlyFileSystem() throws {
        let rig = try syncedStore()
        let mount = try TinyFileSystem(at: rig.dir.path("ro"), size: "16m")
        let path = mount.path + "/hudson.sqlite3"
        try FileManager.default.copyItem(atPath: rig.storePath, toPath: path)
        try mount.remount("ro")
        let before = bytes(path)
        for command in everyCommand {
            let result = try rig.run(command[0], Array(command.dropFirst()), environment: ["HUDSON_DB": path])
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr.contains(path) && result.stderr.contains("read-only"), "\(command): \(result.stderr)")
        }
        #expect(bytes(path) == before)
    }

    @Test("a read-only store file, and a store in a directory its user cannot write: readers read or say why, writers say why",
          .enabled(if: Privileges.isRoot, "changing users needs root"))
    func readOnlyFileAndDirectory() throws {
        let rig = try syncedStore()
        let nobody = 65534
        let directory = rig.dir.path("shared")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/hudson.sqlite3"
        try FileManager.default.copyItem(atPath: rig.storePath, toPath: path)
        chmod(rig.dir.url.path, 0o755)
        chown(path, uid_t(nobody), gid_t(nobody))
        let environment = ["HUDSON_DB": path, "HUDSON_CONFIG_DIR": rig.dir.path("nobody-config"), "HOME": directory]

        // The directory is root's: nobody can read the file but cannot create -wal or -shm.
        chmod(directory, 0o755)
        for command in everyCommand {
            let result = try rig.run(asUser: nobody, command[0], Array(command.dropFirst()), environment: environment)
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr.contains(path) && result.stderr.contains("directory"), "\(command): \(result.stderr)")
        }

        // The file is read-only, the directory writable: readers work, writers say why.
        chown(directory, uid_t(nobody), gid_t(nobody))
        chmod(path, 0o400)
        let before = bytes(path)
        let listed = try rig.run(asUser: nobody, "hd-ls", [], environment: environment)
        #expect(listed.status == 0 && !listed.stdout.isEmpty, "\(listed)")
        for command in everyCommand where ["hd-mark", "hd-undo", "hd-sync"].contains(command[0]) {
            let result = try rig.run(asUser: nobody, command[0], Array(command.dropFirst()), environment: environment)
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr.contains(path) && result.stderr.contains("read-only"), "\(command): \(result.stderr)")
        }
        #expect(bytes(path) == before)
    }

    @Test("a store written by a newer Hudson: every command exits 78 and says so, and the store is not touched")
    func newerSchema() throws {
        let rig = try syncedStore()
        do {
            let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readWrite))
            try db.execute("INSERT INTO hudson_migrations (id) VALUES ('999_from_the_future')")
        }
        let before = bytes(rig.storePath)
        for command in everyCommand {
            let result = try rig.run(command[0], Array(command.dropFirst()))
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr.contains("newer Hudson"), "\(command): \(result.stderr)")
        }
        #expect(bytes(rig.storePath) == before)
    }

    @Test("a store an older Hudson wrote: readers say the next writer upgrades it; a writer finding it locked says it is being upgraded (75), then upgrades it")
    func olderSchemaBeingUpgraded() throws {
        let rig = try syncedStore()
        // A store behind by one migration (032, as the Hudson before it left it).
        do {
            let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readWrite))
            try db.execute("DROP INDEX messages_thread_by_key")
            try db.execute("DELETE FROM hudson_migrations WHERE id = '032_thread_by_message_key'")
        }
        let listed = try rig.run("hd-ls", [])
        #expect(listed.status == 78 && listed.stderr.contains("older Hudson; the next command that writes"), "\(listed)")
        // Another process holds the write lock (as one applying a long migration does).
        let holder = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readWrite))
        try holder.execute("BEGIN IMMEDIATE")
        let waiting = try rig.run("hd-mark", ["--no-flush", "read", "thread:t1"])
        #expect(waiting.status == 75, "\(waiting)")
        #expect(waiting.stderr.contains("being upgraded to this Hudson by another process")
                && waiting.stderr.split(separator: "\n").count == 1, "\(waiting.stderr)")
        try holder.execute("ROLLBACK")
        let upgraded = try rig.run("hd-mark", ["--dry-run", "read", "thread:t1"])
        #expect(upgraded.status != 75 && upgraded.status != 78, "\(upgraded)")
        #expect(try rig.run("hd-ls", []).status == 0)
    }

    @Test("a batched upgrade stopped half way: readers say how far it got and that a writer finishes it (75), not that the store is broken")
    func batchedUpgradeUnfinished() throws {
        let rig = try syncedStore()
        // What a batched migration (SQLite/BatchedMigration.swift) leaves when its runner
        // is killed: its id not applied, its progress recorded.
        do {
            let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readWrite))
            try db.execute("DELETE FROM hudson_migrations WHERE id = '037_address_book_never_below_zero'")
            try db.execute("""
                CREATE TABLE hudson_migration_progress (id TEXT PRIMARY KEY NOT NULL, after INTEGER NOT NULL,
                    last INTEGER NOT NULL, done INTEGER NOT NULL, total INTEGER NOT NULL);
                INSERT INTO hudson_migration_progress VALUES ('037_address_book_never_below_zero', 40, 100, 40, 100);
                """)
        }
        for command in [["hd-ls"], ["hd-search", "--count", "in:inbox"], ["hd-labels"]] {
            let result = try rig.run(command[0], Array(command.dropFirst()))
            #expect(result.status == 75, "\(command) \(result)")
            #expect(result.stderr.contains("upgrade to this Hudson is 40 % done")
                    && result.stderr.split(separator: "\n").count == 1, "\(command) \(result.stderr)")
        }
    }

    /// Ways a store file can be damaged, each applied to a copy of a synced store.
    static let damages: [(name: String, apply: @Sendable (String) throws -> Void)] = [
        ("empty", { path in try Data().write(to: URL(fileURLWithPath: path)) }),
        ("not SQLite", { path in try Data("From: mail is not a database\n".utf8).write(to: URL(fileURLWithPath: path)) }),
        ("another program's SQLite database", { path in
            try FileManager.default.removeItem(atPath: path)
            let db = try Connection(path: path, options: ConnectionOptions(access: .readWriteCreate))
            try db.execute("CREATE TABLE notes (text); INSERT INTO notes VALUES ('hello')")
        }),
        ("truncated to half", { path in try truncate(path, fraction: 0.5) }),
        ("truncated to its first page", { path in try truncate(path, bytes: 4096) }),
        ("flipped bytes in the header", { path in try flip(path, at: 16, count: 4) }),
        ("flipped bytes in the schema page", { path in try flip(path, at: 100, count: 8) }),
        ("flipped bytes in every page header", { path in
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            for page in stride(from: 1, to: size / 4096, by: 1) { try flip(path, at: page * 4096, count: 4) }
        }),
    ]

    static func truncate(_ path: String, fraction: Double = 1, bytes: Int? = nil) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: UInt64(bytes ?? Int(Double(size) * fraction)))
        try handle.close()
    }

    static func flip(_ path: String, at offset: Int, count: Int) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(offset))
        let original = try handle.read(upToCount: count) ?? Data()
        try handle.seek(toOffset: UInt64(offset))
        handle.write(Data(original.map { ~$0 }))
        try handle.close()
    }

    @Test("corrupt stores are refused with exit 78 and a reason, never shown as an empty mailbox, never written",
          arguments: 0..<damages.count)
    func corruptStore(_ index: Int) throws {
        let (name, damage) = Self.damages[index]
        let rig = try syncedStore()
        let path = rig.dir.path("damaged.sqlite3")
        try FileManager.default.copyItem(atPath: rig.storePath, toPath: path)
        try damage(path)
        let before = bytes(path)
        for command in everyCommand {
            let result = try rig.run(command[0], Array(command.dropFirst()), environment: ["HUDSON_DB": path])
            #expect(result.status == 78, "\(name), \(command): \(result)")
            #expect(result.stdout.isEmpty, "\(name), \(command): printed \(result.stdout.prefix(200))")
            let line = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(line.hasPrefix("\(command[0]): ") && line.contains(path), "\(name), \(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(bytes(path) == before, "\(name): a command wrote to the damaged store")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") || bytes(path + "-wal")?.isEmpty == true)
    }

    @Test("under umask 000 every file Hudson creates is still private: store, WAL, locks, credentials, attachments")
    func umask000() throws {
        let rig = Rig()
        rig.environment["HUDSON_DB"] = rig.dir.path("new/data/hudson.sqlite3")
        rig.environment["HUDSON_CONFIG_DIR"] = rig.dir.path("new/config")
        try rig.startFake(pinnedMailbox(count: 150))
        let fake = try #require(rig.fake)
        try fake.clientSecretJSON.write(toFile: rig.dir.path("client_secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: rig.dir.path("refresh_token"), atomically: true, encoding: .utf8)
        let open = "umask 000"
        #expect(try rig.run(after: open, "hd-auth", ["add", fake.email, "--client-secret", rig.dir.path("client_secret.json"),
                                                      "--refresh-token-file", rig.dir.path("refresh_token"), "--lookback-days", "0"]).status == 0)
        #expect(try rig.run(after: open, "hd-sync", catchUp).status == 0)
        // The WAL and shared-memory files exist while a command has the store open.
        let watch = try rig.start("/bin/sh", ["-c", "umask 000; exec \"$0\" --watch --prefetch-days 0", BuiltProducts.executable("hd-sync").path])
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: rig.storePath + "-shm") && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let message = try #require(try rig.run("hd-search", "--messages", "--ids", "-n", "1", "has:attachment").lines.first { !$0.isEmpty })
        let mark = try rig.run(after: open, "hd-mark", ["star", message])
        #expect(mark.status == 0, "\(mark)")
        let saved = try rig.run(after: open, "hd-show", ["--save-attachments", rig.dir.path("new/attachments/deep"), message])
        #expect(saved.status == 0, "\(saved)")
        var checked: [String] = []
        func walk(_ directory: String) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                let path = directory + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                let mode = Int(info.st_mode & 0o777)
                let isDirectory = info.st_mode & S_IFMT == S_IFDIR
                #expect(mode & 0o077 == 0, "\(path) is \(String(mode, radix: 8))")
                checked.append(name + (isDirectory ? "/" : ""))
                if isDirectory { walk(path) }
            }
        }
        walk(rig.dir.path("new"))
        watch.signal(SIGINT)
        rig.finish(watch)
        for expected in ["hudson.sqlite3", "hudson.sqlite3-wal", "hudson.sqlite3-shm", "credentials/"] {
            #expect(checked.contains(expected), "\(expected) was not there to check: \(checked)")
        }
        #expect(checked.contains { $0.hasSuffix(".lock") } && checked.contains("deep/"), "\(checked)")
        try rig.expectNoSecretsLeaked()
    }

    @Test("credentials too open, owned by another user, a symlink, or in a directory others can write: refused with 78 and a fix",
          .enabled(if: Privileges.isRoot, "chown needs root"))
    func credentialsRefused() throws {
        let rig = try syncedStore()
        let path = rig.credentialsPath
        let original = try #require(bytes(path))
        let cases: [(String, () throws -> Void, String)] = [
            ("readable by others", { chmod(path, 0o604) }, "chmod 600"),
            ("readable by the group", { chmod(path, 0o640) }, "chmod 600"),
            ("owned by another user", { chown(path, 65534, 65534) }, "chown"),
            ("a symlink", {
                try original.write(to: URL(fileURLWithPath: rig.dir.path("elsewhere.json")))
                chmod(rig.dir.path("elsewhere.json"), 0o600)
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: rig.dir.path("elsewhere.json"))
            }, "symbolic link"),
            ("in a directory others can write", { chmod((path as NSString).deletingLastPathComponent, 0o777) }, "chmod 700"),
        ]
        for (name, damage, fix) in cases {
            try damage()
            for command in [["hd-sync"], ["hd-show", "message:0000000000000001"]] {
                let result = try rig.run(command[0], Array(command.dropFirst()))
                if command[0] == "hd-sync" {
                    #expect(result.status == 78, "\(name): \(result)")
                    #expect(result.stderr.contains(fix), "\(name): \(result.stderr)")
                } else {
                    #expect(result.status != 0 && !result.stderr.contains("Fatal"), "\(name): \(result)")
                }
            }
            // Put it back as it was.
            try? FileManager.default.removeItem(atPath: path)
            try original.write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            chmod((path as NSString).deletingLastPathComponent, 0o700)
            #expect(try rig.run("hd-sync").status == 0, "\(name): not usable again once fixed")
        }
        try rig.expectNoSecretsLeaked()
    }
}
