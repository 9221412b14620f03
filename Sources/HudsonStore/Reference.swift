/*!
 The typed reference every command prints first and reads back (`thread:ID`,
 `message:ID`, a bare Gmail id meaning a message; CONTRACT.md "Ids and input"): used by
 triage, search, reads, the outbox and every command, so it lives on its own.
 */
import GmailIDShape

/// A typed reference, as the first field of every text record (CONTRACT.md).
public enum Reference: Hashable, Sendable, CustomStringConvertible {
    case thread(String)
    case message(String)

    /// Parses `thread:ID`, `message:ID`, or a bare Gmail id (a message). Nil when empty
    /// or when the id has characters no Gmail id has.
    public init?(parsing text: String) {
        let id: String
        if text.hasPrefix("thread:") {
            id = String(text.dropFirst("thread:".count))
            guard Self.isPlausibleID(id) else { return nil }
            self = .thread(id)
        } else {
            id = text.hasPrefix("message:") ? String(text.dropFirst("message:".count)) : text
            guard Self.isPlausibleID(id) else { return nil }
            self = .message(id)
        }
    }

    /// Whether `id` has the shape of a Gmail message or thread id: the one rule every id
    /// that may reach a request follows (GmailIDShape).
    static func isPlausibleID(_ id: String) -> Bool {
        GmailID.isWellFormed(id, as: .message)
    }

    public var id: String {
        switch self {
        case .thread(let id), .message(let id): return id
        }
    }

    public var description: String {
        switch self {
        case .thread(let id): return "thread:\(id)"
        case .message(let id): return "message:\(id)"
        }
    }
}

extension Reference {
    /// "thread" or "message", for messages about a reference.
    public var kindName: String {
        switch self {
        case .thread: return "thread"
        case .message: return "message"
        }
    }
}
