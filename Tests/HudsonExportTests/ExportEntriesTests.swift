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

    @Test("changes over saved rows: lookups, the count (whole and bounded), a pass and the kept ids agree with a dictionary, before and after each save")
    func overlayAgreesWithADictionary() throws {
        let temporary = TemporaryDirectory()
        defer { withExtendedLifetime(temporary) {} }
        let directory = try ExportDirectory.open(temporary.url.path)
        let location = ExportStateLocation(root: directory, markerName: ".hudson-export", statesPath: temporary.url.path + "/states",
                                           format: .maildir, email: "ann@example.com")
        var state = ExportState(format: .maildir, email: "ann@example.com")
        var model: [String: ExportState.Entry] = [:]
        var random = SeededRandom(state: 0x4855_4453_4F4E_3433)
        let ids = (0..<40).map { number -> String in
            let hex = String(number, radix: 16)
            return "18a" + String(repeating: "0", count: 13 - hex.count) + hex
        }
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
            let marker = try #require(ExportMarker(parsing: try directory.read(".hudson-export")))
            let reopened = try #require(try ExportStateDatabase.open(location.statesPath + "/" + marker.stateID))
            let read = try #require(try ExportState.read(database: reopened))
            #expect(read.directory == location.identity, "the state records the directory it belongs to")
            #expect(try all(read.state.entries) == model, "round \(round), read again")
            // A bounded count of a state read again (its rows not counted yet), with changes
            // not saved over them, is the whole count cut at the bound, for every bound.
            var reread = read.state
            var changed = model
            for _ in 0..<Int.random(in: 0..<12, using: &random) {
                let id = ids[Int.random(in: 0..<ids.count, using: &random)]
                if random.next() % 2 == 0 { reread.entries[id] = nil; changed[id] = nil } else {
                    reread.entries[id] = entry(id)
                    changed[id] = entry(id)
                }
            }
            for bound in [0, 1, 2, 7, changed.count - 1, changed.count, changed.count + 1, 100] where bound >= 0 {
                #expect(try reread.entries.count(upTo: bound) == min(changed.count, bound), "round \(round), bound \(bound)")
            }
            #expect(reread.entries.count == changed.count)
            #expect(try reread.entries.count(upTo: 3) == min(changed.count, 3), "once counted whole")
        }
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
