/*!
 What a message read for `hd-import` says about its Gmail labels, and its Message-ID. The one
 place these rules live (hd-import(1) "LABELS" documents them):

 - `X-Gmail-Labels` (Google Takeout's mbox): comma-separated names, double-quoted when a name
   holds a comma, RFC 2047-encoded when not ASCII. Takeout's names of system labels map to
   Gmail's ids (`Inbox` INBOX, `Unread` UNREAD, `Starred` STARRED, `Important` IMPORTANT,
   `Sent` SENT, `Spam` SPAM, `Trash` TRASH, `Category Personal` CATEGORY_PERSONAL and the
   other four categories); `Opened` and `Archived` say only what the absence of `Unread` and
   `Inbox` already says, and `Draft` and `Chat` are not labels messages.import may set
   (Gmail's drafts are made by drafts.create); every other name is a user label. A message
   Takeout did not label `Inbox` is archived, as it was.
 - `X-Keywords` (offlineimap, and Maildirs written for notmuch and mu) the same way, when
   there is no `X-Gmail-Labels`.
 - Maildir flags, when there is no `X-Gmail-Labels`: no `S` means UNREAD, `F` STARRED, `T`
   TRASH (maildir(5)).
 - an mbox or .eml without `X-Gmail-Labels`: mutt's and mu's `Status:` (no `R` means UNREAD,
   present only on mail a reader has seen the folder of) and `X-Status:` (`F` STARRED).
 Anything else is imported read and archived, with the labels the command adds.
 */

/// The labels and the Message-ID of one message to import.
public struct ImportMetadata: Equatable, Sendable {
    /// The Message-ID, with its angle brackets, when it can be searched for with
    /// `rfc822msgid:` (RawMessage.isSearchableMessageID); nil otherwise.
    public var messageID: String?
    /// Gmail system label ids (INBOX, UNREAD, ...), in a stable order, no duplicates.
    public var systemLabels: [String]
    /// User label names, as written, no duplicates.
    public var userLabels: [String]
    /// The Message-ID field as written (trimmed), even when the search cannot take it;
    /// nil when the message has no Message-ID field, or an empty one.
    public var writtenMessageID: String?

    public init(messageID: String?, systemLabels: [String], userLabels: [String], writtenMessageID: String? = nil) {
        self.messageID = messageID
        self.systemLabels = systemLabels
        self.userLabels = userLabels
        self.writtenMessageID = writtenMessageID ?? messageID
    }
}

public enum ImportLabels {
    /// What a label name means on import: a system label id, nothing, or a user label.
    public enum Meaning: Equatable, Sendable {
        case system(String)
        case ignored
        case user(String)
    }

    /// Takeout's names of Gmail's system labels, lowercased, and Gmail's ids spelled as names.
    static let systemNames: [String: String] = [
        "inbox": "INBOX", "unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT",
        "sent": "SENT", "sent mail": "SENT", "spam": "SPAM", "trash": "TRASH",
        "category personal": "CATEGORY_PERSONAL", "category social": "CATEGORY_SOCIAL",
        "category promotions": "CATEGORY_PROMOTIONS", "category updates": "CATEGORY_UPDATES",
        "category forums": "CATEGORY_FORUMS",
        "category_personal": "CATEGORY_PERSONAL", "category_social": "CATEGORY_SOCIAL",
        "category_promotions": "CATEGORY_PROMOTIONS", "category_updates": "CATEGORY_UPDATES",
        "category_forums": "CATEGORY_FORUMS",
    ]
    /// Names that carry no label of their own on import.
    static let ignoredNames: Set<String> = ["", "opened", "archived", "draft", "drafts", "chat", "chats"]

    /// The order system labels are listed in.
    static let systemOrder = ["INBOX", "UNREAD", "STARRED", "IMPORTANT", "SENT", "SPAM", "TRASH",
                              "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
                              "CATEGORY_FORUMS"]

    /// The meaning of one label name (a Takeout name, an X-Keywords keyword, a `--label`).
    public static func meaning(of name: String) -> Meaning {
        var clean = name.trimmingWhitespace()
        // offlineimap and IMAP spell Gmail's special folders \Inbox, \Sent, \Starred.
        if clean.hasPrefix("\\") { clean.removeFirst() }
        let lower = lowercasedASCII(clean)
        if ignoredNames.contains(lower) { return .ignored }
        if let id = systemNames[lower] { return .system(id) }
        return .user(clean)
    }

    /// The names of a comma-separated list where a name may be double-quoted (with `\"` or
    /// `""` for a quote inside), as Takeout writes `X-Gmail-Labels`.
    public static func splitList(_ value: String) -> [String] {
        var names: [String] = []
        var current = ""
        var quoted = false
        var characters = Array(value)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\\", let next = characters.first {
                    current.append(next)
                    characters.removeFirst()
                } else if character == "\"" {
                    if characters.first == "\"" {
                        current.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                names.append(current.trimmingWhitespace())
                current = ""
            } else {
                current.append(character)
            }
        }
        names.append(current.trimmingWhitespace())
        return names.filter { !$0.isEmpty }
    }

    /// The labels and Message-ID of `raw` under the rules above; `maildirFlags` is nil for a
    /// message not read from a Maildir.
    public static func metadata(of raw: [UInt8], maildirFlags: String?) -> ImportMetadata {
        let headers = RFC822.parseHeaders(raw)
        var system = Set<String>()
        var user: [String] = []
        func add(_ name: String) {
            switch meaning(of: name) {
            case .system(let id): system.insert(id)
            case .ignored: break
            case .user(let label):
                if !user.contains(where: { lowercasedASCII($0) == lowercasedASCII(label) }) { user.append(label) }
            }
        }
        let takeout = headers.value(of: "X-Gmail-Labels")
        if let list = takeout ?? headers.value(of: "X-Keywords") {
            splitList(EncodedWords.decode(list.collapsingWhitespace())).forEach(add)
        }
        if takeout == nil {
            if let flags = maildirFlags {
                if !flags.contains("S") { system.insert("UNREAD") }
                if flags.contains("F") { system.insert("STARRED") }
                if flags.contains("T") { system.insert("TRASH") }
            } else {
                if let status = headers.value(of: "Status"), !status.contains("R") { system.insert("UNREAD") }
                if let status = headers.value(of: "X-Status"), status.contains("F") { system.insert("STARRED") }
            }
        }
        let field = headers.value(of: "Message-ID")?.trimmingWhitespace()
        let id = field.flatMap { RawMessage.messageIDs(in: $0).first }
        return ImportMetadata(messageID: id.flatMap { RawMessage.isSearchableMessageID($0) ? $0 : nil },
                              systemLabels: systemOrder.filter(system.contains), userLabels: user,
                              writtenMessageID: field.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The Message-ID `hd-import` adds to a message that has none (hd-import(1), "MESSAGE
    /// IDENTITY"). messages.import is not idempotent (gmail-api.md §2.13), so an import whose
    /// answer was lost must be looked for before it is sent again, and Gmail can be asked
    /// for a message only by its Message-ID (`rfc822msgid:`, or the header of a message
    /// history shows added): the outbox adds one to a message it sends for the same reason
    /// (RawMessage.prepare). Made from the digest of the message (`digestHex`), so every run
    /// adds the same one; `.invalid` (RFC 2606) is a domain no real host has, so it cannot
    /// be another message's.
    public static func addedMessageID(digestHex: String) -> String {
        "<\(digestHex)@import.hudson.invalid>"
    }

    /// `raw` with a `Message-ID: id` field first (after an mbox `From ` line, if it starts
    /// with one), ended as the message's first line is (CRLF or LF). Nothing else changes.
    public static func addingMessageID(_ id: String, to raw: [UInt8]) -> [UInt8] {
        var start = 0
        if raw.starts(with: "From ".utf8), let newline = raw.firstIndex(of: 10) { start = newline + 1 }
        let firstEnd = raw[start...].firstIndex(of: 10)
        let crlf = firstEnd.map { $0 > start && raw[$0 - 1] == 13 } ?? false
        var out = Array(raw[..<start])
        out += Array("Message-ID: \(id)".utf8) + (crlf ? [13, 10] : [10])
        out += raw[start...]
        return out
    }

    static func lowercasedASCII(_ text: String) -> String {
        String(decoding: text.utf8.map(lowerASCII), as: UTF8.self)
    }
}
