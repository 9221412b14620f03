// The WAL between passes (issue 10; sqlite-notes.md: "readers' snapshots pin the WAL and
// it grows; checkpoints cannot pass a long-lived reader"). Automatic checkpoints only
// reuse the WAL from its start; they never give back the space a long reader made it
// take. A sync pass ends by emptying the WAL, so once the reader is gone the file goes
// back to nothing instead of staying at its largest for the life of the store.
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
        let text = String(repeating: "Words that make the WAL grow. ", count: 80)
        for i in 0..<400 { f.gmail.seed("m\(i)", daysAgo: 1 + Double(i) / 10, subject: "Subject \(i)", body: text) }
        func walSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
        let engine = f.engine(pageSize: 100, hydrationBatch: 100)

        // A long reader (another process's slow query) holds one snapshot through the passes.
        let reader = try Store.open(path: path, access: .readOnly)
        try reader.db.execute("BEGIN DEFERRED")
        _ = try reader.db.scalarInt("SELECT count(*) FROM messages")
        for _ in 0..<6 { _ = try await engine.syncOnce(maxBackfillPages: 5) }
        let grown = walSize()
        try reader.db.execute("COMMIT")
        #expect(try f.storedIDs().count == 400)
        #expect(grown > 1 << 20, "the WAL grew only \(grown) bytes under the reader: the test cannot tell")

        // The next pass, with no reader left, ends with the WAL emptied.
        _ = try await engine.syncOnce()
        #expect(walSize() == 0, "the WAL kept \(walSize()) bytes of the \(grown) it grew to")
        #expect(try f.hasBody("m0") && f.hasBody("m399"))
    }

}
