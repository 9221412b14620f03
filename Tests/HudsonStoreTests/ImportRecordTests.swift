// hd-import's record (Imports.swift, migration 019_imports): the send rule of a call that is
// not idempotent — sending before the request, only an answer or a refusal after it.
import HudsonStore
import SQLite
import Testing

@Suite("Imports: the record of what hd-import sent to Gmail")
struct ImportRecordTests {
    @Test("begin marks sending (attempts counted); an answer makes it imported, and an imported message is never begun again")
    func sendingThenImported() throws {
        let f = try StoreFixture()
        let id = f.account.id
        #expect(try f.store.importRecord(accountID: id, sourceKey: "<a@b>") == nil)
        #expect(try f.store.beginImport(accountID: id, sourceKey: "<a@b>", messageID: "<a@b>", origin: "x.mbox:1"))
        var record = try #require(try f.store.importRecord(accountID: id, sourceKey: "<a@b>"))
        #expect(record.state == .sending && record.attempts == 1 && record.attemptStartedAt == f.store.now && record.gmailID == nil)
        // A lost answer: the next run begins it again only after looking (the command's part); the row counts it.
        f.clock.advance(by: 7_000)
        try f.store.noteImportUncertain(accountID: id, sourceKey: "<a@b>", reason: "network error")
        #expect(try f.store.beginImport(accountID: id, sourceKey: "<a@b>", messageID: "<a@b>", origin: "x.mbox:1"))
        record = try #require(try f.store.importRecord(accountID: id, sourceKey: "<a@b>"))
        #expect(record.attempts == 2 && record.attemptStartedAt == f.store.now && record.lastError == nil)
        try f.store.markImported(accountID: id, sourceKey: "<a@b>", gmailID: "18c0")
        #expect(try f.store.importRecord(accountID: id, sourceKey: "<a@b>")?.state == .imported)
        #expect(try !f.store.beginImport(accountID: id, sourceKey: "<a@b>", messageID: "<a@b>", origin: "y.mbox:1"))
        try f.store.markImportFailed(accountID: id, sourceKey: "<a@b>", reason: "late refusal")
        #expect(try f.store.importRecord(accountID: id, sourceKey: "<a@b>")?.state == .imported)
        #expect(throws: StoreError.self) { try f.store.markImported(accountID: id, sourceKey: "<a@b>", gmailID: "") }
    }

    @Test("a refusal makes it failed with the reason, and a failed message may be sent again")
    func failedThenRetried() throws {
        let f = try StoreFixture()
        let id = f.account.id
        #expect(try f.store.beginImport(accountID: id, sourceKey: "sha256:00", messageID: nil, origin: "a.eml"))
        try f.store.markImportFailed(accountID: id, sourceKey: "sha256:00", reason: "Invalid raw message")
        let failed = try #require(try f.store.importRecord(accountID: id, sourceKey: "sha256:00"))
        #expect(failed.state == .failed && failed.lastError == "Invalid raw message" && failed.messageID == nil)
        #expect(try f.store.beginImport(accountID: id, sourceKey: "sha256:00", messageID: nil, origin: "a.eml"))
        #expect(try f.store.importRecord(accountID: id, sourceKey: "sha256:00")?.state == .sending)
    }

    @Test("the schema refuses an imported row without its Gmail id, and an unknown state")
    func checks() throws {
        let f = try StoreFixture()
        #expect(throws: SQLiteError.self) {
            try f.db.execute("INSERT INTO imports (account_id, source_key, state, origin, updated_at) VALUES (?, 'k', 'imported', 'o', 0)", f.account.id)
        }
        #expect(throws: SQLiteError.self) {
            try f.db.execute("INSERT INTO imports (account_id, source_key, state, origin, updated_at) VALUES (?, 'k', 'maybe', 'o', 0)", f.account.id)
        }
    }

    @Test("the history id of the first attempt is kept across attempts (a refusal starts afresh); imported Gmail ids are listed")
    func attemptHistory() throws {
        let f = try StoreFixture()
        let id = f.account.id
        #expect(try f.store.beginImport(accountID: id, sourceKey: "sha256:aa", messageID: "<aa@import.hudson.invalid>", origin: "a.eml",
                                        historyID: 500))
        #expect(try f.store.beginImport(accountID: id, sourceKey: "sha256:aa", messageID: "<aa@import.hudson.invalid>", origin: "a.eml",
                                        historyID: 900))
        var record = try #require(try f.store.importRecord(accountID: id, sourceKey: "sha256:aa"))
        #expect(record.attemptHistoryID == 500 && record.messageID == "<aa@import.hudson.invalid>" && record.attempts == 2)
        try f.store.markImportFailed(accountID: id, sourceKey: "sha256:aa", reason: "400")
        #expect(try f.store.beginImport(accountID: id, sourceKey: "sha256:aa", messageID: "<aa@import.hudson.invalid>", origin: "a.eml",
                                        historyID: 950))
        record = try #require(try f.store.importRecord(accountID: id, sourceKey: "sha256:aa"))
        #expect(record.attemptHistoryID == 950)
        #expect(try f.store.importedGmailIDs(accountID: id).isEmpty)
        try f.store.markImported(accountID: id, sourceKey: "sha256:aa", gmailID: "19ab")
        #expect(try f.store.importedGmailIDs(accountID: id) == ["19ab"])
        // A record an older hd-import wrote has no history id.
        #expect(try f.store.beginImport(accountID: id, sourceKey: "<old@x>", messageID: "<old@x>", origin: "b.eml"))
        #expect(try f.store.importRecord(accountID: id, sourceKey: "<old@x>")?.attemptHistoryID == nil)
    }

    @Test("holdsMessage: a Message-ID the store has")
    func holdsMessage() throws {
        let f = try StoreFixture()
        #expect(try !f.store.holdsMessage(messageID: "<nobody@example.com>", accountID: f.account.id))
    }
}
