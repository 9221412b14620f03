// Test tooling, not a Hudson command: the store tests start this as separate
// processes to exercise what only separate processes can (two migrators racing for a
// new file, a writer holding the lock while another process waits).
//
//   hudson-store-helper open PATH            create or open PATH, migrate, print "ok"
//   hudson-store-helper hold-write PATH MS   take the write lock, print "locked", hold MS ms
//   hudson-store-helper fixture PATH         fill a new store with a little of everything, for
//                                            the schema fixtures (Tests/HudsonStoreTests/Fixtures)
import Glibc
import HudsonStore
import SQLite

/// Writes a line straight to a file descriptor: unbuffered, so the parent sees each
/// line the moment it is written.
func say(_ line: String, to fd: Int32 = 1) {
    let text = line + "\n"
    _ = text.withCString { write(fd, $0, strlen($0)) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    say("usage: hudson-store-helper open|hold-write PATH [MS]", to: 2)
    exit(64)
}
do {
    let store = try Store.open(path: arguments[2], access: .create)
    switch arguments[1] {
    case "open":
        say("ok")
    case "hold-write":
        let milliseconds = Int(arguments.count > 3 ? arguments[3] : "1000") ?? 1000
        try store.db.write {
            try store.db.execute("UPDATE accounts SET last_sync_at = last_sync_at")
            say("locked")
            usleep(UInt32(milliseconds) * 1000)
        }
        say("released")
    case "fixture":
        try fillFixture(store)
        say("ok")
    default:
        say("hudson-store-helper: \(arguments[1]): unknown command", to: 2)
        exit(64)
    }
} catch {
    say("hudson-store-helper: \(error)", to: 2)
    exit(1)
}

/// A little of everything the schema holds: two accounts, labels, threads, bodies,
/// attachments, a tombstone, queue rows in both states, an undone action, (from
/// 002_outbox on) outbox entries in every state, (from 004_relist_unconfirmed on) a
/// re-list in progress, and (from 008_faults_recorded on) a queue row whose request went
/// out and failed, a change Gmail refused, and a parked message and body.
func fillFixture(_ store: Store) throws {
    let ann = try store.addAccount(email: "ann@example.com", consentedAt: 1_767_225_600, lookbackDays: 90)
    try store.addAccount(email: "bob@example.org", consentedAt: 1_767_225_600, lookbackDays: 0)
    try store.replaceLabels(accountID: ann.id, with: [
        LabelInfo(id: "INBOX", name: "INBOX", kind: .system),
        LabelInfo(id: "Label_1", name: "Work", kind: .user, textColor: "#000000", backgroundColor: "#16a766"),
    ])
    try store.recordInitialCursor(accountID: ann.id, historyID: 100_000)
    try store.recordBackfillPage(accountID: ann.id, nextPageToken: "page-2", listed: 3, estimate: 40)
    func snapshot(_ id: String, _ thread: String, _ minute: Int64, _ labels: [String]) -> MessageSnapshot {
        MessageSnapshot(
            id: id, threadID: thread, historyID: 100_000 + minute, internalDate: 1_767_225_600_000 + minute * 60_000,
            labelIDs: labels, snippet: "Snippet of \(id) &amp; more", sizeEstimate: 2048,
            headers: MessageHeaders(
                subject: "Re: Plans for Zürich", from: "\"Doe, Jane\" <jane@example.net>", to: "Ann <ann@example.com>",
                cc: "team@example.com", date: "Thu, 01 Jan 2026 00:0\(minute):00 +0000", messageID: "<\(id)@example.net>",
                inReplyTo: minute > 1 ? "<a1@example.net>" : nil, references: minute > 1 ? "<a1@example.net>" : nil,
                listID: "<team.example.com>", contentType: "multipart/mixed; boundary=x"))
    }
    _ = try store.applySnapshots([
        snapshot("a1", "ta", 1, ["INBOX", "UNREAD", "CATEGORY_PERSONAL"]),
        snapshot("a2", "ta", 2, ["INBOX", "Label_1"]),
        snapshot("b1", "tb", 3, ["SENT"]),
        snapshot("c1", "tc", 4, ["INBOX", "STARRED"]),
    ], accountID: ann.id)
    try store.saveBody(MessageBody(text: "Shall we meet in Zürich?", html: "<p>Shall we meet in Z&uuml;rich?</p>", attachments: [
        AttachmentInfo(partID: "1", filename: "plan.pdf", mimeType: "application/pdf", size: 4021, attachmentID: "ANGjdJ8w"),
    ]), gmailID: "a2", accountID: ann.id)
    _ = try store.applyHistoryChanges([.messageDeleted(messageID: "c1", historyID: 100_010)], accountID: ann.id)
    _ = try store.perform([.archive], on: [.thread("ta")])
    let claimed = try store.claimPendingMutations(accountID: ann.id, limit: 1)
    try store.markInFlight(claimed.map { ($0.id, $0.op) }, gate: 100_020)
    _ = try store.perform([.star], on: [.message("b1")])
    _ = try store.undo()
    if try store.db.scalarInt("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'") != nil {
        try fillOutbox(store, accountID: ann.id)
    }
    if try store.db.scalarInt("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sync_parked'") != nil {
        try fillFaults(store, accountID: ann.id)
    }
    if try store.db.scalarInt("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'relist_unconfirmed'") != nil {
        // History expired for ann: a re-list in progress that has listed b1 only.
        try store.resetForExpiredCursor(accountID: ann.id, freshHistoryID: 100_050)
        _ = try store.applyBackfillPage([snapshot("b1", "tb", 3, ["SENT"])], accountID: ann.id,
                                        nextPageToken: "relist-2", listed: 1, estimate: 3)
    }
}

/// The other archive row of thread ta carried by a request that failed (attempted), a
/// label Gmail refused on b1, a message Gmail would not serve and a body that failed.
func fillFaults(_ store: Store, accountID: Int64) throws {
    let pending = try store.claimPendingMutations(accountID: accountID, limit: 10)
    _ = try store.markMutationsAttempted(pending.map { ($0.id, $0.op) })
    try store.recordMutationFailure(ids: pending.map(\.id), error: "network error: lost", retryAfterMilliseconds: 0)
    _ = try store.perform([.addLabel("Work")], on: [.message("b1")])
    let refused = try store.claimPendingMutations(accountID: accountID, limit: 10).filter { $0.label == "Label_1" }
    try store.dropMutations(refused.map { ($0.id, $0.op) }, reason: "request rejected by Gmail: Invalid label: Label_1")
    try store.park([ParkingFailure(gmailID: "z9", stage: .message, error: "Gmail server error (500): retry later"),
                    ParkingFailure(gmailID: "a1", stage: .body, error: "invalid response from Gmail: not JSON")],
                   accountID: accountID)
}

/// Outbox entries queued (one held by an undo window), sending with an unknown outcome,
/// sent, failed and cancelled.
func fillOutbox(_ store: Store, accountID: Int64) throws {
    func enqueue(_ n: Int, delay: Int64 = 0) throws -> Int64 {
        let raw = Array("From: ann@example.com\r\nTo: bob@example.org\r\nSubject: Outbox \(n)\r\nMessage-ID: <out\(n)@example.com>\r\n\r\nHello \(n)\r\n".utf8)
        return try store.enqueueOutbox(NewOutboxMessage(
            accountID: accountID, raw: raw, messageID: "<out\(n)@example.com>", threadID: n == 3 ? "ta" : nil,
            recipients: ["bob@example.org"], subject: "Outbox \(n)", delayMilliseconds: delay)).id
    }
    _ = try enqueue(1, delay: 10_000)
    for n in 2...5 { _ = try enqueue(n) }
    let claims = try store.claimDueOutbox(accountID: accountID)
    for claim in claims { _ = try store.markOutboxSending(id: claim.entry.id, token: claim.token) }
    try store.recordOutboxUncertainty(id: claims[0].entry.id, token: claims[0].token, error: "network error: lost", retryAfterMilliseconds: 0)
    try store.markOutboxSent(id: claims[1].entry.id, gmailID: "sent3", threadID: "ta")
    try store.markOutboxFailed(id: claims[2].entry.id, reason: "Invalid To header")
    try store.markOutboxFailed(id: claims[3].entry.id, reason: "Invalid To header")
    try store.cancelOutbox(id: claims[3].entry.id)
}
