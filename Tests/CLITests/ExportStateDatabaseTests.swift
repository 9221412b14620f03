// The export's state as an SQLite file beside the store (issue 43 §3): a run holds one
// batch's changes in memory, not a line per exported message. The export's directory
// keeps only a marker naming it, as untrusted as the text state was (issue 37 §3): a
// marker that is not of the documented form, names no state of this store, or was made
// for another directory (a copy, a borrowed marker) is refused before anything is
// written; files planted beside it are never opened; a state in the earlier text form is
// read and kept beside the store from then on; a save killed halfway is rolled back.
import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("hd-export's state beside the store: the marker checked, the earlier text read, a killed save rolled back")
struct ExportStateDatabaseTests {
    static let victimID = "18a0000000000001"

    /// A Maildir export of the workspace's six messages, and a file beside it that no run may touch.
    func exportedMaildir() throws -> (ExportWorkspace, String) {
        let w = try ExportWorkspace()
        let target = w.path("m")
        let first = try w.export(target)
        #expect(first.status == 0 && first.stdout.contains(": 6 written"), "\(first)")
        try "precious\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
        return (w, target)
    }

    func lines(_ text: String) -> Set<String> { Set(text.split(separator: "\n").map(String.init)) }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test("the export holds a four-line marker; the state is an SQLite file in STORE.exports, private to the user, holding every entry")
    func stateIsBesideTheStore() throws {
        let (w, target) = try exportedMaildir()
        defer { withExtendedLifetime(w) {} }  // the workspace (and its directory) lives to the end
        let markerPath = target + "/.hudson-export"
        let marker = try String(contentsOfFile: markerPath, encoding: .utf8)
        let parts = marker.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(parts.count == 6 && parts[0] == "hudson-export 2" && parts[1] == "format maildir"
                && parts[2] == "account ann@example.com" && parts[3].hasPrefix("state ") && parts[4].hasPrefix("generation ")
                && parts[5].isEmpty, "\(marker)")
        #expect(mode(markerPath) == 0o600)
        let states = w.f.storePath + ".exports"
        let statePath = states + "/" + parts[3].dropFirst(6)
        #expect(exportStateDatabasePath(markerPath) == statePath)
        #expect(mode(states) == 0o700 && mode(statePath) == 0o600, "\(String(mode(states), radix: 8)) \(String(mode(statePath), radix: 8))")
        let db = try Connection(path: statePath, options: ConnectionOptions(access: .readOnly))
        #expect(try db.scalarInt("PRAGMA application_id") == 0x4864_4578)
        #expect(try db.scalarInt("SELECT count(*) FROM entries WHERE status = 'M'") == 6)
        #expect(try db.map("SELECT name FROM sqlite_schema ORDER BY name") { $0.string(0) } == ["entries", "state"])
        var info = stat()
        #expect(stat(target, &info) == 0)
        #expect(try db.first("SELECT directory FROM state") { $0.string(0) } == "inode \(info.st_ino)",
                "the state records the directory it was made for")
        #expect(try db.first("SELECT generation FROM state") { "generation \($0.int64(0))" } == String(parts[4]),
                "the marker goes with the state's last save")
        let text = try exportStateText(markerPath)
        #expect(text.hasPrefix("hudson-export 1\nformat maildir\naccount ann@example.com\n"), "\(text)")
        // No journal left: a save's journal lives only while it runs; nothing but the marker in the export.
        #expect(!FileManager.default.fileExists(atPath: statePath + "-journal"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).filter { $0.hasPrefix(".hudson-export") }.sorted()
                == [".hudson-export", ".hudson-export.lock"])
    }

    @Test("a state in the earlier text form is read as before (nothing written again) and kept beside the store from then on",
          arguments: ["maildir", "mbox", "eml"])
    func earlierTextState(format: String) throws {
        let w = try ExportWorkspace()
        let target = w.path(format == "mbox" ? "all.mbox" : "out")
        let statePath = format == "mbox" ? target + ".hudson-export" : target + "/.hudson-export"
        #expect(try w.export("--format", format, target).status == 0)
        let text = try exportStateText(statePath)
        try text.write(toFile: statePath, atomically: false, encoding: .utf8)
        let before = fileTree(target)
        let rerun = try w.export("--format", format, target)
        #expect(rerun.status == 0 && rerun.stdout.contains(": 0 written,"), "\(rerun)")
        #expect(try String(contentsOfFile: statePath, encoding: .utf8).hasPrefix("hudson-export 2\n"), "a marker now")
        #expect(exportStateDatabasePath(statePath) != nil)
        #expect(lines(try exportStateText(statePath)) == lines(text), "the same state, entry for entry")
        if format != "mbox" {
            #expect(fileTree(target).filter { !$0.hasPrefix("./.hudson-export ") } == before.filter { !$0.hasPrefix("./.hudson-export ") },
                    "no message file written again")
        }
    }

    @Test("a moved export (renamed, same file system) goes on; a copy of it is refused (64) and the original goes on; an mbox moves with its marker")
    func movedAndCopied() throws {
        let (w, target) = try exportedMaildir()
        let moved = w.path("moved")
        #expect(rename(target, moved) == 0)
        let rerun = try w.export(moved)
        #expect(rerun.status == 0 && rerun.stdout.contains(": 0 written, 0 relabelled"), "\(rerun)")
        let copy = w.path("copy")
        let copied = try CommandRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", moved, copy], environment: [:], timeout: 60)
        #expect(copied.status == 0, "\(copied)")
        let tree = fileTree(w.f.dir.url.path)
        let refused = try w.export("--mirror", copy)
        #expect(refused.status == 64 && refused.stdout.isEmpty
                && refused.stderr.contains("a copy of an export made elsewhere: export into a new directory"), "\(refused)")
        #expect(fileTree(w.f.dir.url.path) == tree, "the refused run changed the tree")
        #expect(try w.export(moved).status == 0)
        // An mbox and its marker, moved to another directory and renamed: append-only, checked by its length.
        #expect(try w.export("--format", "mbox", w.path("all.mbox")).status == 0)
        try FileManager.default.createDirectory(atPath: w.path("elsewhere"), withIntermediateDirectories: true)
        #expect(rename(w.path("all.mbox"), w.path("elsewhere/mail.mbox")) == 0)
        #expect(rename(w.path("all.mbox.hudson-export"), w.path("elsewhere/mail.mbox.hudson-export")) == 0)
        let mbox = try w.export("--format", "mbox", w.path("elsewhere/mail.mbox"))
        #expect(mbox.status == 0 && mbox.stdout.contains(": 0 written"), "\(mbox)")
    }

    @Test("a two-way export restored in place from an older copy is refused (64): nothing read back, nothing queued")
    func restoredFromAnOlderCopy() throws {
        let w = try ExportWorkspace()
        let target = w.path("m")
        #expect(try w.export("--two-way", target).status == 0)
        let backup = w.path("backup")
        let copied = try CommandRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", target, backup], environment: [:], timeout: 60)
        #expect(copied.status == 0, "\(copied)")
        // A change in the store: the next run writes a message again and saves its state.
        let marked = try w.f.run("hd-mark", "--no-flush", "star", "message:a1")
        #expect(marked.status == 0, "\(marked)")
        let rerun = try w.export(target)
        #expect(rerun.status == 0 && rerun.stdout.contains("1 relabelled"), "\(rerun)")
        let pending = try w.f.run("hd-pending")
        // The directory kept, its files replaced by the older copy's (rsync --delete, a snapshot rolled back).
        let emptied = try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/find"), [target, "-mindepth", "1", "-delete"],
                                            environment: [:], timeout: 60)
        let restored = try CommandRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", backup + "/.", target], environment: [:], timeout: 60)
        #expect(emptied.status == 0 && restored.status == 0, "\(emptied)\n\(restored)")
        let tree = fileTree(w.f.dir.url.path)
        let refused = try w.export(target)
        #expect(refused.status == 64 && refused.stderr.contains("restored from an older copy of the export"), "\(refused)")
        #expect(fileTree(w.f.dir.url.path) == tree, "the refused run changed the tree")
        #expect(try w.f.run("hd-pending").stdout == pending.stdout, "nothing queued")
    }

    @Test("a state creation killed before its marker was in place leaves a database the next creation removes")
    func orphanOfAKilledCreationIsRemoved() throws {
        let (w, target) = try exportedMaildir()
        let markerPath = target + "/.hudson-export"
        let states = w.f.storePath + ".exports"
        // What a run killed after creating the database and before renaming its marker leaves.
        let orphan = String(repeating: "ab", count: 16)
        try Data("not yet a state".utf8).write(to: URL(fileURLWithPath: states + "/" + orphan))
        try "hudson-export 2\nformat maildir\naccount ann@example.com\nstate \(orphan)\ngeneration 0\n"
            .write(toFile: markerPath + ".tmp", atomically: false, encoding: .utf8)
        // A text state: the next run creates a state beside the store.
        try exportStateText(markerPath).write(toFile: markerPath, atomically: false, encoding: .utf8)
        let rerun = try w.export(target)
        #expect(rerun.status == 0 && rerun.stdout.contains(": 0 written"), "\(rerun)")
        #expect(!FileManager.default.fileExists(atPath: states + "/" + orphan), "the orphan removed")
        #expect(!FileManager.default.fileExists(atPath: markerPath + ".tmp"))
        #expect(exportStateDatabasePath(markerPath) != nil)
    }

    @Test("the states' directory shared with others, a link, or a file: refused (78) with the reason; a store named through a link to its file finds its states")
    func statesDirectory() throws {
        let (w, target) = try exportedMaildir()
        let states = w.f.storePath + ".exports"
        #expect(chmod(states, 0o777) == 0)
        let shared = try w.export(target)
        #expect(shared.status == 78 && shared.stderr.contains("chmod 700"), "\(shared)")
        #expect(chmod(states, 0o700) == 0)
        #expect(rename(states, states + ".moved") == 0 && symlink(states + ".moved", states) == 0)
        let linked = try w.export(target)
        #expect(linked.status == 78 && linked.stderr.contains("symbolic link"), "\(linked)")
        #expect(unlink(states) == 0 && rename(states + ".moved", states) == 0)
        // HUDSON_DB through a link to the store's file.
        let link = w.f.dir.path("link.sqlite3")
        #expect(symlink(w.f.storePath, link) == 0)
        var environment = w.f.environment
        environment["HUDSON_DB"] = link
        let through = try CommandRunner.run(BuiltProducts.executable("hd-export"), [target], environment: environment, timeout: 60)
        #expect(through.status == 0 && through.stdout.contains(": 0 written"), "\(through)")
        // A target inside the states' directory, before any state is there.
        let fresh = try ExportWorkspace()
        let inside = try fresh.export(fresh.f.storePath + ".exports/inside")
        #expect(inside.status == 78 && inside.stderr.contains("inside the store's export states"), "\(inside)")
        #expect(!FileManager.default.fileExists(atPath: fresh.f.storePath + ".exports"))
    }

    struct Marker: CustomTestStringConvertible, Sendable {
        let name: String
        let says: String
        /// The marker's new text, from the export's (`m`) and another export's (`other`).
        let text: @Sendable (_ m: String, _ other: String) -> String
        var testDescription: String { name }
    }

    static let markers: [Marker] = [
        Marker(name: "another export's marker (borrowing its state)", says: "a copy of an export made elsewhere") { _, other in other },
        Marker(name: "an older generation (a restore)", says: "restored from an older copy of the export") { m, _ in
            m.replacing(#/generation [0-9]+/#, with: "generation 0")
        },
        Marker(name: "a generation two ahead", says: "is older than the export") { m, _ in
            m.replacing(#/generation [0-9]+/#, with: "generation 99")
        },
        Marker(name: "a generation that is not a number", says: "cannot be read as an export's state") { m, _ in
            m.replacing(#/generation [0-9]+/#, with: "generation -1")
        },
        Marker(name: "a state that does not exist", says: "is not with this store") { m, _ in
            m.replacing(#/state [0-9a-f]{32}/#, with: "state " + String(repeating: "0", count: 32))
        },
        Marker(name: "a state id climbing out", says: "cannot be read as an export's state") { m, _ in
            m.replacing(#/state [0-9a-f]{32}/#, with: "state ../../../../../../../../../../victim")
        },
        Marker(name: "a state id in capitals", says: "cannot be read as an export's state") { m, _ in
            m.replacing(#/state [0-9a-f]{32}/#, with: "state " + String(repeating: "A", count: 32))
        },
        Marker(name: "an extra line", says: "cannot be read as an export's state") { m, _ in m + "M \(victimID) cur/x\n" },
        Marker(name: "no final newline", says: "cannot be read as an export's state") { m, _ in String(m.dropLast()) },
        Marker(name: "a marker too long to be one", says: "larger than") { m, _ in
            m.replacingOccurrences(of: "account ", with: "account " + String(repeating: "a", count: 5_000))
        },
        Marker(name: "another account's", says: "holds the export of eve@example.net") { m, _ in
            m.replacingOccurrences(of: "ann@example.com", with: "eve@example.net")
        },
        Marker(name: "another format's", says: "holds a eml export, not maildir") { m, _ in
            m.replacingOccurrences(of: "format maildir", with: "format eml")
        },
        Marker(name: "an SQLite file (a state kept in the export, as Hudson never released)", says: "cannot be read as an export's state") { _, _ in
            "SQLite format 3\u{0}"
        },
    ]

    @Test("a hostile marker is refused (64) before anything is written; --mirror removes nothing", arguments: markers)
    func hostileMarker(_ c: Marker) throws {
        let (w, target) = try exportedMaildir()
        #expect(try w.export(w.path("other")).status == 0)
        let markerPath = target + "/.hudson-export"
        let original = try String(contentsOfFile: markerPath, encoding: .utf8)
        try c.text(original, try String(contentsOfFile: w.path("other/.hudson-export"), encoding: .utf8))
            .write(toFile: markerPath, atomically: false, encoding: .utf8)
        let tree = fileTree(w.f.dir.url.path)
        let states = fileTree(w.f.storePath + ".exports")
        let result = try w.export("--mirror", target)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty && result.stderr.hasPrefix("hd-export: ") && result.stderr.contains(c.says), "\(result)")
        #expect(result.stderr.split(separator: "\n").count <= 2, "one line and the usage: \(result)")
        #expect(fileTree(w.f.dir.url.path) == tree, "the tree changed")
        #expect(fileTree(w.f.storePath + ".exports") == states, "the states changed")
        #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n")
        // Put back, the export goes on.
        try original.write(toFile: markerPath, atomically: false, encoding: .utf8)
        #expect(try w.export(target).status == 0)
    }

    @Test("files planted in the export under the names SQLite gives a database's companions are never opened: no hang, nothing removed")
    func plantedCompanionsAreInert() throws {
        let (w, target) = try exportedMaildir()
        // A journal whose super-journal field names the victim: SQLite would replay it and
        // delete the victim if it opened a database here.
        var journal = [UInt8](repeating: 0, count: 512)
        journal.replaceSubrange(0..<8, with: [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
        try Data(journal + Array(w.path("victim").utf8)).write(to: URL(fileURLWithPath: target + "/.hudson-export-journal"))
        #expect(mkfifo(target + "/.hudson-export-wal", 0o600) == 0)
        let result = try w.export("--mirror", target, timeout: 60)
        #expect(result.status == 0 && result.stdout.contains(": 0 written"), "\(result)")
        #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n")
        #expect(FileManager.default.fileExists(atPath: target + "/.hudson-export-journal"), "left as it was")
    }

    struct Hostile: CustomTestStringConvertible, Sendable {
        let name: String
        let sql: String
        var testDescription: String { name }
    }

    // The state's file is in the user's own directory, but what a run reads of it is checked
    // all the same: its schema when it opens it, each row as it reads it.
    static let hostile: [Hostile] = [
        Hostile(name: "a trigger that would empty the entries on the next save",
                sql: "CREATE TRIGGER wipe AFTER UPDATE ON state BEGIN DELETE FROM entries; END"),
        Hostile(name: "a view", sql: "CREATE VIEW v AS SELECT * FROM entries"),
        Hostile(name: "another table", sql: "CREATE TABLE extra (x)"),
        Hostile(name: "another application's file", sql: "PRAGMA application_id = 0"),
        Hostile(name: "a kept entry whose --mirror removal points outside the export",
                sql: "INSERT INTO entries VALUES ('\(victimID)', 'K', '../victim')"),
        Hostile(name: "an entry climbing out of cur/", sql: "INSERT INTO entries VALUES ('\(victimID)', 'K', 'cur/../../victim')"),
        Hostile(name: "an entry naming an absolute path", sql: "INSERT INTO entries VALUES ('\(victimID)', 'K', '/etc/passwd')"),
        Hostile(name: "a client's name in a one-way export",
                sql: "INSERT INTO entries VALUES ('\(victimID)', 'K', 'cur/1733500000.M1P2.host,U=7:2,FS')"),
        Hostile(name: "entries in the text part", sql: "UPDATE state SET text = text || 'M \(victimID) cur/1.hudson-\(victimID):2,S\n'"),
        Hostile(name: "a text part that is not a state", sql: "UPDATE state SET text = 'x'"),
        Hostile(name: "two text parts", sql: "INSERT INTO state SELECT text, directory, generation FROM state"),
        Hostile(name: "no text part", sql: "DELETE FROM state"),
    ]

    @Test("a state database changed behind Hudson's back is refused (64); --mirror never removes what a bad row names",
          arguments: hostile)
    func hostileDatabase(_ c: Hostile) throws {
        let (w, target) = try exportedMaildir()
        let statePath = try #require(exportStateDatabasePath(target + "/.hudson-export"))
        do {
            let db = try Connection(path: statePath, options: ConnectionOptions(access: .readWrite, deferWriteSetup: true))
            try db.execute(c.sql)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: target + "/cur").sorted()
        let result = try w.export("--mirror", target)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty && result.stderr.hasPrefix("hd-export: ") && result.stderr.contains("cannot be read as an export's state"),
                "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target + "/cur").sorted() == files, "no message file touched")
        #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n")
    }

    @Test("a state database with bytes changed or cut: refused (64, 78), or read; nothing outside the export touched, never a crash or a hang")
    func damagedDatabase() throws {
        let (w, target) = try exportedMaildir()
        let statePath = try #require(exportStateDatabasePath(target + "/.hudson-export"))
        let pristine = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let files = try FileManager.default.contentsOfDirectory(atPath: target + "/cur").sorted()
        let seed = ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 0x4855_4453_4F4E_3433
        var random = SeededRandom(state: seed)
        for iteration in 0..<20 {
            var bytes = [UInt8](pristine)
            switch iteration % 3 {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 1: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            default:
                // The pages after the header: where the rows are.
                for _ in 0..<Int.random(in: 1...64, using: &random) {
                    bytes[Int.random(in: 100..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: statePath))
            let result = try w.export("--mirror", target, timeout: 60)
            #expect([0, 64, 78].contains(result.status), "seed \(seed), iteration \(iteration): \(result)")
            #expect(result.stderr.split(separator: "\n").count <= 2, "iteration \(iteration): \(result)")
            #expect(try String(contentsOfFile: w.path("victim"), encoding: .utf8) == "precious\n", "iteration \(iteration)")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: w.work)).isSubset(of: ["m", "victim"]),
                    "iteration \(iteration): nothing written beside the export")
            // Back to the pristine export for the next iteration.
            try Data(pristine).write(to: URL(fileURLWithPath: statePath))
            for name in try FileManager.default.contentsOfDirectory(atPath: target + "/cur") where !files.contains(name) {
                try FileManager.default.removeItem(atPath: target + "/cur/" + name)
            }
        }
        let last = try w.export(target)
        #expect(last.status == 0, "\(last)")
    }

    @Test("a save killed halfway leaves a journal: the next run rolls it back and goes on from the last save")
    func killedSaveIsRolledBack() throws {
        let (w, target) = try exportedMaildir()
        let markerPath = target + "/.hudson-export"
        let statePath = try #require(exportStateDatabasePath(markerPath))
        let saved = lines(try exportStateText(markerPath))
        // A writer that changes the file and dies before committing, as a run killed in a
        // save does: with a one-page cache the changed pages reach the file, the journal holds
        // the old ones.
        let script = """
        import os, sqlite3, sys
        db = sqlite3.connect(sys.argv[1], isolation_level=None)
        db.execute("PRAGMA cache_size = 1")
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM entries")
        db.executemany("INSERT INTO entries VALUES (?, 'M', ?)",
                       [("%016x" % i, "cur/1.hudson-%016x:2,S" % i) for i in range(20000)])
        db.execute("UPDATE state SET text = 'x'")
        os._exit(9)
        """
        let killed = try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, statePath],
                                           environment: ProcessInfo.processInfo.environment, timeout: 120)
        #expect(killed.status == 9, "\(killed)")
        #expect(FileManager.default.fileExists(atPath: statePath + "-journal"), "a hot journal left")
        let rerun = try w.export(target)
        #expect(rerun.status == 0 && rerun.stdout.contains(": 0 written, 0 relabelled"), "\(rerun)")
        #expect(lines(try exportStateText(markerPath)) == saved, "the state as last saved")
        #expect(!FileManager.default.fileExists(atPath: statePath + "-journal"))
    }
}
