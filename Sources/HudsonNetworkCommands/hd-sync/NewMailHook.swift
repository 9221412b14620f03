/*!
 `hd-sync --watch --exec CMD` (issue 23 §3): after a pass that stored new mail, CMD runs
 through `/bin/sh -c` with the new messages' references on its standard input, one per
 line, `HUDSON_ACCOUNT` set to their account and `HUDSON_DB`, `HUDSON_CONFIG_DIR` to the
 store and configuration hd-sync uses (so `hd-show` in the hook reads the same store),
 and its standard output sent to hd-sync's standard error (hd-sync's standard output
 stays its records, NDJSON with `--json`). New mail is what Gmail received after
 the watch started (Store.messagesReceived, the rules file's definition too); each
 message is handed to the hook once per watch. The watch waits for the hook, so hooks
 never overlap; a hook that fails is told on standard error and the watch goes on.

 Handed at most once, not at least once: a message stored by a pass whose hook never ran
 (the watch was killed between the two) is not handed to the next watch, which starts
 later. `hd-ls --changed-since SEQ` is the durable feed.
 */
import Foundation
import HudsonStore
import HudsonSync

final class NewMailHook {
    let command: String
    let environment: [String: String]
    /// When the watch started, in epoch ms: mail Gmail received from then on is new.
    let since: Int64
    private var handed: [String: Set<String>] = [:]

    init(command: String, environment: [String: String], storePath: String, configDirectory: String, since: Int64) {
        self.command = command
        self.environment = environment.merging(["HUDSON_DB": storePath, "HUDSON_CONFIG_DIR": configDirectory]) { $1 }
        self.since = since
    }

    /// The account's new mail not handed yet, marked handed.
    func takeNew(email: String, database: SharedStore) throws -> [String] {
        let since = self.since
        let received = try database.read { store in
            try store.messagesReceived(accountID: try store.requireAccount(email: email).id, since: since)
        }
        var seen = handed[email, default: []]
        let fresh = received.filter { seen.insert($0).inserted }
        handed[email] = seen
        return fresh
    }

    /// Runs the command with `references` on its standard input; returns its failure, if
    /// any, in words.
    func run(references: [String], email: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = environment.merging(["HUDSON_ACCOUNT": email]) { $1 }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.standardError
        do { try process.run() } catch { return "cannot run /bin/sh: \(error)" }
        // A hook that does not read its input must not block the watch: a closed pipe
        // (EPIPE) is ignored, SIGPIPE is already ignored by every command.
        let text = references.map { "message:\($0)\n" }.joined()
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        switch process.terminationReason {
        case .exit where process.terminationStatus == 0: return nil
        case .exit: return "exited \(process.terminationStatus)"
        case .uncaughtSignal: return "killed by signal \(process.terminationStatus)"
        @unknown default: return "ended abnormally"
        }
    }
}
