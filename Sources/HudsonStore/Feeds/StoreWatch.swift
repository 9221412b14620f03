/*!
 Waiting for another process to commit to the store (`hd-ls --follow`), woken by the
 kernel rather than by asking SQLite many times a second: inotify on the store's
 directory, for writes to the database file and its `-wal` (a commit appends its frames
 there; a checkpoint writes the database file; the `-wal` may be created or replaced).

 inotify cannot see the one step that makes a commit visible: the writer's update of
 the WAL index in the `-shm` file, a memory store through mmap, done just after its last
 write to the `-wal` (and its fsync). So a wake is followed by settling reads: the caller
 reads at once, again after 100 ms and after one second of quiet, and then waits for the
 next event — with a slow safety read every 30 s for a file system whose writer inotify
 cannot see (another host).
 */
#if canImport(Glibc)
import Glibc
#endif

public enum StoreWake: Equatable, Sendable {
    /// A file of the store changed, or a settling or safety read is due: read again.
    case readAgain
    /// One of the descriptors given to `wait` reported a hang-up or an error (the reader
    /// of a pipe went away).
    case hangUp
}

public final class StoreWatch {
    private let inotify: Int32
    private let names: Set<String>
    /// Timeouts after the last event, in milliseconds: the settling reads, then the
    /// safety read, repeated.
    static let settling: [Int32] = [100, 1000]
    static let safetyMilliseconds: Int32 = 30_000
    private var step = 0

    /// Watches the directory of `storePath`. Throws when the kernel refuses a watch (no
    /// inotify, or its limit of watches reached).
    public init(storePath: String) throws {
        let slash = storePath.lastIndex(of: "/")
        let directory = slash.map { $0 == storePath.startIndex ? "/" : String(storePath[..<$0]) } ?? "."
        let base = slash.map { String(storePath[storePath.index(after: $0)...]) } ?? storePath
        names = [base, base + "-wal"]
        #if canImport(Glibc)
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw StoreError.cannotWatch(path: directory, reason: String(cString: strerror(errno))) }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(inotify)
            throw StoreError.cannotWatch(path: directory, reason: reason)
        }
        #else
        throw StoreError.cannotWatch(path: directory, reason: "not supported on this system")
        #endif
    }

    deinit { close(inotify) }

    /// Blocks until the store may have changed (or a settling or safety read is due), or
    /// until one of `hangUpOf` (descriptors polled for errors only, such as standard
    /// output) reports a hang-up.
    public func wait(hangUpOf descriptors: [Int32] = []) -> StoreWake {
        var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
        fds += descriptors.map { pollfd(fd: $0, events: 0, revents: 0) }
        while true {
            let timeout = step < Self.settling.count ? Self.settling[step] : Self.safetyMilliseconds
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return .readAgain
            }
            if fds.dropFirst().contains(where: { $0.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 }) {
                return .hangUp
            }
            if ready == 0 {
                step = min(step + 1, Self.settling.count)
                return .readAgain
            }
            if drainEvents() {
                step = 0
                return .readAgain
            }
            // Only other files of the directory changed: keep waiting, same timeout.
        }
    }

    /// Reads every pending event; true when one names a file of the store.
    private func drainEvents() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var touched = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count <= 0 { return touched }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (length, mask, name) = buffer.withUnsafeBytes { raw -> (Int, UInt32, String) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[start..<(start + Int(event.len))].prefix { $0 != 0 }
                    return (Int(event.len), event.mask, String(decoding: nameBytes, as: UTF8.self))
                }
                // An overflowed queue lost events: treat it as a change.
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || names.contains(name) { touched = true }
                offset += MemoryLayout<inotify_event>.size + length
            }
        }
    }
}
