// What the commands say about a store file they cannot use as they need (issue 10's
// files suite found these): an empty file, a read-only file, a directory the user
// cannot write. Root ignores file modes, so as root the commands run as nobody.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Store files the commands cannot use", .serialized)
struct StoreFileTests {
    /// Runs a built command as the user who owns nothing here: nobody when this is root.
    func runUnprivileged(_ f: CLIFixture, _ command: String, _ arguments: String...) throws -> CommandResult {
        guard geteuid() == 0 else { return try CommandRunner.run(BuiltProducts.executable(command), arguments, environment: f.environment) }
        return try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                     ["--reuid", "65534", "--regid", "65534", "--clear-groups",
                                      BuiltProducts.executable(command).path] + arguments, environment: f.environment)
    }

    func giveAway(_ f: CLIFixture, _ paths: String...) {
        chmod(f.dir.url.path, 0o755)
        guard geteuid() == 0 else { return }
        for path in paths { chown(path, 65534, 65534) }
    }

    @Test("r10_empty_store_file_is_refused_by_writers: every command refuses an empty store file with 78 and leaves it empty")
    func r10_empty_store_file_is_refused_by_writers() throws {
        let f = CLIFixture()
        #expect(FileManager.default.createFile(atPath: f.storePath, contents: Data()))
        for command in [["hd-ls"], ["hd-mark", "--no-flush", "star", "message:a1"], ["hd-undo", "--no-flush"], ["hd-sync"]] {
            let result = try CommandRunner.run(BuiltProducts.executable(command[0]), Array(command.dropFirst()),
                                               environment: f.environment)
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr == "\(command[0]): \(f.storePath): the file is empty\n")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: f.storePath)[.size] as? Int == 0)
    }

    @Test("r10_unusable_store_says_why: a read-only store file: readers read, writers refuse at once and say it is read-only")
    func r10_unusable_store_says_why() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        giveAway(f, f.dir.path("data"), f.storePath)
        chmod(f.storePath, 0o400)
        let listed = try runUnprivileged(f, "hd-ls")
        #expect(listed.status == 0 && listed.lines.count == 3, "\(listed)")
        let mark = try runUnprivileged(f, "hd-mark", "--no-flush", "star", "message:a1")
        #expect(mark.status == 78, "\(mark)")
        #expect(mark.stderr == "hd-mark: \(f.storePath): cannot write the store: the file is read-only (Permission denied)\n")
    }

    @Test("r10_unusable_store_says_why: a store in a directory the user cannot write: every command says why")
    func r10_unwritable_directory_says_why() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        giveAway(f, f.storePath)
        if geteuid() != 0 { chmod(f.dir.path("data"), 0o555) }
        defer { chmod(f.dir.path("data"), 0o755) }
        let directory = f.dir.path("data")
        let listed = try runUnprivileged(f, "hd-ls")
        #expect(listed.status == 78, "\(listed)")
        #expect(listed.stderr.hasPrefix("hd-ls: \(f.storePath): cannot read the store: its directory \(directory) is read-only"),
                "\(listed.stderr)")
        let mark = try runUnprivileged(f, "hd-mark", "--no-flush", "star", "message:a1")
        #expect(mark.status == 78, "\(mark)")
        #expect(mark.stderr.hasPrefix("hd-mark: \(f.storePath): cannot write the store: its directory \(directory) is read-only"),
                "\(mark.stderr)")
    }
}
