// A temporary home for running hd-* commands: its own store and configuration
// directory, UTC, no colour, and a mailbox built through the store's own API.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

final class CLIFixture {
    let dir = TemporaryDirectory()
    var storePath: String { dir.path("data/hudson.sqlite3") }
    var environment: [String: String]

    init() {
        environment = [
            "HOME": dir.path("home"),
            "HUDSON_DB": dir.path("data/hudson.sqlite3"),
            "HUDSON_CONFIG_DIR": dir.path("config"),
            "TZ": "UTC",
            "NO_COLOR": "1",
            "PATH": "/usr/bin:/bin",
        ]
        try? FileManager.default.createDirectory(atPath: dir.path("data"), withIntermediateDirectories: true)
    }

    /// Runs a built command.
    func run(_ command: String, _ arguments: String..., stdin: String? = nil, environment extra: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable(command), arguments,
                              environment: environment.merging(extra) { $1 }, stdin: stdin)
    }

    /// Runs a shell pipeline with the built commands on PATH.
    func shell(_ script: String) throws -> CommandResult {
        var env = environment
        env["PATH"] = BuiltProducts.directory.path + ":/usr/bin:/bin"
        return try CommandRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script], environment: env)
    }

    func openStore() throws -> Store {
        try Store.open(path: storePath, access: .create)
    }

    /// A small mailbox: two threads in the inbox, one archived, one in spam, one with
    /// hostile headers, a user label, bodies for full text.
    @discardableResult
    func standardMailbox() throws -> Store {
        let store = try openStore()
        let account = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
        try store.replaceLabels(accountID: account.id, with: [
            LabelInfo(id: "INBOX", name: "INBOX", kind: .system), LabelInfo(id: "UNREAD", name: "UNREAD", kind: .system),
            LabelInfo(id: "STARRED", name: "STARRED", kind: .system), LabelInfo(id: "SPAM", name: "SPAM", kind: .system),
            LabelInfo(id: "SENT", name: "SENT", kind: .system), LabelInfo(id: "TRASH", name: "TRASH", kind: .system),
            LabelInfo(id: "Label_1", name: "Work", kind: .user), LabelInfo(id: "Label_2", name: "Travel/2026", kind: .user),
        ])
        var bodies: [String: String] = [:]
        func message(_ id: String, _ thread: String, minute: Int64, labels: [String], subject: String, from: String,
                     body: String) -> MessageSnapshot {
            bodies[id] = body
            return MessageSnapshot(
                id: id, threadID: thread, historyID: 1000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
                labelIDs: labels, snippet: String(body.prefix(40)), sizeEstimate: 1000 + minute,
                headers: MessageHeaders(subject: subject, from: from, to: "Ann <ann@example.com>", messageID: "<\(id)@example.org>"))
        }
        let snapshots = [
            message("a1", "ta", minute: 10, labels: ["INBOX", "UNREAD"], subject: "Quarterly budget review",
                    from: "Alice Smith <alice@example.org>", body: "Please review the budget before the meeting on Friday."),
            message("a2", "ta", minute: 20, labels: ["INBOX", "Label_1"], subject: "Re: Quarterly budget review",
                    from: "Ann <ann@example.com>", body: "Looks good to me. Meeting confirmed."),
            message("b1", "tb", minute: 30, labels: ["INBOX", "UNREAD", "STARRED", "Label_2"], subject: "Flight to Zürich",
                    from: "Travel Desk <travel@example.net>", body: "Your café reservation in Zürich is confirmed."),
            message("c1", "tc", minute: 5, labels: ["Label_1"], subject: "Old project notes",
                    from: "Bob <bob@example.org>", body: "Archived notes about the projector."),
            message("s1", "ts", minute: 40, labels: ["SPAM"], subject: "You won a budget prize",
                    from: "Spammer <win@spam.example>", body: "budget budget budget"),
            message("h1", "th", minute: 35, labels: ["INBOX"],
                    subject: "Invoice \u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[31mpaid\u{202E}fdp.exe",
                    from: "\u{1B}[2JEvil <evil@example.com>", body: "hostile"),
        ]
        _ = try store.applySnapshots(snapshots, accountID: account.id)
        for (id, body) in bodies {
            try store.saveBody(MessageBody(text: body), gmailID: id, accountID: account.id)
        }
        return store
    }

    func expectSnapshot(_ text: String, _ name: String, filePath: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation) {
        if let failure = Snapshot.check(text, named: name, filePath: filePath) {
            Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
        }
    }
}

extension CLIFixture {
    /// Points the commands at `fake` and adds its account with `hd-auth add`.
    @discardableResult
    func connect(_ fake: FakeGmail, lookbackDays: Int = 90) throws -> CommandResult {
        environment.merge(fake.environment) { $1 }
        try fake.clientSecretJSON.write(toFile: dir.path("client_secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: dir.path("refresh_token"), atomically: true, encoding: .utf8)
        let result = try run("hd-auth", "add", fake.email, "--client-secret", dir.path("client_secret.json"),
                             "--refresh-token-file", dir.path("refresh_token"), "--lookback-days", String(lookbackDays))
        #expect(result.status == 0, "\(result)")
        return result
    }

    var credentialsPath: String { dir.path("config/credentials/demo@hudson.test.json") }

    /// A fixture connected to a fake serving a demo mailbox of `count` messages over
    /// `spanDays` days, caught up by `hd-sync --catch-up`.
    static func syncedDemo(count: Int, spanDays: Int) throws -> (CLIFixture, FakeGmail) {
        let f = CLIFixture()
        let fake = try FakeGmail(["--demo", "--demo-count", String(count), "--demo-span-days", String(spanDays)])
        try f.connect(fake)
        let sync = try f.run("hd-sync", "--catch-up")
        #expect(sync.status == 0, "\(sync)")
        return (f, fake)
    }
}
