// Running code under another umask without changing the test process's own.
import Foundation
import Glibc

public enum ThreadUmask {
    /// Runs `body` under the file-creation mask `mask` on a thread of its own that has its own umask,
    /// and waits for it.
    ///
    /// The umask belongs to the whole process, and `swift test` runs other suites in this process at
    /// the same time: whatever they create (files, and the processes they start, which inherit it)
    /// would be created under `mask` too, and two tests restoring it out of order would leave it
    /// changed for the rest of the run. unshare(CLONE_FS) gives the thread its own copy of the umask
    /// (and working directory); the thread ends with the body. Where unshare is refused (a
    /// container's seccomp filter) the process's umask is changed instead, for as long as the body runs.
    public static func run<T>(_ mask: mode_t, _ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let work = Work(body: body)
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                _ = unshareFS?(0x0000_0200)  // CLONE_FS: not visible to Swift without _GNU_SOURCE
                let old = umask(mask)
                work.run()
                umask(old)
                done.signal()
            }
            thread.name = "hudson-test-umask"
            thread.start()
            done.wait()
            return try work.result!.get()
        }
    }

    /// The body and its result, handed to the thread and back; the semaphore orders the accesses.
    private final class Work<T>: @unchecked Sendable {
        private var body: (() throws -> T)?
        var result: Result<T, any Error>?

        init(body: @escaping () throws -> T) { self.body = body }

        /// Runs the body once and lets go of it, before the caller is woken: the thread (and
        /// this object) may outlive `run(_:_:)`, the body, which never really escaped, may not.
        func run() {
            result = Result { try body!() }
            body = nil
        }
    }

    /// unshare(2), looked up at run time: Glibc declares it only under _GNU_SOURCE.
    private static let unshareFS: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "unshare") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()
}
