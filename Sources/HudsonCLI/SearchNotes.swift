/*!
 The notes a search owes its reader on standard error, one line each: words looked up in
 messages whose body is not stored, answers that rest on a guess about attachments, and
 what storing every body costs (said where a whole mailbox is connected or caught up).
 */
import HudsonOutput
import HudsonQuery
import HudsonStore

public enum SearchNotes {
    /// The note a search that looks words up in message text owes its reader when some
    /// messages have no stored body (issue 19): how many, and the command that stores them.
    /// Nil when the query has no word or phrase, or every body is stored.
    public static func bodyNote(_ query: Query, store: Store, accountID: Int64?) throws -> String? {
        guard query.searchesText else { return nil }
        let missing = try store.messagesWithoutBody(accountID: accountID)
        guard missing > 0 else { return nil }
        return "\(missing) message(s) have no stored body; their text was searched in the subject, addresses "
            + "and Gmail's snippet only (hd-sync --catch-up --prefetch-days 0 stores every body)"
    }

    /// What storing every body costs, said where a whole mailbox is connected or caught
    /// up (issue 38 §4): Gmail charges `messages.get` 5 units (gmail-api.md §3), so the
    /// default 6,000 units a minute fetch at most 1,200 bodies a minute; a stored body
    /// with its share of the full-text index takes about 8 KB (docs/performance.md).
    public static func bodyCost(messages: Int?) -> String {
        var text = "hd-sync --catch-up --prefetch-days 0 stores every body: 5 units of Gmail's quota"
            + " and about 8 KB of disk a message, at most 1,200 messages a minute at Gmail's default quota"
        if let messages, messages > 0 {
            let minutes = (messages + 1_199) / 1_200
            let time = minutes < 120 ? "\(minutes) minute(s)" : "\(minutes / 60) hour(s)"
            let megabytes = max(1, messages * 8 / 1_000)
            text += " (here at least \(time) and about \(megabytes) MB)"
        }
        return text
    }

    /// The note a search that reads attachments (`has:attachment`, `filename:`) owes its
    /// reader when some answers rest on a guess (issue 37 §4): how many of its matches, how
    /// many other messages may match, and how to decide them. Nil when none does.
    public static func attachmentNote(_ query: Query, store: Store, options: SearchOptions) throws -> String? {
        guard let guesses = try store.attachmentGuesses(query, options: options) else { return nil }
        var parts: [String] = []
        if guesses.guessedMatches > 0 { parts.append("\(guesses.guessedMatches) matching message(s) rest on a guess") }
        if guesses.mayAlsoMatch > 0 { parts.append("\(guesses.mayAlsoMatch) other message(s) may match") }
        return parts.joined(separator: " and ") + ": " + guesses.terms.joined(separator: " and ")
            + " cannot be decided without their attachments, which are not stored (hd-sync --catch-up --prefetch-days 0 stores every body)"
    }

    /// Every note the search owes (words in body-less mail, guessed attachments), one line each.
    public static func notes(_ query: Query, store: Store, options: SearchOptions) throws -> [String] {
        [try bodyNote(query, store: store, accountID: options.accountID), try attachmentNote(query, store: store, options: options)]
            .compactMap { $0 }
    }
}
