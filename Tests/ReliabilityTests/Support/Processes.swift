// Other processes as /proc shows them, for the tests that find a command's helper
// (`hd-sync --fetch`, the checkpoint helper) and watch it start, hold files and end.
import Foundation

enum Processes {
    /// Every process's pid and command line, split into its words.
    static func commandLines() -> [(pid: Int32, words: [String])] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = Int32(entry),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            return (pid, data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// The pid of the first process whose command line `matches` and for which `ready`
    /// holds, waited for up to `timeout` seconds.
    static func first(timeout: TimeInterval, where matches: ([String]) -> Bool,
                      ready: (Int32) -> Bool = { _ in true }) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = commandLines().first(where: { matches($0.words) && ready($0.pid) }) { return found.pid }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    /// Whether `pid` exists and has not exited (an orphan's zombie, not reaped yet, has).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return false }
        let stat = String(decoding: data, as: UTF8.self)
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// Waits up to `timeout` seconds for `pid` to end; whether it did.
    static func waitUntilEnded(_ pid: Int32, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning(pid) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return !isRunning(pid)
    }

    /// What each open descriptor of `pid` names (a path, or `pipe:[inode]`).
    static func descriptors(of pid: Int32) -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(entries.compactMap { descriptorTarget(pid: pid, fd: Int32($0) ?? -1) })
    }

    static func descriptorTarget(pid: Int32, fd: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
    }
}
