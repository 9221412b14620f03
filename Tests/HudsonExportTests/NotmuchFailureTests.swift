// How notmuch's failures reach hd-export's exit codes (issue 39): a database another program
// holds the write lock of is temporary (75), anything else is configuration (78). notmuch
// 0.37 waits on its lock, so the lock is stood in for by a fake NotmuchProgram that answers
// as notmuch does when Xapian refuses the lock (DatabaseLockError).
import Foundation
@testable import HudsonExport
import HudsonStore
import Testing

@MainActor
@Suite("notmuch's failures: a locked database is temporary")
struct NotmuchFailureTests {
    /// Answers `config get database.path` with the export's directory; `failing` fails with `stderr`.
    struct FakeNotmuch: NotmuchProgram {
        let databasePath: String
        let failing: String
        let stderr: String

        func run(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
            if arguments.first == failing {
                throw NotmuchFailure(command: failing, message: stderr.split(separator: "\n").last.map(String.init) ?? "",
                                     output: stderr)
            }
            switch arguments.first {
            case "config": return Array((databasePath + "\n").utf8)
            case "count": return Array("0\tuuid-1\t5\n".utf8)
            default: return []
            }
        }
    }

    func run(failing: String, stderr: String) async throws -> any Error {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-notmuch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(path: directory + "/store.sqlite", access: .create)
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 0)
        try FileManager.default.createDirectory(atPath: directory + "/Mail", withIntermediateDirectories: true)
        let exporter = try Exporter(store: store, account: account, format: .maildir, path: directory + "/Mail", mirror: false)
        exporter.twoWayRequest = .notmuch
        exporter.notmuch = FakeNotmuch(databasePath: directory + "/Mail", failing: failing, stderr: stderr)
        do {
            _ = try await exporter.run(fetch: { _ in [:] })
        } catch {
            return error
        }
        Issue.record("the run did not fail")
        return CancellationError()
    }

    static let locked = """
        A Xapian exception occurred opening database: Unable to get write lock on /home/ann/Mail/.notmuch/xapian: already locked
        Error: could not open database
        """

    @Test("Xapian's lock refusal, on any notmuch command the export runs, is a temporary failure naming the lock")
    func lockedIsTemporary() async throws {
        for command in ["new", "count"] {
            let error = try await run(failing: command, stderr: Self.locked)
            guard case ExportError.temporarilyUnavailable(_, let reason) = error else {
                Issue.record("\(command): \(error)")
                continue
            }
            #expect(reason.contains("locked") && !reason.contains("\n"), "\(reason)")
        }
    }

    @Test("other failures stay configuration errors")
    func otherFailures() async throws {
        let error = try await run(failing: "new", stderr: "Error: Cannot open database at /x/.notmuch: No such file or directory\n")
        guard case ExportError.unusableTarget = error else {
            Issue.record("\(error)")
            return
        }
    }

    @Test("the lock is recognised in the last line or anywhere in what notmuch said")
    func recognised() {
        #expect(NotmuchFailure(command: "new", message: "Error: could not open database", output: Self.locked).isDatabaseBusy)
        #expect(NotmuchFailure(command: "tag", message: "Unable to get write lock on db: already locked").isDatabaseBusy)
        #expect(!NotmuchFailure(command: "new", message: "Error: Cannot open database", output: "No such file or directory").isDatabaseBusy)
    }
}
