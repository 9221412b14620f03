// The send lock's one way to fail (issue 37 §5, "every way a claim can be released"): a
// `flock` belongs to the open file, so a lock file removed while hd-send is mid-upload lets
// the next hd-sync create a new file and lock it too. Taking over hd-send's claim then would
// probe (the message not there yet) and send it a second time. A holder that had to create
// the lock file leaves other senders' claims alone until they expire.
import Foundation
import HudsonTestSupport
import Testing

@Suite("The send lock: a lock file removed under a live sender never leads to a second send", .serialized)
struct SendLockTests {
    @Test("hd-send mid-upload, its lock file removed, then hd-sync: one copy at Gmail, the entry sent once")
    func lockFileRemovedMidSend() throws {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", "5"])
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let sentBefore = try fake.messages().values.count { $0.labels.contains("SENT") }
        // Gmail takes 8 s to answer the send, then stores it (the request is carried out).
        try fake.faults([["path": "/messages/send$", "mode": "delay", "delay_ms": 8_000, "times": 1]])
        let sending = try rig.start("hd-send", ["--to", "ada@example.org", "--subject", "Only once"])
        let lockPath = rig.storePath + ".send-\(rig.email).lock"
        // Wait until hd-send's request is out (the fake logs it when it arrives only after the
        // delay, so watch the lock file instead), then remove the lock file under it.
        var waited = 0.0
        while !FileManager.default.fileExists(atPath: lockPath) && waited < 30 { Thread.sleep(forTimeInterval: 0.05); waited += 0.05 }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(FileManager.default.fileExists(atPath: lockPath), "hd-send never took its lock")
        try FileManager.default.removeItem(atPath: lockPath)
        let sync = try rig.run("hd-sync", "--prefetch-days", "0")
        #expect([0, 75].contains(sync.status), "\(sync)")
        let first = rig.finish(sending)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // Whatever hd-send and hd-sync did, Gmail has the message once, and a later sync
        // (the claim long expired or settled) leaves it at once.
        #expect(try rig.run("hd-sync", "--prefetch-days", "0").status == 0)
        let sentAfter = try fake.messages().values.count { $0.labels.contains("SENT") }
        #expect(sentAfter == sentBefore + 1, "Gmail has \(sentAfter - sentBefore) copies")
        let stored = try rig.run("hd-search", "--messages", "--count", "in:sent subject:\"Only once\"")
        #expect(stored.stdout == "1\n", "\(stored)")
        try rig.expectNoSecretsLeaked()
    }
}
