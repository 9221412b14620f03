/*!
 The memory of the process's page caches, reserved once (SQLITE_CONFIG_PAGECACHE,
 https://sqlite.org/malloc.html#pagecache) instead of taken from malloc page by page.

 Why: SQLite empties a connection's whole page cache whenever another process has
 written the database since its last transaction (pager.c, `pager_reset` after
 `sqlite3WalBeginReadTransaction` reports a change), and then fills it again. With
 malloc, the refill is served by the glibc arena of whichever thread runs the next
 transaction, while the memory freed by the reset stays resident in the arena it came
 from. A catch-up's 64 MiB cache, emptied by every `hd-mark` push and refilled from
 Swift's pool threads, so spread over arenas: `hd-sync --catch-up` reached 209 MiB at
 115,000 messages with a push every 75 s (117 MiB without pushes), 97 MiB of it free
 memory that `malloc_trim` gave back (docs/performance.md, "Backfill at Gmail's
 ceiling"). Slots of
 a reserved buffer are taken and given back by SQLite itself, whatever the thread, so
 the cache costs its reservation and no more however often it is emptied.

 The reservation is resident from the start (SQLite links its free slots through the
 buffer), and it serves every connection of the process; a page that finds no free slot
 comes from malloc as before. It must be made before the library initializes (the
 process's first open).
 */
import CSQLite
import Synchronization

extension Connection {
    /// Slots beyond the main cache's, for the other page caches of a process: statement
    /// journals and sorts held in memory (`temp_store = MEMORY`), another connection.
    static let pageCacheSpareSlots = 512

    private static let pageCacheReservation = Mutex<UnsafeMutableRawPointer?>(nil)

    /// Reserves memory for `kibibytes` of page cache of `pageSize`-byte pages (and
    /// `pageCacheSpareSlots` more pages) for every connection of the process. Returns
    /// false, changing nothing, once the library has initialized (a connection was
    /// opened) or a reservation was made.
    @discardableResult
    public static func reservePageCache(kibibytes: Int, pageSize: Int = 4096) -> Bool {
        pageCacheReservation.withLock { reservation in
            guard reservation == nil, kibibytes > 0, pageSize > 0 else { return false }
            let header = hudson_sqlite3_pcache_header_size()
            guard header >= 0 else { return false }
            // SQLite rounds a slot down to a multiple of 8; the slot must hold a page and its header.
            let slotSize = (pageSize + Int(header) + 7) / 8 * 8
            let slots = kibibytes * 1024 / pageSize + pageCacheSpareSlots
            guard let slotSize32 = Int32(exactly: slotSize), let slots32 = Int32(exactly: slots) else { return false }
            // Never freed: SQLite uses it until the process ends.
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: slotSize * slots, alignment: 16)
            guard hudson_sqlite3_config_pagecache(buffer, slotSize32, slots32) == SQLITE_OK else {
                buffer.deallocate()
                return false
            }
            reservation = buffer
            return true
        }
    }
}

extension SQLiteLibrary {
    /// Pages of the process's page caches held in reserved slots now, and the bytes of
    /// page-cache memory that found no free slot and came from malloc since the process
    /// started (sqlite3_status64: SQLITE_STATUS_PAGECACHE_USED and _OVERFLOW, kept
    /// whatever SQLITE_CONFIG_MEMSTATUS says).
    public static var pageCacheUse: (reservedSlots: Int64, mallocBytes: Int64) {
        var slots: sqlite3_int64 = 0, overflow: sqlite3_int64 = 0, highwater: sqlite3_int64 = 0
        _ = sqlite3_status64(SQLITE_STATUS_PAGECACHE_USED, &slots, &highwater, 0)
        _ = sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &overflow, &highwater, 0)
        return (Int64(slots), Int64(overflow))
    }
}
