/*!
 Gmail's own answer to `has:attachment` for messages whose body is not stored (issue 37
 §4). Backfill fetches messages at format=metadata, which carries the top-level MIME type
 but no parts, so the store can only guess an attachment from `multipart/mixed`: wrong for
 a digest or a mixed message of text parts, and for a lone PDF. Asking Gmail costs one
 `messages.list` (5 units, 500 ids a page, gmail-api.md §2.2) per 500 messages, where
 fetching each body costs 5 units a message.

 A chunk of guessed messages (newest first) is one date range: Gmail lists the ids it calls
 `has:attachment in:anywhere` in that range widened by a day on each side (`after:` and
 `before:` in epoch seconds, §6; the day absorbs any difference between Gmail's idea of a
 message's date and its `internalDate`). A listed id has an attachment, whatever its date;
 a message of the chunk that is not listed has none, since its date lies inside the range.
 A listing that does not end within `pageLimit` pages (or loops) decides only what it
 listed. Ids are only matched against the store, never put in a path or a URL.

 The sync engine calls `decideGuessed` once a pass, after backfill and hydration; it never
 fails the pass for a Gmail error (the answers wait for the next pass, and search says how
 many of its matches rest on a guess meanwhile).
 */
import HudsonGmail
import HudsonStore

/// What Gmail said about some messages' attachments.
public struct AttachmentAnswers: Equatable, Sendable {
    /// Ids Gmail listed for `has:attachment`.
    public var with: Set<String> = []
    /// Ids asked about and not listed: Gmail says they have no attachment.
    public var without: Set<String> = []

    public init(with: Set<String> = [], without: Set<String> = []) {
        self.with = with
        self.without = without
    }
}

public enum AttachmentCensus {
    /// Messages asked about in one date range: one list page when a fifth of them has attachments.
    public static let chunkSize = 500
    /// Seconds added on each side of a chunk's dates.
    static let margin: Int64 = 86_400
    /// List pages read for one chunk before giving up on deciding its unlisted messages.
    static let pageLimit = 4

    /// Asks Gmail which messages in the date range of `messages` it calls `has:attachment`.
    /// Throws what the list call throws.
    public static func ask(_ api: any GmailAPI, about messages: [(gmailID: String, internalDate: Int64)]) async throws -> AttachmentAnswers {
        guard let oldest = messages.map(\.internalDate).min(), let newest = messages.map(\.internalDate).max() else {
            return AttachmentAnswers()
        }
        let after = oldest / 1000 - margin
        let (before, overflow) = (newest / 1000).addingReportingOverflow(margin + 1)
        var terms = ["has:attachment", "in:anywhere"]
        if after > 0 { terms.append("after:\(after)") }  // no lower bound below the epoch
        if !overflow && before > 0 { terms.append("before:\(before)") }
        let query = terms.joined(separator: " ")
        var listed = Set<String>()
        var token: String?
        var seenTokens = Set<String>()
        var complete = false
        for _ in 0..<pageLimit {
            let page = try await api.listMessages(pageToken: token, maxResults: chunkSize, query: query)
            for message in page.messages where !message.id.isEmpty { listed.insert(message.id) }
            guard let next = page.nextPageToken, !next.isEmpty else { complete = true; break }
            guard seenTokens.insert(next).inserted else { break }  // a looping server: decide nothing more
            token = next
        }
        let asked = Set(messages.map(\.gmailID))
        return AttachmentAnswers(with: listed, without: complete ? asked.subtracting(listed) : [])
    }

    /// Decides the account's guessed messages, newest first, at most `maxChunks` list
    /// walks; returns how many were decided. A chunk whose listing did not end (a range
    /// dense with attachments) is asked again in halves within the call, so each call
    /// decides what it listed and narrows towards what it could not. Store errors and
    /// cancellation are thrown; a Gmail error ends the step quietly (what was decided stays,
    /// and search's note says what is still a guess), since nothing here is lost by waiting.
    public static func decideGuessed(database: SharedStore, api: any GmailAPI, accountID: Int64,
                                     maxChunks: Int = 10) async throws -> Int {
        var decided = 0
        var settled = Set<String>()
        var size = chunkSize
        for _ in 0..<maxChunks {
            let chunk = try database.read { try $0.messagesWithGuessedAttachment(accountID: accountID, limit: size + settled.count) }
                .filter { !settled.contains($0.gmailID) }.prefix(size)
            guard !chunk.isEmpty else { break }
            let answers: AttachmentAnswers
            do {
                answers = try await ask(api, about: Array(chunk))
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                break
            }
            decided += try database.write { try $0.recordAttachmentAnswers(with: answers.with, without: answers.without, accountID: accountID) }
            let undecided = chunk.filter { !answers.with.contains($0.gmailID) && !answers.without.contains($0.gmailID) }
            if undecided.isEmpty || size == 1 {
                settled.formUnion(chunk.map(\.gmailID))
            } else {
                // Listed ones are decided; the rest are asked again over a narrower range.
                settled.formUnion(answers.with)
                size = max(1, size / 2)
            }
        }
        return decided
    }
}
