// The send lock's one way to fail (issue 37 §5, "every way a claim can be released"): a
// `flock` belongs to the open file, so a lock file removed while hd-send is mid-upload lets
// the next hd-sync create a new file and lock it too, and the one after that find the new
// file as if it had always been there. Taking over hd-send's claim then would probe (the
// message not there yet) and send it a second time. Only claims made since the lock file
// held came to be are taken over at once (SendLock.claimsTakeableSince).
import Foundation
import HudsonTestSupport
import Testing

@Suite("The send lock: a lock file removed under a live sender never leads to a second send", .serialized)
struct SendLockTests {
    @Test("hd-send mid-upload, its lock file removed, then two hd-sync runs: one copy at Gmail")
    func lockFileRemovedMidSend() throws {
        let rig = Rig()
        let fake = try rig.startFake(["--demo", "--demo-count", "5"])
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let sentBefore = try fake.messages().values.count { $0.labels.contains("SENT") }
        // Gmail takes 12 s to answer the send, then stores it (the request is carried out).
        try fake.faults([["path": "/messages/send$", "mode": "delay", "delay_ms": 12_000, "times": 1]])
        let sending = try rig.start("hd-send", ["--to", "ada@example.org", "--subject", "Only once"])
        // Mid-upload: the entry is marked as possibly at Gmail (`sending`), its request out.
        var waited = 0.0
        while (try? rig.scalar("SELECT count(*) FROM outbox WHERE state = 'sending'")) != 1 && waited < 30 {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 0.05
        }
        #expect(try rig.scalar("SELECT count(*) FROM outbox WHERE state = 'sending'") == 1, "hd-send never got its request out")
        let lockPath = rig.storePath + ".send-\(rig.email).lock"
        try FileManager.default.removeItem(atPath: lockPath)
        // The first hd-sync makes a new lock file; the second finds that one.
        for run in 1...2 {
            let sync = try rig.run("hd-sync", "--prefetch-days", "0")
            #expect([0, 75].contains(sync.status), "run \(run): \(sync)")
        }
        let first = rig.finish(sending)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        // Whatever hd-send and hd-sync did, Gmail has the message once, and a later sync
        // leaves it at once.
        #expect(try rig.run("hd-sync", "--prefetch-days", "0").status == 0)
        let sentAfter = try fake.messages().values.count { $0.labels.contains("SENT") }
        #expect(sentAfter == sentBefore + 1, "Gmail has \(sentAfter - sentBefore) copies")
        let stored = try rig.run("hd-search", "--messages", "--count", "in:sent subject:\"Only once\"")
        #expect(stored.stdout == "1\n", "\(stored)")
        try rig.expectNoSecretsLeaked()
    }
}
