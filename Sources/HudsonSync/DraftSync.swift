/*!
 The draft map's side of sync (HudsonStore/Queue/Drafts.swift). Draft messages arrive like any
 other message, through history: a draft made on another device as messageAdded, one
 edited there as its old message deleted and a new one added, one sent or deleted there as
 messageDeleted. Which draft id names which message only `drafts.list` tells (Gmail's
 Message has no draft id), so after a pass, when the stored DRAFT messages and the map
 disagree, the map is read again: a few units, and only when drafts changed.
 */
import HudsonGmail
import HudsonStore

public enum DraftSync {
    /// Reads `drafts.list` again when the map is stale (or `force`); returns whether it did.
    @discardableResult
    public static func refresh(api: any GmailDraftsAPI, database: SharedStore, email: String,
                               force: Bool = false) async throws -> Bool {
        guard let account = try database.read({ try $0.account(email: email) }) else { throw SyncError.unknownAccount(email) }
        let accountID = account.id
        guard try force || database.read({ try $0.draftsNeedRefresh(accountID: accountID) }) else { return false }
        var drafts: [(draftID: String, gmailID: String)] = []
        var token: String?
        var seen = Set<String>()
        repeat {
            let page = try await api.listDrafts(pageToken: token, query: nil)
            for draft in page.drafts {
                if let message = draft.message?.id, !message.isEmpty { drafts.append((draft.id, message)) }
            }
            token = page.nextPageToken
            if let next = token, !seen.insert(next).inserted { break }
        } while token != nil
        let found = drafts
        try database.write { try $0.replaceDrafts(accountID: accountID, with: found) }
        return true
    }
}
