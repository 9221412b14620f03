// Running a built command with exactly the bytes a hostile caller would give it: argv and
// environment as bytes (invalid UTF-8 included, which Foundation's Process cannot pass),
// standard input from bytes, a file or nothing at all (closed), standard output to a pipe,
// closed, a device such as /dev/full, or a pipe nobody reads for a while; bounded by a
// timeout, and reporting a death by signal apart from an exit. For the generated-input
// suite of the old commands (OldDoorsTests, issue 37).
import Foundation
import Glibc
import DirectoryListing

/// How a run ended and what it wrote.
struct RawResult: CustomStringConvertible {
    /// The exit status; nil when a signal ended the process.
    var status: Int32?
    /// The signal that ended it, if one did.
    var signal: Int32?
    /// Whether it was still running at the timeout (then killed).
    var timedOut: Bool
    var stdout: [UInt8]
    var stderr: [UInt8]

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    var stderrLines: [String] {
        if stderr.isEmpty { return [] }
        return stderrText.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stderrText.hasSuffix("\n") ? 1 : 0).map(String.init)
    }

    var description: String {
        let end = timedOut ? "timed out" : signal.map { "killed by signal \($0)" } ?? "exit \(status ?? -1)"
        return "\(end)\n--- stdout (\(stdout.count) bytes)\n\(String(stdoutText.prefix(600)).debugDescription)\n--- stderr\n\(String(stderrText.prefix(1200)).debugDescription)"
    }
}

enum RawInput {
    case null
    case bytes([UInt8])
    case path(String)
    /// Descriptor 0 closed before the command starts.
    case closed
}

enum RawOutput {
    case pipe
    /// Descriptor 1 closed before the command starts.
    case closed
    /// Descriptor 1 opened for writing on this path (/dev/full).
    case path(String)
    /// A pipe read by nobody for this many seconds (the command fills it and waits), then closed.
    case stalled(TimeInterval)

    var name: String {
        switch self {
        case .pipe: return "pipe"
        case .closed: return "closed"
        case .path(let path): return path
        case .stalled(let seconds): return "a pipe stalled \(seconds) s, then closed"
        }
    }
}

enum RawCommand {
    /// Runs `executable` with `arguments` and exactly `environment` ("NAME=VALUE" byte
    /// strings), in `directory`, and waits at most `timeout` seconds (then SIGKILL).
    static func run(_ executable: String, _ arguments: [[UInt8]], environment: [[UInt8]], directory: String? = nil,
                    stdin: RawInput = .null, stdout: RawOutput = .pipe, timeout: TimeInterval = 60) -> RawResult {
        _ = ignoreBrokenPipes
        var program = [Array(executable.utf8)]
        if let directory {
            // env(1) -C changes the directory and execs the command (the same process).
            program = [Array("/usr/bin/env".utf8), Array("-C".utf8), Array(directory.utf8), Array("--".utf8)] + program
        }
        let argv = program + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var toClose: [Int32] = []
        defer { for fd in toClose { close(fd) } }

        var inputWriter: Int32 = -1
        switch stdin {
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .path(let path): posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY | O_NONBLOCK, 0)
        case .closed: posix_spawn_file_actions_addclose(&actions, 0)
        case .bytes:
            let ends = makePipe()
            posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
            toClose.append(ends.read)
            inputWriter = ends.write
        }
        var outputReader: Int32 = -1
        var stalledFor: TimeInterval = 0
        switch stdout {
        case .closed: posix_spawn_file_actions_addclose(&actions, 1)
        case .path(let path): posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY, 0)
        case .pipe, .stalled:
            let ends = makePipe()
            posix_spawn_file_actions_adddup2(&actions, ends.write, 1)
            toClose.append(ends.write)
            outputReader = ends.read
            if case .stalled(let seconds) = stdout { stalledFor = seconds }
        }
        let errorEnds = makePipe()
        posix_spawn_file_actions_adddup2(&actions, errorEnds.write, 2)
        toClose.append(errorEnds.write)

        let cArguments = argv.map(cString) + [nil]
        let cEnvironment = environment.map(cString) + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, cArguments[0]!, &actions, nil, cArguments, cEnvironment)
        for fd in toClose { close(fd) }
        toClose = []
        guard spawned == 0 else {
            for fd in [inputWriter, outputReader, errorEnds.read] where fd >= 0 { close(fd) }
            return RawResult(status: nil, signal: nil, timedOut: false, stdout: [], stderr: Array("spawn failed: \(spawned)".utf8))
        }
        if case .bytes(let bytes) = stdin {
            let fd = inputWriter
            Thread.detachNewThread {
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { break }
                    offset += written
                }
                close(fd)
            }
        }

        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var open = [errorEnds.read] + (outputReader >= 0 ? [outputReader] : [])
        var timedOut = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty {
            if Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
                break
            }
            // A stalled output is not read until its time is up; then it is closed unread.
            let stalled = outputReader >= 0 && stalledFor > 0
            if stalled && Date().timeIntervalSince(started) >= stalledFor {
                close(outputReader)
                open.removeAll { $0 == outputReader }
                outputReader = -1
                continue
            }
            var fds = open.filter { !(stalled && $0 == outputReader) }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if fds.isEmpty {
                Thread.sleep(forTimeInterval: 0.01)
                continue
            }
            let ready = poll(&fds, nfds_t(fds.count), 50)
            if ready < 0 && errno == EINTR { continue }
            for entry in fds where entry.revents != 0 {
                let count = read(entry.fd, &chunk, chunk.count)
                if count > 0 {
                    if entry.fd == errorEnds.read { errors += chunk[0..<count] } else { output += chunk[0..<count] }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                    if entry.fd == outputReader { outputReader = -1 }
                }
            }
        }
        for fd in open { close(fd) }
        // The descriptors are closed; a process that is still running (it closed its
        // outputs early, or the timeout fired) is waited for, within the same deadline.
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { break }
            if Date() >= deadline && !timedOut {
                timedOut = true
                kill(pid, SIGKILL)
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (macros).
        let signal = status & 0x7f
        return RawResult(status: signal == 0 ? (status >> 8) & 0xff : nil, signal: signal == 0 ? nil : signal,
                         timedOut: timedOut, stdout: output, stderr: errors)
    }

    private static func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe: \(errno)")
        // Close-on-exec here: the child gets its copies through dup2 only.
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        let pointer = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { memcpy(pointer, base, bytes.count) }
        }
        pointer[bytes.count] = 0
        return pointer
    }

    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()
}

/// A file tree as lstat(2) sees it, names as bytes (a name need not be UTF-8): relative
/// path → kind, size, mode and modification time. Two listings differ where something was
/// created, removed or written.
enum RawTree {
    static func listing(_ root: String, skipping skipped: (String) -> Bool = { _ in false }) -> [String: String] {
        var entries: [String: String] = [:]
        func walk(_ path: [UInt8], _ relative: String) {
            var info = stat()
            let pathString = path + [0]
            guard pathString.withUnsafeBufferPointer({ lstat(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), &info) }) == 0
            else { return }
            if skipped(relative) { return }
            let kind: String
            switch info.st_mode & S_IFMT {
            case S_IFDIR: kind = "d"
            case S_IFREG: kind = "f \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            case S_IFLNK: kind = "l"
            case S_IFIFO: kind = "p"
            case S_IFSOCK: kind = "s"
            default: kind = "other"
            }
            entries[relative] = "\(kind) \(String(info.st_mode & 0o7777, radix: 8))"
            guard info.st_mode & S_IFMT == S_IFDIR else { return }
            guard let directory = pathString.withUnsafeBufferPointer({ opendir(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) })
            else { return }
            defer { closedir(directory) }
            var names: [[UInt8]] = []
            DirectoryListing.forEachName(in: directory) { names.append(Array($0)) }
            for name in names {
                walk(path + [47] + name, relative + "/" + TerminalQuote.bytes(name))
            }
        }
        walk(Array(root.utf8), ".")
        return entries
    }

    /// The relative paths that differ between two listings.
    static func changes(_ before: [String: String], _ after: [String: String]) -> [String] {
        Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
    }
}

/// Bytes shown in a test's own messages: printable ASCII as is, anything else escaped.
enum TerminalQuote {
    static func bytes(_ bytes: [UInt8]) -> String {
        bytes.map { (32...126).contains($0) && $0 != 92 ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
    }
}
