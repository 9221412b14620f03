/*!
 Another Hudson command run as a child process (`hd-sync --push` after `hd-mark`, `hd-sync
 --fetch` for `hd-show`, the checkpoint helper): found beside this one, never on PATH.
 */
import Glibc
import HudsonStore

/// Another Hudson command, from the directory this one was started from (they are
/// built and installed together: scripts/install), run as a child process.
enum SiblingCommand {
    /// The child's exit status, or nil when it could not be started or did not exit
    /// normally. Standard input and output are /dev/null; standard error is this
    /// process's when `showingErrors`, else /dev/null.
    static func run(_ name: String, arguments: [String], showingErrors: Bool) -> Int32? {
        spawn(name, arguments: arguments, capturing: nil, showingErrors: showingErrors)?.status
    }

    /// `run` with the child's standard error read into memory instead of shown: what it
    /// wrote there (its first 64 KiB) and its exit status, or nil when it could not be started.
    static func runCapturingErrors(_ name: String, arguments: [String]) -> (errors: [UInt8], status: Int32?)? {
        spawn(name, arguments: arguments, capturing: 2, showingErrors: false).map { ($0.output, $0.status) }
    }

    /// Runs another Hudson command with standard input from /dev/null and standard error
    /// this process's, and returns its standard output and exit status (nil after a
    /// signal); nil when it could not be started.
    static func output(_ name: String, arguments: [String]) -> (output: [UInt8], status: Int32?)? {
        spawn(name, arguments: arguments, capturing: 1, showingErrors: true)
    }

    /// The one way a sibling is started: standard input /dev/null; the descriptor
    /// `capturing` (1, standard output, or 2, standard error) read to the end; standard
    /// output /dev/null when not captured; standard error this process's when
    /// `showingErrors`, else /dev/null, when not captured. Returns what it wrote to the
    /// captured descriptor (all of standard output; the first 64 KiB of standard error)
    /// and its exit status (nil when it did not exit normally), or nil when it could not
    /// be started.
    private static func spawn(_ name: String, arguments: [String], capturing: Int32?,
                              showingErrors: Bool) -> (output: [UInt8], status: Int32?)? {
        guard let directory = executableDirectory() else { return nil }
        let path = directory + "/" + name
        guard access(path, X_OK) == 0 else { return nil }
        var pipeEnds: [Int32] = [-1, -1]
        if capturing != nil {
            guard pipe(&pipeEnds) == 0 else { return nil }
            for fd in pipeEnds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        defer { if capturing != nil { close(pipeEnds[0]) } }
        let started = launch(path, arguments: [name] + arguments, standardOutput: capturing == 1 ? pipeEnds[1] : nil,
                             standardError: capturing == 2 ? pipeEnds[1] : nil, showingErrors: showingErrors)
        if capturing != nil { close(pipeEnds[1]) }
        guard let pid = started else { return nil }

        var output: [UInt8] = []
        if capturing != nil {
            // Standard error is read to its end too (a child must never block on a full
            // pipe), but only its beginning is kept.
            let limit = capturing == 2 ? 65536 : Int.max
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(pipeEnds[0], &buffer, buffer.count)
                if count > 0 { output += buffer[..<min(count, max(0, limit - output.count))]; continue }
                if count < 0 && errno == EINTR { continue }
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return (output, nil) }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import (they are macros).
        guard status & 0x7f == 0 else { return (output, nil) }
        return (output, (status >> 8) & 0xff)
    }

    /// Starts `path` with `arguments` (the first is its argv[0]) and this process's
    /// environment; standard input and output from the descriptors given (nil: /dev/null),
    /// standard error from the descriptor given, or else this process's when
    /// `showingErrors`, else /dev/null. The descriptors given should be close-on-exec
    /// here: the child gets them as 0, 1 and 2 only. Returns the child's pid, or nil when
    /// it could not be started; the caller waits for it, or not.
    static func launch(_ path: String, arguments: [String], standardInput: Int32? = nil,
                       standardOutput: Int32? = nil, standardError: Int32? = nil, showingErrors: Bool) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if let standardError {
            posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        } else if !showingErrors {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        return posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 ? pid : nil
    }

    /// The directory of the running executable (/proc/self/exe, resolved).
    static func executableDirectory() -> String? {
        guard let path = executablePath(), let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// The running executable's path (/proc/self/exe, resolved).
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
