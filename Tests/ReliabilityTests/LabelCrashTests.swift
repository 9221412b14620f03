// Crash and resume for label operations (issue 21 §2): hd-sync killed after a create,
// rename or delete was marked attempted (nothing sent yet), and after Gmail answered it
// (nothing recorded yet). The next catch-up must finish each exactly once: one label at
// Gmail, never two; the changes that use it sent with Gmail's id; nothing left queued.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Crash and resume: label operations stopped at each step", .serialized)
struct LabelCrashTests {
    func userLabels(_ fake: FakeGmail) throws -> [String: String] {
        let state = try #require(try fake.admin("GET", "state") as? [String: Any])
        var byName: [String: String] = [:]
        for label in try #require(state["labels"] as? [[String: Any]]) where label["type"] as? String == "user" {
            byName[label["name"] as? String ?? ""] = label["id"] as? String
        }
        return byName
    }

    @Test("a create, a rename and a delete queued; hd-sync stopped at a step three times in a row: the next catch-up finishes each once",
          arguments: ["after-mark-attempted", "after-send"])
    func stopped(at point: String) throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 40))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let server = try fake.messages()
        let target = try #require(server.keys.sorted().first)
        let workID = try #require(try userLabels(fake)["Work"])
        let familyID = try #require(try userLabels(fake)["Family"])
        #expect(try rig.run("hd-mark", "--no-flush", "--create", "+Crash/Test", "message:\(target)").status == 0)
        #expect(try rig.run("hd-labels", "rename", "--no-flush", "Work", "Job").status == 0)
        #expect(try rig.run("hd-labels", "delete", "--no-flush", "--yes", "Family").status == 0)
        // Each run stops at the first operation that reaches the point (after-send: the
        // create, then the rename twice; after-mark-attempted: the create each time).
        for _ in 0..<3 {
            let stopped = rig.finish(try rig.start("hd-sync", ["--prefetch-days", "0"], environment: ["HUDSON_TEST_CRASH_AT": point]))
            #expect(stopped.killed, "hd-sync did not reach \(point): \(stopped)")
        }
        let resume = try rig.run("hd-sync", catchUp, timeout: 90)
        #expect(resume.status == 0, "\(resume)")
        let labels = try userLabels(fake)
        #expect(labels.keys.filter { $0 == "Crash/Test" }.count == 1, "\(labels)")
        let created = try #require(labels["Crash/Test"])
        #expect(labels["Job"] == workID && labels["Work"] == nil && labels["Family"] == nil, "\(labels)")
        let after = try fake.messages()
        #expect(after[target]?.labels.contains(created) == true)
        #expect(after.values.allSatisfy { !$0.labels.contains(familyID) })
        #expect(try rig.queue().isEmpty)
        let pending = try rig.run("hd-pending")
        #expect(pending.stdout.isEmpty, "\(pending)")
        #expect(try rig.run("hd-pending", "--rejected", "--count").stdout == "0\n")
        try rig.expectMatchesServer()
        try StoreDump.expectSound(rig.storePath)
    }
}
