/*!
 Errors of the sync layer itself (Gmail's own are `GmailError`).
 */

public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Gmail sent a history id that is not a positive integer. A zero cursor would make
    /// incremental sync believe history starts at the beginning, so this throws
    /// (sync-engine-reference.md, ensureCursor).
    case invalidHistoryID(String?)
    /// The engine's account is not in the store.
    case unknownAccount(String)
    /// The message is not in this account's store.
    case unknownMessage(String)

    public var description: String {
        switch self {
        case .invalidHistoryID(let value):
            return "Gmail sent an invalid history id (\(value.map { "\"\($0.prefix(40))\"" } ?? "none"))"
        case .unknownAccount(let email):
            return "\(email): no such account"
        case .unknownMessage(let id):
            return "\(id): no such message"
        }
    }
}

/// Parses a Gmail uint64 history id that must also fit the store's INTEGER.
func parseHistoryID(_ text: String?) throws -> Int64 {
    guard let text, let value = UInt64(text), value > 0, value <= UInt64(Int64.max) else {
        throw SyncError.invalidHistoryID(text)
    }
    return Int64(value)
}
