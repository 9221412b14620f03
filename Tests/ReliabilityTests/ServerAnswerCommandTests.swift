// Issue 37 §2, against the built commands and the fake Gmail (whose `body` fault rule
// answers JSON a test writes): history answers are validated before the cursor moves; ids
// Gmail calls invalid (400) or gone (404) are confirmed gone, so a catch-up over them
// completes, killed or not; what fails for ever on any read path (backfill, history,
// hydration, a re-list) is parked, told, keeps the rest going, and can be dropped with
// `hd-pending --parked --drop`; and generated answers — random and adversarial history,
// list, message, label and profile JSON — never crash or hang hd-sync, give one line of error and 0 or
// 75, never move the cursor past what Gmail gave, lose no queued change and leave a sound
// store.
import Foundation
import HudsonTestSupport
import SQLite
import Testing

@Suite("Server answers: the cursor, gone ids, parked ids and generated answers, against the built hd-sync", .serialized)
struct ServerAnswerCommandTests {
    func synced(count: Int = 30) throws -> (Rig, FakeGmail) {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: count))
        try rig.connect()
        let sync = try rig.run("hd-sync", catchUp)
        #expect(sync.status == 0, "\(sync)")
        return (rig, fake)
    }

    func cursor(_ rig: Rig) throws -> Int64? { try rig.scalar("SELECT history_id FROM accounts") }

    /// The mailbox's current history id, as the fake keeps it.
    func serverHistoryID(_ fake: FakeGmail) throws -> Int64 {
        let state = try fake.admin("GET", "state") as? [String: Any]
        return Int64(state?["historyId"] as? String ?? "") ?? 0
    }

    func stored(_ rig: Rig, _ id: String) throws -> Bool {
        try rig.scalar("SELECT count(*) FROM messages WHERE gmail_id = '\(id)'") == 1
    }

    /// New mail on the server (a messageAdded record); returns its id.
    func deliver(_ fake: FakeGmail, _ tag: String) throws -> String {
        let answer = try fake.admin("POST", "insert", ["raw": """
            From: Someone <someone@example.org>\r
            To: demo@hudson.test\r
            Subject: Arrived: \(tag)\r
            Message-ID: <\(tag)@example.org>\r
            \r
            Body of \(tag).\r
            """]) as? [String: Any]
        return try #require(answer?["id"] as? String)
    }

    /// Standard error without the lines that tell parked messages (one each, then a
    /// summary: hd-sync(1)): what is left must be one line at most.
    func errorLines(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.contains(": parked (") && !$0.contains(" more message(s) parked") }
    }

    // MARK: - The history cursor (§2 fourth bullet)

    @Test("the issue's history page (records of wrong types, a record id of 999999999999, a page historyId of -1 or past getProfile's): 75, one line, the cursor and the store unmoved; then the new mail arrives",
          arguments: ["-1", "999999999999", "oops"])
    func issuesHistoryPage(_ pageHistoryID: String) throws {
        let (rig, fake) = try synced()
        let new = try deliver(fake, "after-the-bad-page-\(pageHistoryID)")
        let before = try #require(try cursor(rig))
        let victim = try #require(try fake.messages().keys.sorted().first)
        let versionBefore = try rig.scalar("SELECT history_id FROM messages WHERE gmail_id = '\(victim)'")
        let page: [String: Any] = ["historyId": pageHistoryID, "history": [
            ["id": "999999999999", "labelsAdded": [["message": ["id": victim, "threadId": victim], "labelIds": ["STARRED"]]],
             "messagesAdded": [["message": ["id": new, "threadId": new]]]],
            ["id": 5, "messagesDeleted": "everything"],
        ]]
        try fake.faults([["path": "/history$", "mode": "body", "body": page, "times": -1]])
        let result = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(result.status == 75, "\(result)")
        #expect(errorLines(result.stderr).count == 1 && result.stderr.hasPrefix("hd-sync: "), "\(result.stderr)")
        #expect(try cursor(rig) == before)
        #expect(try !stored(rig, new))
        #expect(try rig.scalar("SELECT history_id FROM messages WHERE gmail_id = '\(victim)'") == versionBefore)
        try fake.admin("DELETE", "faults")
        let healed = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect(healed.status == 0, "\(healed)")
        #expect(try stored(rig, new))
        #expect(try cursor(rig) == (try serverHistoryID(fake)))
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
    }

    // MARK: - Ids Gmail calls invalid or gone (§2 fifth bullet)

    /// Gmail's listing of the whole window, as one page: the real messages and `bogus`
    /// ids, which the fake answers 404 for, or 400 "Invalid id value" with the rule.
    func listing(_ fake: FakeGmail, bogus: [String]) throws -> [[String: Any]] {
        let real = try fake.messages().filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }.keys.sorted()
        let page: [String: Any] = ["messages": (bogus + real).map { ["id": $0, "threadId": $0] }, "resultSizeEstimate": bogus.count + real.count]
        return [["path": "/messages$", "mode": "body", "body": page, "times": -1]]
    }

    static let bogus = (1...6).map { String(format: "dead%012x", $0) }

    @Test("ids of a wrong shape in a history page are never requested, and the pass says how many (stderr, --json unusable_ids)")
    func unusableIDsAreTold() throws {
        let (rig, fake) = try synced()
        let new = try deliver(fake, "beside-bad-ids")
        let current = try serverHistoryID(fake)
        let page: [String: Any] = ["historyId": String(current), "history": [
            ["id": String(current), "messagesAdded": [["message": ["id": "..", "threadId": ".."]], ["message": ["id": "a/b", "threadId": "a/b"]],
                                                      ["message": ["id": new, "threadId": new]]]],
        ]]
        try fake.faults([["path": "/history$", "mode": "body", "body": page, "times": 1]])
        try fake.clearRequests()
        let result = try rig.run("hd-sync", "--json", "--prefetch-days", "0")
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("2 id(s) in Gmail's answers are not of a Gmail id's shape"), "\(result.stderr)")
        #expect(result.stdout.contains("\"unusable_ids\":2"), "\(result.stdout)")
        #expect(try stored(rig, new))
        let paths = try fake.requests().map(\.path)
        #expect(!paths.contains { $0.hasSuffix("/messages/..") || $0.contains("a/b") || $0.hasSuffix("/messages/") }, "\(paths)")
    }

    @Test("a catch-up over a listing whose ids Gmail answers 400 Invalid id, or 404, for each: they are gone, nothing is parked, exit 0",
          arguments: [400, 404])
    func invalidIDsInTheListing(_ status: Int) throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 30))
        try rig.connect()
        var rules = try listing(fake, bogus: Self.bogus)
        if status == 400 {
            rules.append(["path": "/messages/dead", "status": 400, "message": "Invalid id value", "reason": "invalidArgument", "times": -1])
        }
        try fake.faults(rules)
        let result = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(result.status == 0, "\(result)")
        #expect(try rig.run("hd-pending", "--parked", "--count").stdout == "0\n")
        #expect(try rig.scalar("SELECT count(*) FROM messages WHERE gmail_id LIKE 'dead%'") == 0)
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
    }

    @Test("kill -9 during a catch-up over such a listing, at random moments: each resume goes on, and the last completes with nothing parked")
    func killedDuringCatchUpOverInvalidIDs() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 120, latencyMilliseconds: 15))
        try rig.connect()
        var rules = try listing(fake, bogus: Self.bogus)
        rules.append(["path": "/messages/dead", "status": 400, "message": "Invalid id value", "reason": "invalidArgument", "times": -1])
        try fake.faults(rules)
        var generator = SeededGenerator(seed: 37)
        var landed = 0
        for round in 0..<4 {
            let started = try rig.start("hd-sync", catchUp)
            Thread.sleep(forTimeInterval: Double.random(in: 0.3...2.0, using: &generator))
            if started.isRunning { landed += 1 }
            let exit = rig.kill9(started)
            #expect(exit.killed || exit.status == 0, "round \(round): \(exit)")
        }
        Report.note("\(landed) of 4 kills landed during the catch-up")
        let resumed = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try rig.run("hd-pending", "--parked", "--count").stdout == "0\n")
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
    }

    // MARK: - What fails for ever, on every read path, and --drop

    enum ReadPath: String, CaseIterable, CustomTestStringConvertible {
        case backfill, history, hydration, relist
        var testDescription: String { rawValue }
    }

    @Test("a message Gmail fails for ever (5xx) on a read path: the rest completes, it is parked and told, the cursor and the listing move on; the catch-up says so (75) until hd-pending --parked --drop, then completes",
          arguments: ReadPath.allCases)
    func failingForever(_ path: ReadPath) throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 30))
        try rig.connect()
        var victim: String
        switch path {
        case .backfill:
            victim = try #require(try fake.messages().filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }.keys.sorted().first)
        case .history:
            #expect(try rig.run("hd-sync", catchUp).status == 0)
            victim = try deliver(fake, "failing-for-ever")
        case .hydration:
            // No body in a day's window (the mailbox ends a year ago): then every body.
            #expect(try rig.run("hd-sync", "--catch-up", "--prefetch-days", "1").status == 0)
            victim = try #require(try fake.messages().filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }.keys.sorted().first)
        case .relist:
            #expect(try rig.run("hd-sync", catchUp).status == 0)
            // Moved to spam meanwhile, so the re-list does not list it and must fetch it.
            victim = try #require(try fake.messages().filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }.keys.sorted().first)
            try fake.modify(victim, add: ["SPAM"], remove: ["INBOX"])
            try fake.admin("POST", "expire-history", [:])
        }
        try fake.faults([["path": "/messages/\(victim)$", "status": 500, "times": -1]])
        let first = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(first.status == 75 && first.stderr.contains("not caught up: 1 message(s)"), "\(first)")
        #expect(first.stderr.contains("message:\(victim): parked ("), "\(first)")
        #expect(try rig.scalar("SELECT backfill_state = 'complete' FROM accounts") == 1)
        #expect(try cursor(rig) == (try serverHistoryID(fake)))
        if path == .history {
            // Later mail still arrives past it.
            let later = try deliver(fake, "later")
            #expect(try rig.run("hd-sync", "--prefetch-days", "0").status == 0)
            #expect(try stored(rig, later))
        }
        let parked = try rig.run("hd-pending", "--parked")
        #expect(parked.lines.count == 1 && parked.stdout.hasPrefix("message:\(victim)\tparked\t"), "\(parked)")

        // Usage: --drop goes with --parked and message references.
        #expect(try rig.run("hd-pending", "--drop", "message:\(victim)").status == 64)
        #expect(try rig.run("hd-pending", "message:\(victim)").status == 64)
        #expect(try rig.run("hd-pending", "--parked", "--drop", "--count", "message:\(victim)").status == 64)
        let wrong = try rig.run("hd-pending", "--parked", "--drop", "thread:\(victim)", "message:ffff000000000000")
        #expect(wrong.status == 2 && wrong.stderr.contains("not a message") && wrong.stderr.contains("not parked"), "\(wrong)")
        #expect(try rig.run("hd-pending", "--parked", "--count").stdout == "1\n")

        let drop = try rig.run("hd-pending", "--parked", "--drop", "-", stdin: "message:\(victim)\n")
        #expect(drop.status == 0 && drop.stdout.hasPrefix("message:\(victim)\tparked\t") && drop.stdout.contains("\tdropped\t"), "\(drop)")
        try fake.clearRequests()
        let second = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(second.status == 0 && errorLines(second.stderr).isEmpty, "\(second)")
        #expect(try fake.requests().allSatisfy { !$0.path.hasSuffix("/messages/\(victim)") }, "the dropped message was asked for again")
        let listed = try rig.run("hd-pending", "--parked", "--json")
        #expect(listed.stdout.contains("\"dropped\":true") && listed.stdout.contains("\"next_attempt\":null"), "\(listed)")
        // Nothing else was lost: once Gmail serves it, a change to it brings it back.
        try fake.admin("DELETE", "faults")
        if path != .hydration && path != .relist {
            try fake.modify(victim, add: ["STARRED"])
            #expect(try rig.run("hd-sync", catchUp).status == 0)
            #expect(try stored(rig, victim))
            #expect(try rig.run("hd-pending", "--parked", "--count").stdout == "0\n")
        }
        try StoreDump.expectSound(rig.storePath)
    }

    // MARK: - Generated answers (Done when: the server-answer surface of hd-sync)

    /// Random and adversarial JSON for one answer: history pages, list pages and message
    /// answers built from valid parts, values of the wrong type or range, ids of every bad
    /// shape, and the odd non-object. Lies Gmail could tell undetectably (a valid record id
    /// about a real message, a valid page id past a real change) are left out: nothing
    /// could tell them from the truth, and the test checks the store against Gmail at the end.
    struct AnswerGenerator {
        var random: SeededGenerator
        let real: [String]
        let cursor: Int64
        let current: Int64

        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

        mutating func hostileID() -> Any {
            pick(["..", ".", "a/b", "", "%2e", String(repeating: "f", count: 300), "a b", "\u{1B}[2J", 42, NSNull(), ["id"], "dead00000000beef"])
        }

        mutating func badHistoryID() -> Any {
            pick(["-1", "0", "abc", "+5", " 7", "99999999999999999999", String(current + Int64.random(in: 1...1000, using: &random)),
                  "999999999999", String(cursor - 1), Int(current), NSNull(), true] as [Any])
        }

        mutating func messageRef(realAllowed: Bool) -> [String: Any] {
            var ref: [String: Any] = [:]
            ref["id"] = realAllowed && chance(0.4) ? pick(real) : (chance(0.5) ? String(format: "dead%012x", Int.random(in: 1...9999, using: &random)) : hostileID())
            if chance(0.7) { ref["threadId"] = chance(0.7) ? ref["id"] : hostileID() }
            if chance(0.2) { ref["historyId"] = badHistoryID() }
            return ref
        }

        mutating func labelIDs() -> Any {
            chance(0.1) ? pick(["INBOX", 5, NSNull()] as [Any]) : (0..<Int.random(in: 0...3, using: &random)).map { _ in
                pick(["INBOX", "UNREAD", "STARRED", "Label_1", "", "a/b", 7, "CATEGORY_SOCIAL", "Label_9999"] as [Any])
            }
        }

        mutating func record(trustedPage: Bool) -> Any {
            if chance(0.05) { return pick(["record", 7, NSNull()] as [Any]) }
            // A record whose id is valid for this page names only mail Gmail does not have.
            let validID = trustedPage && chance(0.6)
            var record: [String: Any] = [:]
            if validID { record["id"] = String(cursor) } else if chance(0.9) { record["id"] = badHistoryID() }
            for key in ["messagesAdded", "messagesDeleted", "labelsAdded", "labelsRemoved", "messages"] where chance(0.4) {
                if chance(0.1) { record[key] = pick(["list", 3, ["message": "x"]] as [Any]); continue }
                record[key] = (0..<Int.random(in: 1...3, using: &random)).map { _ -> Any in
                    let ref = messageRef(realAllowed: !validID)
                    switch key {
                    case "messages": return ref
                    case "labelsAdded", "labelsRemoved": return ["message": ref, "labelIds": labelIDs()]
                    default: return chance(0.9) ? ["message": ref] : [:]
                    }
                }
            }
            return record
        }

        mutating func historyPage() -> Any {
            if chance(0.05) { return pick([[], "page", 3, NSNull()] as [Any]) }
            var page: [String: Any] = [:]
            // The only valid page id offered is the cursor itself: "nothing new".
            let trusted = chance(0.4)
            if trusted { page["historyId"] = String(cursor) } else if chance(0.9) { page["historyId"] = badHistoryID() }
            if chance(0.85) { page["history"] = (0..<Int.random(in: 0...4, using: &random)).map { _ in record(trustedPage: trusted) } }
            if chance(0.2) { page["nextPageToken"] = pick(["", "garbage-token", 5] as [Any]) }
            return page
        }

        mutating func listPage() -> Any {
            if chance(0.05) { return pick([[], "page", NSNull()] as [Any]) }
            var page: [String: Any] = [:]
            if chance(0.9) {
                // Every real message is listed (a listing that leaves some out is a lie too),
                // with hostile and unknown ids and duplicates among them.
                var entries: [Any] = real.map { ["id": $0, "threadId": $0] }
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    entries.insert(chance(0.1) ? pick([5, "id", NSNull()] as [Any]) : messageRef(realAllowed: true),
                                   at: Int.random(in: 0...entries.count, using: &random))
                }
                page["messages"] = chance(0.05) ? "messages" : entries
            }
            if chance(0.3) { page["resultSizeEstimate"] = pick([-1, 5, "5", 2_147_483_648, NSNull()] as [Any]) }
            if chance(0.2) { page["nextPageToken"] = pick(["", "garbage-token", 5] as [Any]) }
            return page
        }

        mutating func labels() -> Any {
            if chance(0.05) { return pick([[], "labels", NSNull()] as [Any]) }
            var entries: [Any] = ["INBOX", "UNREAD", "STARRED", "SENT", "SPAM", "TRASH"].map { ["id": $0, "name": $0, "type": "system"] }
            entries.append(["id": "Label_1", "name": "Work", "type": "user"])
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                var label: [String: Any] = ["id": chance(0.7) ? hostileID() : "Label_\(Int.random(in: 2...99, using: &random))"]
                if chance(0.8) { label["name"] = pick(["New", "", "\u{1B}[31mred", 5, "a/b/c"] as [Any]) }
                if chance(0.3) { label["messagesTotal"] = pick([-1, "3", 3] as [Any]) }
                if chance(0.2) { label["color"] = pick([["textColor": 5], "red", ["backgroundColor": "#ffffff"]] as [Any]) }
                entries.insert(label, at: Int.random(in: 0...entries.count, using: &random))
            }
            return chance(0.05) ? ["labels": "none"] : ["labels": entries]
        }

        mutating func profile() -> Any {
            if chance(0.05) { return pick([[], "profile", 3] as [Any]) }
            var profile: [String: Any] = ["emailAddress": "demo@hudson.test"]
            if chance(0.9) { profile["historyId"] = chance(0.3) ? String(cursor) : badHistoryID() }
            if chance(0.3) { profile["messagesTotal"] = pick([-1, "12", 12] as [Any]) }
            return profile
        }

        mutating func message() -> Any {
            if chance(0.05) { return pick([[], "message", 3] as [Any]) }
            var message = messageRef(realAllowed: false)
            if chance(0.5) { message["labelIds"] = labelIDs() }
            if chance(0.5) { message["internalDate"] = pick(["-1", "884541340800000", "abc", 1733140800000, "1733140800000"] as [Any]) }
            if chance(0.4) { message["sizeEstimate"] = pick([-1, 2_147_483_648, "12", 12] as [Any]) }
            if chance(0.3) { message["payload"] = pick([["body": ["size": -1]], ["parts": "none"], ["body": ["attachmentId": "../x"]], 5] as [Any]) }
            if chance(0.3) { message["raw"] = pick(["!!!", 5, ""] as [Any]) }
            return message
        }
    }

    @Test("generated history, list, message, label and profile answers: no crash, no hang, one line of error, 0 or 75, the cursor never past Gmail's, no queued change lost, a sound store")
    func generatedAnswers() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["HUDSON_GENERATED_SEED"] ?? "") ?? 3737
        let cases = Scale.pick(90, long: 600)
        let (rig, fake) = try synced(count: 25)
        let real = try fake.messages().filter { $0.value.labels.isDisjoint(with: ["SPAM", "TRASH"]) }.keys.sorted()
        var random = SeededGenerator(seed: seed)
        // Marks queued along the way must all reach Gmail: the last one per message wins.
        var intended: [String: Bool] = [:]
        var statuses: [Int32: Int] = [:]
        for index in 0..<cases {
            let before = try #require(try cursor(rig))
            let current = try serverHistoryID(fake)
            var generator = AnswerGenerator(random: random, real: real, cursor: before, current: current)
            let kind = index % 5
            let rule: [String: Any]
            let arguments: [String]
            switch kind {
            case 3:
                rule = ["path": "/labels$", "mode": "body", "body": generator.labels(), "times": 1]
                arguments = ["--prefetch-days", "0"]
            case 4:
                // New mail, so the poll asks getProfile whether the page's history id is one.
                _ = try deliver(fake, "generated-profile-\(seed)-\(index)")
                rule = ["path": "/profile$", "mode": "body", "body": generator.profile(), "times": Int.random(in: 1...3, using: &random)]
                arguments = ["--prefetch-days", "0"]
            case 0:
                rule = ["path": "/history$", "mode": "body", "body": generator.historyPage(), "times": Int.random(in: 1...3, using: &random)]
                arguments = ["--prefetch-days", "0"]
            case 1:
                try fake.admin("POST", "expire-history", [:])  // the next sync lists the window again
                rule = ["path": "/messages$", "mode": "body", "body": generator.listPage(), "times": 1]
                arguments = catchUp
            default:
                _ = try deliver(fake, "generated-\(seed)-\(index)")
                rule = ["path": "/messages/[0-9a-f]+$", "mode": "body", "body": generator.message(), "times": Int.random(in: 1...4, using: &random)]
                arguments = ["--prefetch-days", "0"]
            }
            random = generator.random
            if Bool.random(using: &random) {
                let id = real[Int.random(in: 0..<real.count, using: &random)]
                let star = Bool.random(using: &random)
                #expect(try rig.run("hd-mark", "--no-flush", star ? "star" : "unstar", "message:\(id)").status == 0)
                intended[id] = star
            }
            try fake.faults([rule])
            let body = (try? String(decoding: JSONSerialization.data(withJSONObject: rule, options: [.fragmentsAllowed]), as: UTF8.self)) ?? "?"
            let context = "seed \(seed) (HUDSON_GENERATED_SEED), case \(index): \(body.prefix(600))"
            let result = try rig.run("hd-sync", arguments, timeout: 90)
            statuses[result.status, default: 0] += 1
            #expect([0, 75].contains(result.status), "\(context)\n\(result)")
            #expect(errorLines(result.stderr).count <= 1, "\(context)\n\(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B }, "\(context)")
            let after = try #require(try cursor(rig))
            let gmail = try serverHistoryID(fake)
            #expect(after >= before && after <= gmail, "\(context): cursor \(before) → \(after), Gmail at \(gmail)")
            try fake.admin("DELETE", "faults")
        }
        Report.note("seed \(seed): \(cases) generated answers, exit statuses \(statuses.sorted { $0.key < $1.key })")
        // Gmail answering as documented again: one catch-up converges, and every mark is there.
        try fake.admin("POST", "expire-history", [:])
        let healed = try rig.run("hd-sync", catchUp, timeout: 300)
        #expect(healed.status == 0, "seed \(seed): \(healed)")
        #expect(try rig.queue().isEmpty, "seed \(seed)")
        let server = try fake.messages()
        for (id, star) in intended {
            #expect(server[id]?.labels.contains("STARRED") == star, "seed \(seed): \(id) should be \(star ? "" : "un")starred")
        }
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
        try rig.expectNoSecretsLeaked()
    }
}
