import SQLite

extension Store {
    /// Reserves the memory of a page cache of `kibibytes` for the process's connections,
    /// before the first store is opened, so that a cache emptied by another process's write
    /// is refilled in the same memory rather than in new malloc memory (SQLite's
    /// PageCacheReservation.swift says why that grows). False, and nothing changed, once a
    /// connection has been opened. A store's pages are SQLite's default 4,096 bytes; pages
    /// of another size come from malloc as before.
    @discardableResult
    public static func reservePageCache(kibibytes: Int) -> Bool {
        Connection.reservePageCache(kibibytes: kibibytes, pageSize: 4096)
    }
}
