// The WAL between passes (issue 10; sqlite-notes.md: "readers' snapshots pin the WAL and
// it grows; checkpoints cannot pass a long-lived reader"). Automatic checkpoints only
// reuse the WAL from its start; they never give back the space a long reader made it
// take. A sync pass ends by emptying the WAL, so once the reader is gone the file goes
// back to nothing instead of staying at its largest for the life of the store. It does
// so only once the WAL has outgrown the automatic checkpoints (twice their interval), so
// a pass within bounds, and a catch-up's 64 MiB interval, are left alone.
import Foundation
import HudsonStore
import HudsonSync
import Testing

@Suite("Sync and the WAL")
struct WALTests {
    @Test("r10_sync_pass_empties_the_wal_a_long_reader_made_grow: the pass after the reader ends leaves an empty WAL")
    func r10_sync_pass_empties_the_wal_a_long_reader_made_grow() async throws {
        let f = try SyncFixture()
        let path = f.dir.path("hudson.sqlite3")
        let text = String(repeating: "Words that make the WAL grow. ", count: 200)
        for i in 0..<1500 { f.gmail.seed("m\(i)", daysAgo: 1 + Double(i) / 100, subject: "Subject \(i)", body: "\(i) \(text)") }
        func walSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
        let engine = f.engine(pageSize: 100, hydrationBatch: 500)
        let limit = try f.database.read { $0.walSizeLimit }

        // A long reader (another process's slow query) holds one snapshot through the passes.
        let reader = try Store.open(path: path, access: .readOnly)
        try reader.db.execute("BEGIN DEFERRED")
        _ = try reader.db.scalarInt("SELECT count(*) FROM messages")
        for _ in 0..<6 { _ = try await engine.syncOnce(maxBackfillPages: 5) }
        let grown = walSize()
        try reader.db.execute("COMMIT")
        #expect(try f.storedIDs().count == 1500)
        #expect(grown > limit, "the WAL grew only \(grown) bytes under the reader: the test cannot tell")

        // The next pass, with no reader left, ends with the WAL emptied.
        _ = try await engine.syncOnce()
        #expect(walSize() == 0, "the WAL kept \(walSize()) bytes of the \(grown) it grew to")
        #expect(try f.hasBody("m0") && f.hasBody("m1499"))
    }

    @Test("a pass whose WAL automatic checkpoints keep in bounds does not checkpoint it again")
    func passWithinBoundsLeavesTheWAL() async throws {
        let f = try SyncFixture()
        let path = f.dir.path("hudson.sqlite3")
        for i in 0..<50 { f.gmail.seed("m\(i)", daysAgo: 1 + Double(i) / 10) }
        func walSize() -> Int64 { Int64((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0) }
        _ = try await f.engine().syncOnce()
        #expect(try f.storedIDs().count == 50)
        let limit = try f.database.read { $0.walSizeLimit }
        #expect(limit == 2 * 1000 * 4096)
        // Left to the automatic checkpoints (SQLite's 1000 pages here; a catch-up's 16,384).
        #expect(walSize() > 0 && walSize() <= limit, "WAL \(walSize()) bytes")
    }

}
