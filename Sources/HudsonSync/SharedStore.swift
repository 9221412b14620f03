/*!
 The store, shared by the sync actors. `Store` wraps one SQLite connection and is not
 Sendable; this box serialises every use of it behind a mutex, so the engine and the
 flusher of one process can share the process's one connection (STYLE.md rule 12).
 Store calls are synchronous and short (one page per transaction).
 */
import HudsonStore
import Synchronization

public final class SharedStore: Sendable {
    private let store: Mutex<Store>

    public init(_ store: sending Store) {
        self.store = Mutex(store)
    }

    /// Runs `body` with exclusive use of the store.
    public func read<T: Sendable>(_ body: (Store) throws -> T) throws -> T {
        try store.withLock { store throws -> T in try body(store) }
    }

    /// Runs `body` with exclusive use of the store (the name says the intent).
    public func write<T: Sendable>(_ body: (Store) throws -> T) throws -> T {
        try store.withLock { store throws -> T in try body(store) }
    }
}
