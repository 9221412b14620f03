// The export's entries over its state database (issue 43 §3): a run's unsaved changes lie
// over the saved rows, so a lookup, the count and a pass over them all see the state as it
// stands, and a save writes exactly the changes.
@testable import HudsonExport
import HudsonTestSupport
import Testing

@Suite("An export's entries: in memory until the first save, then over the state's database")
struct ExportEntriesTests {
    func entry(_ id: String, _ status: ExportState.Status = .live, flags: String = "S") -> ExportState.Entry {
        ExportState.Entry(status: status, path: "cur/1700000000.hudson-\(id):2,\(flags)")
    }

    func all(_ entries: ExportEntries) throws -> [String: ExportState.Entry] {
        var found: [String: ExportState.Entry] = [:]
        try entries.forEach { id, entry in
            #expect(found[id] == nil, "\(id) visited twice")
            found[id] = entry
        }
        return found
    }

    /// A Gmail-shaped id: `prefix` then `number` in hex, 16 characters in all.
    func id(_ number: Int, prefix: String) -> String {
        let hex = String(number, radix: 16)
        return prefix + String(repeating: "0", count: 16 - prefix.count - hex.count) + hex
    }

    /// An export directory in `temporary` and the location of its state, states beside it.
    func exportLocation(in temporary: TemporaryDirectory) throws -> (ExportDirectory, ExportStateLocation) {
        let directory = try ExportDirectory.open(temporary.url.path)
        return (directory, ExportStateLocation(root: directory, markerName: ".hudson-export",
                                               statesPath: temporary.url.path + "/states", format: .maildir,
                                               email: "ann@example.com"))
    }

    /// What a later run reads: the database the export's marker names, and the state in it.
    func readAgain(_ directory: ExportDirectory, _ location: ExportStateLocation) throws
        -> (database: ExportStateDatabase, state: ExportState, directory: String) {
        let marker = try #require(ExportMarker(parsing: try directory.read(".hudson-export")))
        let database = try #require(try ExportStateDatabase.open(location.statesPath + "/" + marker.stateID))
        let read = try #require(try ExportState.read(database: database))
        return (database, read.state, read.directory)
    }

    @Test("changes over saved rows: lookups, the count, a pass and the kept ids agree with a dictionary, before and after each save")
    func overlayAgreesWithADictionary() throws {
        let temporary = TemporaryDirectory()
        defer { withExtendedLifetime(temporary) {} }
        let (directory, location) = try exportLocation(in: temporary)
        var state = ExportState(format: .maildir, email: "ann@example.com")
        var model: [String: ExportState.Entry] = [:]
        var random = SeededRandom(state: 0x4855_4453_4F4E_3433)
        let ids = (0..<40).map { id($0, prefix: "18a") }
        for round in 0..<6 {
            for _ in 0..<60 {
                let id = ids[Int.random(in: 0..<ids.count, using: &random)]
                switch Int.random(in: 0..<5, using: &random) {
                case 4:
                    // As the exporter writes: the entry it read just before, given back.
                    let new = entry(id, flags: "FS")
                    state.entries.set(id, to: new, was: state.entries[id])
                    model[id] = new
                case 0:
                    state.entries[id] = nil
                    model[id] = nil
                case 1 where model[id] != nil:
                    state.entries[id]?.status = .kept
                    model[id]?.status = .kept
                default:
                    let new = entry(id, flags: random.next() % 2 == 0 ? "S" : "FS")
                    state.entries[id] = new
                    model[id] = new
                }
                #expect(state.entries[id] == model[id])
                #expect(state.entries.count == model.count, "round \(round)")
            }
            #expect(try all(state.entries) == model, "round \(round), before the save")
            #expect(Set(try state.entries.ids(status: .kept)) == Set(model.filter { $0.value.status == .kept }.keys))
            try state.entries.save(text: state.textPart, at: location, allowsClientPaths: false)
            #expect(state.entries.isInDatabase)
            #expect(try all(state.entries) == model, "round \(round), after the save")
            #expect(state.entries.count == model.count)
            // What a later run reads from the file is what was saved.
            let read = try readAgain(directory, location)
            #expect(read.directory == location.identity, "the state records the directory it belongs to")
            #expect(try all(read.state.entries) == model, "round \(round), read again")
        }
    }

    @Test("a bounded count of a state read again, its rows not counted, with unsaved changes adding and removing: min(count, bound) for every bound, before and after a save")
    func boundedCountOfAStateReadAgain() throws {
        let temporary = TemporaryDirectory()
        defer { withExtendedLifetime(temporary) {} }
        let (directory, location) = try exportLocation(in: temporary)
        func id(_ number: Int) -> String { self.id(number, prefix: "18b") }
        var state = ExportState(format: .maildir, email: "ann@example.com")
        var saved: [String: ExportState.Entry] = [:]
        for number in 0..<30 { state.entries[id(number)] = entry(id(number)); saved[id(number)] = entry(id(number)) }
        try state.entries.save(text: state.textPart, at: location, allowsClientPaths: false)
        func readAgain() throws -> (ExportStateDatabase, ExportState) {
            let read = try self.readAgain(directory, location)
            return (read.database, read.state)
        }
        // The database's own bounded count reads no further than the bound.
        let (database, _) = try readAgain()
        #expect(try database.count(upTo: 3) == 3 && database.count(upTo: 30) == 30 && database.count(upTo: 31) == 30)
        #expect(try database.count() == 30)

        var random = SeededRandom(state: 0x4855_4453_4F4E_3434)
        for round in 0..<40 {
            // Changes that remove saved entries and add new ones (ids 30-89 are not saved), so
            // the unsaved difference is negative in some rounds and larger than a bound in others.
            var changes: [(String, ExportState.Entry?)] = []
            for _ in 0..<Int.random(in: 0..<40, using: &random) {
                let number = Int.random(in: 0..<90, using: &random)
                changes.append((id(number), random.next() % 3 == 0 ? nil : entry(id(number), flags: "FS")))
            }
            var expected = saved
            for (key, value) in changes { expected[key] = value }
            for bound in [0, 1, 2, 7, 29, 30, 31, expected.count - 1, expected.count, expected.count + 1, 200] where bound >= 0 {
                var (_, reread) = try readAgain()
                for (key, value) in changes { reread.entries[key] = value }
                #expect(try reread.entries.count(upTo: bound) == min(expected.count, bound), "round \(round), bound \(bound)")
                // A second bound, and the whole count, after the first (which may have learned the count).
                #expect(try reread.entries.count(upTo: 5) == min(expected.count, 5), "round \(round), then 5")
                #expect(reread.entries.count == expected.count, "round \(round), whole")
            }
        }
        // A state saved before its rows were ever counted: the saved count is then read, right.
        var (_, reread) = try readAgain()
        reread.entries[id(0)] = nil
        reread.entries[id(40)] = entry(id(40))
        reread.entries[id(41)] = entry(id(41))
        saved[id(0)] = nil
        saved[id(40)] = entry(id(40))
        saved[id(41)] = entry(id(41))
        try reread.entries.save(text: reread.textPart, at: location, allowsClientPaths: false)
        #expect(try reread.entries.count(upTo: 10) == 10 && reread.entries.count(upTo: 100) == saved.count)
        #expect(reread.entries.count == saved.count)
        #expect(try readAgain().1.entries.count == saved.count)
    }

    @Test("a copy of entries held in memory is a value: changing one leaves the other")
    func inMemoryCopiesAreValues() {
        var first = ExportState(format: .maildir, email: "ann@example.com")
        first.entries["a1"] = entry("a1")
        var second = first
        second.entries["b2"] = entry("b2")
        second.entries["a1"] = nil
        #expect(first.entries["a1"] == entry("a1") && first.entries["b2"] == nil && first.entries.count == 1)
        #expect(second.entries["a1"] == nil && second.entries["b2"] == entry("b2") && second.entries.count == 1)
    }
}
