/*!
 Notice when nobody will read this process's output any more. `hd-sync --fetch` answers
 `hd-show` through a pipe; when `hd-show` is killed, the answers have no reader, but the
 helper would only find out at its next write, after waiting for quota and fetching: it
 would go on spending the user's interactive quota (and holding other processes'
 background work back) for a command that no longer exists.

 A pipe's write end reports POLLERR once its last reader has closed it (a socket's,
 POLLHUP), whatever events were asked for; a thread of its own waits for that in poll(2),
 so no task of the cooperative pool is blocked.
 */
import Foundation
import Glibc

final class ReaderWatch: @unchecked Sendable {
    /// Written to stop the watch (poll returns on it).
    private let wake: (read: Int32, write: Int32)

    private init(wake: (Int32, Int32)) {
        self.wake = wake
    }

    /// Calls `readerGone` once, on a thread of its own, if `descriptor` is a pipe or socket
    /// and its last reader goes away before `stop()`. Nil when there is nothing to watch.
    static func start(descriptor: Int32, readerGone: @escaping @Sendable () -> Void) -> ReaderWatch? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFIFO || kind == S_IFSOCK else { return nil }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let wake = (read: ends[0], write: ends[1])
        let watch = ReaderWatch(wake: wake)
        let thread = Thread {
            var descriptors = [pollfd(fd: descriptor, events: 0, revents: 0),
                               pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            while true {
                let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
                if ready < 0 && errno == EINTR { continue }
                if ready > 0, descriptors[1].revents == 0,
                   descriptors[0].revents & Int16(POLLERR | POLLHUP) != 0 {
                    readerGone()
                }
                break
            }
            close(wake.read)
        }
        thread.name = "hudson.reader-watch"
        thread.start()
        return watch
    }

    /// Ends the watch without calling `readerGone` (unless it already was). After a watch
    /// that ended by itself the write fails with EPIPE (every command ignores SIGPIPE).
    func stop() {
        var byte: UInt8 = 0
        _ = write(wake.write, &byte, 1)
        close(wake.write)
    }
}
