// Server faults (issue 10), from the fake's fault rules: 5xx on a fraction of
// requests, 429 with and without Retry-After, a server that accepts and never answers,
// connections reset mid-body, truncated or invalid JSON, valid JSON of the wrong
// shape, an expired history cursor (404), 401 after a refresh, a modify applied and
// then dropped. Criteria: while the faults last, nothing from a bad response is
// committed (every stored message is the server's, with the labels the server gave at
// some point) and the queue survives (each mark is still queued or already at
// Gmail); exit statuses are the contract's; retries are bounded and back off; once the
// faults end, one `hd-sync --catch-up` converges to the server's truth.
import Foundation
import HudsonTestSupport
import SQLite
import Testing

struct Fault: CustomTestStringConvertible, Sendable {
    var name: String
    var rules: String
    /// Exit statuses hd-sync --catch-up may give while the rules hold.
    var statuses: Set<Int32>
    /// Run only in the long suite.
    var long = false
    /// Words the error must hold when the fault stops the sync with 77 or is the
    /// account's: what to do.
    var advice = "hd-auth login"
    /// A failure of the whole account (GmailError.isAccountWide): the pass stops, and no
    /// message is parked for it.
    var accountWide = false
    var testDescription: String { name }

    var ruleObjects: [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(rules.utf8)) as? [[String: Any]]) ?? []
    }
}

@Suite("Server faults: converge to Gmail's truth, bounded retries, nothing bad committed, the queue survives", .serialized)
struct ServerFaultTests {
    static let faults: [Fault] = [
        Fault(name: "503 on every third request", rules: #"[{"status": 503, "every": 3, "times": 15}]"#, statuses: [0]),
        // Half of all fetches failing: some message may fail five times running, and the
        // catch-up then gives up with 75 (safe to retry) rather than retrying forever.
        Fault(name: "500 on every second message fetch, in batches too",
              rules: #"[{"path": "/messages/[0-9a-f]+$", "status": 500, "every": 2, "times": 40}]"#, statuses: [0, 75]),
        Fault(name: "429 with Retry-After", rules: #"[{"status": 429, "retry_after": 1, "every": 5, "times": 6}]"#, statuses: [0]),
        Fault(name: "429 without Retry-After", rules: #"[{"status": 429, "every": 5, "times": 6}]"#, statuses: [0]),
        Fault(name: "connection dropped with no answer",
              rules: #"[{"path": "/history$|/messages$|/labels$|/profile$", "mode": "drop", "every": 2, "times": 3}]"#, statuses: [0]),
        // A dropped batch costs one request timeout (30 s): see docs/reliability.md.
        Fault(name: "a batch connection dropped", rules: #"[{"path": "^/batch", "mode": "drop", "times": 1}]"#, statuses: [0],
              long: true),
        Fault(name: "connection reset mid-body",
              rules: #"[{"path": "/history$|/messages$", "mode": "truncate", "every": 2, "times": 3}, {"path": "^/batch", "mode": "truncate", "times": 2}]"#,
              statuses: [0]),
        Fault(name: "invalid JSON in message fetches",
              rules: #"[{"path": "/messages/[0-9a-f]+$", "mode": "invalid_json", "every": 7, "times": 12}]"#, statuses: [0, 75]),
        Fault(name: "invalid JSON in a history page", rules: #"[{"path": "/history$", "mode": "invalid_json", "times": 2}]"#,
              statuses: [75]),
        Fault(name: "invalid JSON in a list page", rules: #"[{"path": "/messages$", "mode": "invalid_json", "times": 2}]"#,
              statuses: [75]),
        Fault(name: "valid JSON of the wrong shape in message fetches",
              rules: #"[{"path": "/messages/[0-9a-f]+$", "mode": "wrong_shape", "every": 9, "times": 8}]"#, statuses: [0, 75]),
        Fault(name: "valid JSON of the wrong shape in a history page", rules: #"[{"path": "/history$", "mode": "wrong_shape", "times": 1}]"#,
              statuses: [75]),
        Fault(name: "401 after the refresh too", rules: #"[{"path": "/history$", "status": 401, "times": 2}]"#, statuses: [77]),
        // A 403 that is not a rate limit is the account's (GmailError.isAccountWide): the
        // pass stops with 77, parking nothing and dropping no queued change.
        // The daily quota is a quota: 75, safe to run again (CONTRACT.md).
        Fault(name: "403 dailyLimitExceeded on every message fetch, in batches too",
              rules: #"[{"path": "/messages/[0-9a-f]+$", "status": 403, "reason": "dailyLimitExceeded", "times": -1}]"#,
              statuses: [75], advice: "dailyLimitExceeded", accountWide: true),
        Fault(name: "403 domainPolicy on every modify",
              rules: #"[{"path": "odify$", "status": 403, "reason": "domainPolicy", "times": -1}]"#, statuses: [77],
              advice: "domainPolicy", accountWide: true),
        Fault(name: "a modify applied, then the connection dropped",
              rules: #"[{"path": "odify$", "mode": "apply_then_drop", "times": 2}]"#, statuses: [0]),
    ].filter { !$0.long || Scale.long }

    typealias ServerState = [String: (thread: String, labels: Set<String>, internalDate: Int64)]

    /// A store synced in part (so the faults hit history polling and the flusher as
    /// well as backfill), then more mail and changes on the server, and marks in the
    /// queue. Returns the server's state at the first sync too.
    func prepared(count: Int = 160) throws -> (Rig, FakeGmail, [String: (label: String, present: Bool)], ServerState) {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: count))
        try rig.connect()
        #expect(try rig.run("hd-sync", "--max-pages", "1", "--prefetch-days", "0").status == 0)
        let initial = try fake.messages()
        try changeServer(fake, seed: 3, count: 40)
        var intended: [String: (label: String, present: Bool)] = [:]
        let server = try fake.messages()
        let stored = try rig.run("hd-search", "--messages", "--ids", "-n", "40", "in:anywhere").lines.map { String($0.dropFirst("message:".count)) }
        for id in stored.filter({ server[$0]?.labels.isDisjoint(with: ["SPAM", "TRASH"]) == true }).prefix(6) {
            let star = !server[id]!.labels.contains("STARRED")
            let mark = try rig.run("hd-mark", "--no-flush", star ? "star" : "unstar", "message:\(id)")
            #expect(mark.status == 0, "\(mark)")
            intended[id] = ("STARRED", star)
        }
        #expect(intended.count >= 4, "too few marks to follow")
        return (rig, fake, intended, initial)
    }

    /// While faults hold: every stored message is one of the server's, with its thread
    /// and date, and labels the server gave it at some point (at the first sync, after
    /// the changes, or now); each mark is queued or done.
    func expectNothingBadCommitted(_ rig: Rig, _ fake: FakeGmail, states: [ServerState],
                                   intended: [String: (label: String, present: Bool)],
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let server = try fake.messages()
        let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readOnly))
        var bad: [String] = []
        try db.read {
            try db.prepare("""
                SELECT m.gmail_id, m.thread_id, m.internal_date, coalesce(group_concat(l.label, ' '), '')
                  FROM messages AS m LEFT JOIN message_labels AS l ON l.message_id = m.id GROUP BY m.id
                """).forEach { row in
                let id = row.string(0)
                // Deleted since the last poll that worked is fine; never on the server is not.
                guard let truth = server[id] ?? states.lazy.compactMap({ $0[id] }).first else {
                    bad.append("\(id) was never on the server")
                    return
                }
                if truth.thread != row.string(1) || truth.internalDate != row.int64(2) { bad.append("\(id): wrong thread or date") }
                let labels = Set(row.string(3).split(separator: " ").map(String.init))
                if labels != truth.labels && !states.contains(where: { $0[id]?.labels == labels }) {
                    bad.append("\(id): labels \(labels.sorted()) were never Gmail's")
                }
            }
        }
        #expect(bad.isEmpty, "\(bad.prefix(5))", sourceLocation: sourceLocation)
        let queued = Set(try rig.queue().map(\.message))
        for (id, mark) in intended where !queued.contains(id) {
            #expect(server[id]?.labels.contains(mark.label) == mark.present, "\(id): the mark is neither queued nor at Gmail",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("a fault, then convergence", arguments: faults)
    func fault(_ fault: Fault) throws {
        let (rig, fake, intended, initial) = try prepared()
        let before = try fake.messages()
        try fake.faults(fault.ruleObjects)
        let started = Date()
        let faulted = try rig.run("hd-sync", catchUp, timeout: 300)
        let rules = (try fake.admin("GET", "faults") as? [String: Any])?["rules"] as? [[String: Any]] ?? []
        #expect(rules.allSatisfy { ($0["fired"] as? Int ?? 0) > 0 }, "a rule never fired: \(rules)")
        Report.note("\(fault.name): exit \(faulted.status) after \(Date().timeIntervalSince(started)) s; fired \(rules.map { $0["fired"] ?? 0 })")
        #expect(fault.statuses.contains(faulted.status), "\(faulted)")
        // One line of error at most; messages parked on the way are told besides (one line
        // each, at most five and a summary).
        let errors = faulted.stderr.split(separator: "\n").filter { !$0.contains(": parked (") && !$0.contains(" more message(s) parked") }
        #expect(errors.count <= 1, "more than one line of error: \(faulted.stderr)")
        try expectNothingBadCommitted(rig, fake, states: [initial, before], intended: intended)
        if fault.statuses == [77] || fault.accountWide { #expect(faulted.stderr.contains(fault.advice), "\(faulted.stderr)") }
        if fault.accountWide { #expect(!faulted.stderr.contains("parked"), "\(faulted.stderr)") }

        try fake.admin("DELETE", "faults")
        let converged = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(converged.status == 0, "\(converged)")
        try rig.expectMatchesServer()
        #expect(try rig.queue().isEmpty)
        let server = try fake.messages()
        for (id, mark) in intended {
            #expect(server[id]?.labels.contains(mark.label) == mark.present, "\(id): \(mark.label) should be \(mark.present)")
        }
        try StoreDump.expectSound(rig.storePath)
        try rig.expectNoSecretsLeaked()
    }

    @Test("a server that accepts and never answers: the request times out, is retried, and the sync completes")
    func hang() throws {
        let (rig, fake, intended, _) = try prepared(count: 60)
        try fake.faults([["path": "/history$", "mode": "hang", "times": 1]])
        let started = Date()
        let result = try rig.run("hd-sync", catchUp, timeout: 200)
        #expect(result.status == 0, "\(result)")
        #expect(Date().timeIntervalSince(started) < 100, "the hang was not bounded by the request timeout")
        try rig.expectMatchesServer()
        let server = try fake.messages()
        for (id, mark) in intended { #expect(server[id]?.labels.contains(mark.label) == mark.present) }
        try rig.expectNoSecretsLeaked()
    }

    @Test("a 5xx that never ends: a bounded number of attempts with growing waits, exit 75, the queue kept")
    func boundedRetries() throws {
        let (rig, fake, intended, initial) = try prepared(count: 60)
        let before = try fake.messages()
        try fake.faults([["path": "/history$", "status": 503, "times": -1]])
        try fake.clearRequests()
        let started = Date()
        let result = try rig.run("hd-sync", "--prefetch-days", "0", timeout: 200)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 75, "\(result)")
        #expect(result.stderr.contains("hd-sync: gmail:"), "\(result.stderr)")
        let log = (try fake.admin("GET", "requests") as? [[String: Any]] ?? []).filter { ($0["path"] as? String)?.hasSuffix("/history") == true }
        let times = log.compactMap { $0["time"] as? Double }
        #expect((2...5).contains(times.count), "\(times.count) attempts at history.list")
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.reduce(0, +) > 1, "the retries did not back off: \(gaps)")
        #expect(elapsed < 90, "retrying took \(elapsed) s")
        // The queue went out before the poll failed, or is still queued: nothing lost.
        try expectNothingBadCommitted(rig, fake, states: [initial, before], intended: intended)
        try rig.expectNoSecretsLeaked()
    }

    @Test("429 with Retry-After: the same request is not sent again before the server's wait is over")
    func retryAfterIsHonoured() throws {
        let (rig, fake, _, _) = try prepared(count: 60)
        try fake.faults([["path": "/history$", "status": 429, "retry_after": 2, "times": 1]])
        try fake.clearRequests()
        let result = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(result.status == 0, "\(result)")
        let log = (try fake.admin("GET", "requests") as? [[String: Any]] ?? []).filter { ($0["path"] as? String)?.hasSuffix("/history") == true }
        let times = log.compactMap { $0["time"] as? Double }
        #expect(times.count == 2 && log.first?["status"] as? Int == 429, "\(log)")
        if times.count == 2 { #expect(times[1] - times[0] >= 1.9, "retried after \(times[1] - times[0]) s, not 2") }
        try rig.expectNoSecretsLeaked()
    }

    @Test("an expired history cursor (404): the store re-lists and converges, the queue survives")
    func expiredHistory() throws {
        let (rig, fake, intended, _) = try prepared()
        try fake.admin("POST", "expire-history", [:])
        let result = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(result.status == 0, "\(result)")
        try rig.expectMatchesServer()
        #expect(try rig.queue().isEmpty)
        let server = try fake.messages()
        for (id, mark) in intended { #expect(server[id]?.labels.contains(mark.label) == mark.present) }
        try StoreDump.expectSound(rig.storePath)
        try rig.expectNoSecretsLeaked()
    }
}
