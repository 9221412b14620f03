/*!
 The checkpoint of a triage command, done after the command has exited instead of inside
 the user's wait.

 In WAL mode the last connection to close a database copies the WAL into the database
 file, syncs that file and removes the WAL (https://sqlite.org/wal.html, "Automatic
 Checkpoint"). For `hd-mark` that close was the largest single cost of its run: archiving
 a thousand threads at 1,000,000 messages took 46.8 ms with it and 39.3 ms without, the
 two builds run in turn (docs/performance.md). SQLite's documentation names the way out:
 run checkpoints "in a separate thread or process" (https://sqlite.org/wal.html).

 So `hd-mark` and `hd-undo`, once their store is open, start this helper: the same
 program, as `hd-mark --checkpoint-helper PATH`. It opens the store too, so the command's
 connection is no longer the last and its close copies nothing. It waits until the
 command has exited: its standard input is a pipe whose other end only the command holds,
 so it reads end of file when the command ends, however it ends (kill -9 included). Then it
 copies the WAL without blocking anyone (PASSIVE) and closes; if it is the last
 connection, its close removes the WAL.

 Nothing depends on the helper. The change is durable when the command commits (the WAL
 is synced, `synchronous=FULL`); the checkpoint only moves it from one of the store's
 files to another. A helper that cannot start, fails or is killed leaves the WAL to the
 next writing connection that closes last, as any other connection open at the time
 would have. Its output goes nowhere and it keeps no descriptor but its pipe, so
 `$(hd-mark ...)` and a test reading the command's output to the end do not wait for it.
 */
import Glibc
import DirectoryListing
import HudsonStore

public enum CheckpointHelper {
    /// The option a command that starts the helper declares. Hidden: only the command
    /// itself passes it, to its own program.
    public static let option = OptionSpec.value(
        "checkpoint-helper", name: "PATH", kind: .file,
        help: "Internal: copy the WAL into the store at PATH once the command that started this has exited.",
        hidden: true)

    /// Whether `spec` declares the option (only a command that does starts a helper).
    static func isDeclared(by spec: CommandSpec) -> Bool {
        spec.options.contains { $0.long == option.long }
    }

    /// The store path when `arguments` are a helper's (the option and its path, nothing
    /// else), `spec` declares the option and standard input is a pipe (the helper's
    /// signal; typed at a terminal the option would wait there); nil otherwise, and the
    /// command line is then parsed as any other, which refuses the option
    /// (`refuseOutsideHelper`).
    static func storePath(arguments: [String], spec: CommandSpec) -> String? {
        guard arguments.count == 2, arguments[0] == "--" + option.long, !arguments[1].isEmpty, isDeclared(by: spec)
        else { return nil }
        var status = stat()
        guard fstat(0, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return nil }
        return arguments[1]
    }

    /// The option anywhere but in a helper's command line is a usage error: it is declared
    /// (so that it parses) only for the helper's sake.
    static func refuseOutsideHelper(_ arguments: ParsedArguments) throws {
        if arguments.string(option.long) != nil {
            throw UsageError("--\(option.long) is for Hudson's own use")
        }
    }

    /// Starts the helper for the store at `storePath`, as the command `commandName` (the
    /// name a multi-call binary runs a command by). Returns whether it started; when it
    /// did not, this command's own close checkpoints, as before.
    static func start(commandName: String, storePath: String) -> Bool {
        guard let executable = SiblingCommand.executablePath() else { return false }
        var created: [Int32] = [-1, -1]
        guard pipe(&created) == 0 else { return false }
        // Both ends move above standard error (a command started with 0, 1 or 2 closed
        // would get one of those from pipe, and print into the helper's pipe) and get
        // close-on-exec: neither may reach another child (`hd-sync --push`), whose copy
        // of the write end would keep the helper waiting for it as well.
        let ends = created.map { fcntl($0, F_DUPFD_CLOEXEC, 3) }
        for fd in created { close(fd) }
        guard ends.allSatisfy({ $0 >= 3 }) else {
            for fd in ends where fd >= 0 { close(fd) }
            return false
        }

        let started = SiblingCommand.launch(executable, arguments: [commandName, "--" + option.long, storePath],
                                            standardInput: ends[0], showingErrors: false)
        close(ends[0])
        guard started != nil else {
            close(ends[1])
            return false
        }
        // The write end stays open, unused, until this process exits: that is the signal.
        // The helper is not waited for; once this process is gone, init reaps it.
        return true
    }

    /// The helper's whole run: hold the store, wait for the command's end, checkpoint,
    /// close. Exits 0 when the WAL was copied whole, else 1 (no one reads the status; it
    /// is there for whoever traces the helper).
    static func run(storePath: String) -> Never {
        closeInheritedDescriptors()
        let copied: Bool
        do {
            let store = try Store.open(path: storePath, access: .readWrite, synchronous: .full)
            waitForEndOfInput()
            copied = (try? store.copyWALIntoStore()) ?? false
            // The store closes here, before exit: if it is the last connection, its
            // close removes the WAL, which the copy left with nothing new in it.
        } catch {
            exit(1)
        }
        exit(copied ? 0 : 1)
    }

    /// Closes every descriptor above standard error: whatever the command inherited
    /// without close-on-exec (a caller's pipe) came along, and a reader waiting for that
    /// pipe's end of file must not wait for the helper too. (glibc's
    /// posix_spawn_file_actions_addclosefrom_np would do it at the spawn, but Swift's
    /// Glibc module does not export it.) Only for the synchronous local commands that
    /// declare the option: a command on Swift concurrency's runtime has descriptors of
    /// its own open by now.
    private static func closeInheritedDescriptors() {
        guard let directory = opendir("/proc/self/fd") else { return }
        var inherited: [Int32] = []
        for name in DirectoryListing.names(in: directory) {
            if let fd = Int32(name), fd > 2, fd != dirfd(directory) { inherited.append(fd) }
        }
        closedir(directory)
        for fd in inherited { close(fd) }
    }

    /// Reads standard input to its end (or to an error other than an interruption).
    private static func waitForEndOfInput() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            return
        }
    }
}
