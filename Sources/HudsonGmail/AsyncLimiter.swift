/*!
 A counting semaphore for async code: at most `limit` HTTP exchanges of one client are in
 flight at once. Gmail enforces a per-user concurrency limit that answers excess parallelism
 with `429 Too many concurrent requests for user` (gmail-api.md §3, §9.6), so the client
 bounds it itself instead of learning it from errors. Waiters are served first come, first
 served, and a cancelled waiter leaves the queue without taking a permit.
 */

actor AsyncLimiter {
    private let limit: Int
    private var inUse = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID: UInt64 = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` while holding one permit.
    func withPermit<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Permits held and tasks waiting, for tests.
    var state: (inUse: Int, waiting: Int) { (inUse, waiters.count) }

    private func acquire() async throws {
        try Task.checkCancellation()
        if inUse < limit, waiters.isEmpty {
            inUse += 1
            return
        }
        nextID += 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func release() {
        if waiters.isEmpty {
            inUse -= 1
        } else {
            // The permit passes straight to the next waiter; `inUse` is unchanged.
            waiters.removeFirst().continuation.resume()
        }
    }

    private func cancel(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }
}
