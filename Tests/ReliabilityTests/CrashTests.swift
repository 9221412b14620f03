// Crash and resume (issue 10): hd-sync killed with SIGKILL at random moments of a
// backfill and of history polling, and stopped deterministically after each of its
// commits in turn (HUDSON_TEST_CRASH_AFTER_COMMIT, as notmuch's atomicity test stops
// `notmuch new` at every commit). Each interrupted store, once resumed, must equal the
// store of an uninterrupted run on the same mailbox: messages, canonical labels,
// bodies, rollup, queue, no duplicates, a sound full-text index
// (local-first-sync.md: "a crash resumes cleanly from whatever the database says").
import Foundation
import HudsonTestSupport
import Testing

/// A demo mailbox pinned in time, so two servers or two runs see the same mail.
func pinnedMailbox(count: Int, latencyMilliseconds: Int = 0) -> [String] {
    ["--demo", "--demo-count", String(count), "--demo-span-days", "365", "--now", "1767225600",
     "--latency-ms", String(latencyMilliseconds)]
}

/// Every body is prefetched, so a catch-up also exercises hydration's commits.
let catchUp = ["--catch-up", "--prefetch-days", "0"]

/// Changes "on another device" and some new and deleted mail, so the next sync polls
/// history: label changes, messageAdded (fetched as unknown ids), messageDeleted.
func changeServer(_ fake: FakeGmail, seed: Int, count: Int) throws {
    var generator = SeededGenerator(seed: UInt64(seed))
    let ids = try fake.messages().keys.sorted()
    for index in 0..<count {
        let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
        switch index % 4 {
        case 0: try fake.modify(id, add: ["STARRED"], remove: ["INBOX"])
        case 1: try fake.modify(id, add: ["UNREAD", "Label_1"])
        case 2: try fake.modify(id, remove: ["UNREAD", "STARRED"])
        default: try fake.modify(id, add: ["INBOX"], remove: ["Label_1"])
        }
    }
    for index in 0..<max(1, count / 8) {
        try fake.admin("POST", "insert", ["raw": """
            From: New Sender \(index) <new\(index)@example.org>\r
            To: demo@hudson.test\r
            Subject: Arrived during the crash test \(seed)-\(index)\r
            Message-ID: <crash-\(seed)-\(index)@example.org>\r
            \r
            Body \(index) of a message that arrived by history.\r
            """])
    }
    for id in ids.suffix(max(1, count / 10)) {
        try fake.admin("POST", "delete", ["id": id])
    }
}

/// Triage on both stores: the same marks, queued and not yet sent.
func queueMarks(_ rig: Rig, on messages: [String]) throws {
    for (index, id) in messages.enumerated() {
        let action = ["star", "unstar", "+Work", "read", "unread", "archive"][index % 6]
        let result = try rig.run("hd-mark", "--no-flush", action, "message:\(id)")
        #expect(result.status == 0, "\(result)")
    }
}

/// splitmix64: the same sequence on every machine, so a failing run can be repeated.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Copies a closed store (and its WAL, if one is left) to `path`, once the checkpoint
/// helper of the last `hd-mark` or `hd-undo` on it is done: copied while the helper
/// copies the WAL into the store and removes it, the two files would not match.
func copyStore(_ source: String, to path: String) throws {
    #expect(CheckpointHelperTests.waitUntilNoHelper(of: source), "a checkpoint helper of \(source) still runs")
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
    try FileManager.default.copyItem(atPath: source, toPath: path)
    if FileManager.default.fileExists(atPath: source + "-wal") {
        try FileManager.default.copyItem(atPath: source + "-wal", toPath: path + "-wal")
    }
}

@Suite("Crash and resume: hd-sync killed at random and at every commit", .serialized)
struct CrashTests {
    /// Starts `hd-sync --catch-up` on `rig` again and again, killing it after a random
    /// delay in `delays`, until `kills` kills have landed or a run finishes by itself;
    /// then one run to the end. Returns the number of kills that landed.
    ///
    /// A run that finishes first gets `moreWork` (when given) and the killing goes on, for
    /// four times `kills` runs at most: the delays come from a reference run timed once,
    /// and a machine whose load changes (other builds, parallel suites) runs the next one
    /// faster, or a kill lands after the work's last commit and leaves nothing to redo.
    func killRepeatedly(_ rig: Rig, kills: Int, delays: ClosedRange<Double>, generator: inout SeededGenerator,
                        moreWork: (() throws -> Void)? = nil) throws -> Int {
        var killed = 0
        var runs = 0
        while killed < kills && runs < kills * 4 {
            runs += 1
            let sync = try rig.start("hd-sync", catchUp)
            Thread.sleep(forTimeInterval: Double.random(in: delays, using: &generator))
            guard sync.isRunning else {
                let exit = rig.finish(sync)
                #expect(exit.status == 0 && !exit.killed, "\(exit)")
                guard let moreWork else { break }
                try moreWork()
                continue
            }
            let exit = rig.kill9(sync)
            #expect(exit.killed || exit.status == 0, "\(exit)")
            if exit.killed {
                killed += 1
            } else if let moreWork {
                try moreWork()
            } else {
                break
            }
        }
        let final = try rig.run("hd-sync", catchUp)
        #expect(final.status == 0, "\(final)")
        return killed
    }

    /// Runs `hd-sync --catch-up` to the end and returns how long it took.
    func timedCatchUp(_ rig: Rig) throws -> Double {
        let started = Date()
        let result = try rig.run("hd-sync", catchUp)
        #expect(result.status == 0, "\(result)")
        return Date().timeIntervalSince(started)
    }

    @Test("kill -9 at random moments of backfill, hydration and history polling: every resume ends as the uninterrupted run")
    func randomKills() throws {
        let reference = Rig()
        let fake = try reference.startFake(pinnedMailbox(count: Scale.pick(300, long: 2000), latencyMilliseconds: 2))
        let crashed = try reference.sibling()
        try reference.connect()
        try crashed.connect()
        var generator = SeededGenerator(seed: 10)
        let kills = Scale.pick(6, long: 30)

        // Backfill and hydration: each kill loses at most the page or body in progress,
        // so the delays are a small part of the whole run.
        let backfill = try timedCatchUp(reference)
        let backfillKills = try killRepeatedly(
            crashed, kills: kills, delays: 0.02...max(0.1, backfill / Double(kills)), generator: &generator)
        #expect(backfillKills >= kills / 2, "too few kills landed while hd-sync was working (\(backfillKills))")
        StoreDump.expectEqual(try StoreDump.dump(crashed.storePath), try StoreDump.dump(reference.storePath), "after backfill")

        // History polling, with triage queued on both stores. The cursor is committed
        // once per poll, so a kill anywhere in it means the next run polls it all again.
        try changeServer(fake, seed: 1, count: Scale.pick(300, long: 1200))
        try fake.faults([["path": "/history$", "delay_ms": 150, "times": -1]])  // a slow poll: 150 ms a page
        let marked = try fake.messages().keys.sorted().prefix(12).map { $0 }
        try queueMarks(reference, on: marked)
        try queueMarks(crashed, on: marked)
        let poll = try timedCatchUp(reference)
        // Each kill lands before the poll's end: the whole poll is redone after each.
        // A run that polled to the end before its kill gets new changes on the server to poll.
        var round = 1
        let pollKills = try killRepeatedly(crashed, kills: kills, delays: 0.05...max(0.1, poll * 0.6), generator: &generator) {
            round += 1
            try changeServer(fake, seed: round, count: Scale.pick(300, long: 1200))
        }
        #expect(pollKills >= kills / 2, "too few kills landed while hd-sync was polling (\(pollKills))")
        if round > 1 { _ = try timedCatchUp(reference) }  // the reference polls those changes too
        Report.note("kills: \(backfillKills) during backfill (\(backfill) s), \(pollKills) during polling (\(poll) s)")
        StoreDump.expectEqual(try StoreDump.dump(crashed.storePath), try StoreDump.dump(reference.storePath), "after history")
        try StoreDump.expectSound(crashed.storePath)
        try crashed.expectMatchesServer()
        #expect(try crashed.queue().isEmpty)
        try crashed.expectNoSecretsLeaked()
        try reference.expectNoSecretsLeaked()
    }

    /// Runs `hd-sync --catch-up` from a copy of `start`, stopped after commit N for
    /// N = 1, 2, ... until a run commits fewer than N times; each stopped store is then
    /// resumed and compared with `expected`. Returns the number of commits covered.
    func crashAtEveryCommit(_ rig: Rig, from start: String, expected: String, limit: Int) throws -> Int {
        var commit = 1
        while commit <= limit {
            let store = rig.dir.path("data/commit-\(commit).sqlite3")
            try copyStore(start, to: store)
            let crash = try rig.start("hd-sync", catchUp,
                                      environment: ["HUDSON_DB": store, "HUDSON_TEST_CRASH_AFTER_COMMIT": String(commit)])
            let stopped = rig.finish(crash)
            if !stopped.killed {
                #expect(stopped.status == 0, "\(stopped)")
                break  // fewer than `commit` commits: every one has been a crash point
            }
            let resumed = try rig.run("hd-sync", catchUp, environment: ["HUDSON_DB": store])
            #expect(resumed.status == 0, "after a crash at commit \(commit): \(resumed)")
            StoreDump.expectEqual(try StoreDump.dump(store), expected, "crash after commit \(commit)")
            if commit % 10 == 1 || Scale.long { try StoreDump.expectSound(store) }
            for suffix in ["", "-wal", "-shm"] { unlink(store + suffix) }
            commit += 1
        }
        #expect(commit <= limit, "more than \(limit) commits")
        return commit - 1
    }

    @Test("a crash after every commit of a first sync (backfill, hydration): each resume equals the uninterrupted run")
    func everyCommitOfFirstSync() throws {
        let rig = Rig()
        try rig.startFake(pinnedMailbox(count: Scale.pick(30, long: 160)))
        try rig.connect()
        let start = rig.dir.path("data/start.sqlite3")
        try copyStore(rig.storePath, to: start)
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let expected = try StoreDump.dump(rig.storePath)
        let covered = try crashAtEveryCommit(rig, from: start, expected: expected, limit: 2000)
        #expect(covered >= 10)
        Report.note("covered \(covered) commits")
        try rig.expectNoSecretsLeaked()
    }

    @Test("a crash after every commit of a sync that flushes the queue and polls history: each resume equals the uninterrupted run")
    func everyCommitOfHistoryAndFlush() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: Scale.pick(30, long: 160)))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        try queueMarks(rig, on: try fake.messages().keys.sorted().prefix(Scale.pick(6, long: 24)).map { $0 })
        try changeServer(fake, seed: 2, count: Scale.pick(16, long: 80))
        let start = rig.dir.path("data/start.sqlite3")
        try copyStore(rig.storePath, to: start)
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let expected = try StoreDump.dump(rig.storePath)
        #expect(try rig.queue().isEmpty)
        let covered = try crashAtEveryCommit(rig, from: start, expected: expected, limit: 2000)
        #expect(covered >= 5)
        try rig.expectMatchesServer()
        try rig.expectNoSecretsLeaked()
    }
}
