import Foundation
import HudsonTestSupport
import SQLite
import Testing

/// A reservation can only be made before the library initializes, so each test runs in a
/// process of its own (an exit test) that opens no connection before it.
@Suite("The page cache's memory, reserved once")
struct PageCacheReservationTests {
    @Test("a cache emptied by another connection's write is refilled in the reserved slots, never from malloc")
    func refillAfterAnotherWriterStaysReserved() async {
        await #expect(processExitsWith: .success) {
            guard Connection.reservePageCache(kibibytes: 1024) else { exit(10) }
            // An exit status per way to fail; the directory is gone before the process exits.
            exit(try PageCacheReservationTests.refill(in: TemporaryDirectory()))
        }
    }

    static func refill(in dir: TemporaryDirectory) throws -> Int32 {
        let path = dir.path("t.db")
        let reader = try Connection(path: path, options: ConnectionOptions(access: .readWriteCreate, cacheKiB: 1024))
        // About 3,000 pages, three times the cache: reading them all fills it.
        try reader.execute("CREATE TABLE t (a)")
        try reader.write {
            for _ in 0..<3_000 { try reader.execute("INSERT INTO t VALUES (randomblob(3000))") }
        }
        func readAll() throws { _ = try reader.scalarInt("SELECT sum(length(a)) FROM t") }
        try readAll()
        let filled = SQLiteLibrary.pageCacheUse
        guard filled.reservedSlots >= 200 else { return 11 }
        // Another connection writes: the reader's next transaction finds the WAL
        // changed and empties its cache (pager.c, pager_reset), then fills it again.
        let writer = try Connection(path: path, options: ConnectionOptions(access: .readWrite))
        for round in 0..<5 {
            try writer.execute("INSERT INTO t VALUES (?)", Int64(round))
            try readAll()
        }
        let after = SQLiteLibrary.pageCacheUse
        guard after.mallocBytes == 0 else { return 12 }
        guard after.reservedSlots >= 200 else { return 13 }
        return 0
    }

    @Test("no reservation once a connection has been opened: the library is initialized")
    func tooLateOnceOpened() async {
        await #expect(processExitsWith: .success) {
            let opened: Bool = try {
                let dir = TemporaryDirectory()
                _ = try Connection(path: dir.path("t.db"), options: ConnectionOptions(access: .readWriteCreate))
                return Connection.reservePageCache(kibibytes: 1024)
            }()
            exit(opened ? 1 : 0)
        }
    }
}
