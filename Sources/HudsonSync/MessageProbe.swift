/*!
 "Is this message in Gmail?" for a request that may have stored it and whose answer was
 lost (a timeout, a 5xx, a kill): the probe of the outbox (docs/architecture.md, "The outbox
 and the probe protocol") as one function any non-idempotent writer can use — gmail-api.md
 §4: "Don't blindly retry non-idempotent calls ... after a timeout or 5xx ... search
 `rfc822msgid:` first". `hd-import` uses it for messages.import (§2.13: "Each import appears
 in history as `messagesAdded`"); OutboxSender keeps its own copy of the same two steps
 for sends and drafts.

 1. Search: `rfc822msgid:<id> in:anywhere` (Spam and Trash included: the user may have
    moved it since), when the Message-ID is one the search can take
    (RawMessage.isSearchableMessageID).
 2. History: Gmail's index can lag its store, so the log of what it stored is read too:
    every `messagesAdded` since a history id taken before the request went out, each added
    message read (`format=metadata`) for its Message-ID header, compared as written. The
    messages added are read only when there are at most `historyCandidateLimit`; a history
    too old to read (404), longer than `historyPageLimit` pages, or with more added leaves
    the search to decide alone (and a Message-ID the search cannot take undecided).

 Ids in `excluding` are never the answer (messages already accounted for, such as those the
 caller recorded as its own). An error from Gmail is thrown: without an answer, "not found"
 is not known, and the caller must not send again.
 */
import Foundation
import HudsonGmail
import HudsonMail

public enum MessageProbe {
    /// At most this many messages added since the start are read for their Message-ID.
    public static let historyCandidateLimit = 100
    /// At most this many history pages are read; past them, the search decides alone.
    public static let historyPageLimit = 50

    /// What the probe learnt.
    public enum Answer: Equatable, Sendable {
        /// Gmail has it: the message's id and thread.
        case found(id: String, threadID: String?)
        /// Looked for (by the search, or by history since before the request) and not found.
        case notFound
        /// Could not be looked for: a Message-ID the search cannot take, and no history to
        /// read (none recorded, expired, or too long).
        case cannotLook
    }

    /// Looks for the message Gmail stored with this Message-ID (angle brackets included, as
    /// written in the header). `since`: a history id taken before the request; nil skips
    /// history. `labelID` narrows history to messages carrying it (SENT for a send).
    public static func find(messageID: String, since: Int64?, labelID: String? = nil, excluding: Set<String> = [],
                            api: any GmailAPI) async throws -> Answer {
        let wanted = messageID.trimmingCharacters(in: .whitespaces)
        let searchable = RawMessage.isSearchableMessageID(wanted)
        if searchable {
            let page = try await api.listMessages(pageToken: nil, maxResults: 10, query: "rfc822msgid:\(wanted) in:anywhere")
            if let found = page.messages.first(where: { !$0.id.isEmpty && !excluding.contains($0.id) }) {
                return .found(id: found.id, threadID: found.threadId)
            }
        }
        guard let since else { return searchable ? .notFound : .cannotLook }
        switch try await findInHistory(messageID: wanted, since: since, labelID: labelID, excluding: excluding, api: api) {
        case .found(let found)?: return .found(id: found.id, threadID: found.threadID)
        case .notFound?: return .notFound
        case nil: return searchable ? .notFound : .cannotLook
        }
    }

    enum HistoryAnswer {
        case found((id: String, threadID: String?))
        case notFound
    }

    /// Step 2 alone (see the file comment); nil when history could not be read to its end.
    static func findInHistory(messageID: String, since: Int64, labelID: String?, excluding: Set<String>,
                              api: any GmailAPI) async throws -> HistoryAnswer? {
        var added: [String] = []
        var seen = Set<String>()
        var token: String?
        var seenTokens = Set<String>()
        var pages = 0
        repeat {
            pages += 1
            if pages > historyPageLimit { return nil }
            let page: HistoryPage
            do {
                page = try await api.listHistory(startHistoryID: String(since), pageToken: token, labelID: labelID)
            } catch GmailError.notFound {
                return nil   // history from there has expired (§2.9)
            }
            for record in page.history {
                for change in record.messagesAdded {
                    if let id = change.message?.id, !id.isEmpty, !excluding.contains(id), seen.insert(id).inserted {
                        added.append(id)
                    }
                }
            }
            token = page.nextPageToken
            if let next = token, !seenTokens.insert(next).inserted { return nil }
        } while token != nil
        // More added than are read: the one looked for may be among those left out.
        if added.count > historyCandidateLimit { return nil }
        guard !added.isEmpty else { return .notFound }
        let results = await api.getMessages(ids: added, format: "metadata")
        for id in added {
            switch results[id] {
            case .success(let message)?:
                if message.header(named: "Message-ID")?.trimmingCharacters(in: .whitespaces) == messageID {
                    return .found((message.id.isEmpty ? id : message.id, message.threadId))
                }
            case .failure(let error)? where error.saysMessageGone:
                continue   // gone since (or never to be served): not the message looked for
            case .failure(let error)?:
                throw error
            case nil:
                throw GmailError.invalidResponse("Gmail's batch answer left out a message the probe asked for")
            }
        }
        return .notFound
    }
}
