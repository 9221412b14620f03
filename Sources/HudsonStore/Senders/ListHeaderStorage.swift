/*!
 The list headers' columns of `messages` (migration 035): written by every snapshot in
 its writer's transaction, filled from stored sources by the migration, and counted.
 */
import SQLite

/// The functions migration 035 calls on each stored source; their answers never change.
func defineListHeaderFunctions(_ db: Connection) throws {
    func define(_ name: String, _ field: @escaping (ListHeaders) -> String?) throws {
        try db.defineTextFunction(name) { field(ListHeaders(source: Array($0.utf8))) ?? "" }
    }
    try define("hudson_list_unsubscribe_v1") { $0.unsubscribe }
    try define("hudson_list_unsubscribe_post_v1") { $0.unsubscribePost }
    try define("hudson_authentication_results_v1") { $0.authenticationResults }
    try define("hudson_dkim_signatures_v1") { $0.dkimSignatures }
}

/// How many messages' list headers are known, and how many are not (stored before
/// Hudson kept them, without a source to read them from).
public struct ListHeaderCoverage: Equatable, Sendable {
    public var known: Int
    public var unknown: Int

    public init(known: Int, unknown: Int) {
        self.known = known
        self.unknown = unknown
    }
}

extension Store {
    /// Writes a snapshot's list headers, inside the caller's write: a snapshot is a
    /// metadata or full fetch that asked for them, so afterwards they are known.
    func keepListHeaders(_ list: ListHeaders, messageKey: Int64) throws {
        try db.execute("""
            UPDATE messages SET list_unsubscribe = ?, list_unsubscribe_post = ?, authentication_results = ?,
                   dkim_signatures = ?, list_headers_known = 1
             WHERE id = ?
            """, list.unsubscribe, list.unsubscribePost, list.authenticationResults, list.dkimSignatures, messageKey)
    }

    /// Known and unknown list headers, of one account or all.
    public func listHeaderCoverage(accountID: Int64?) throws -> ListHeaderCoverage {
        try db.read {
            try db.first("""
                SELECT coalesce(sum(list_headers_known), 0), count(*) - coalesce(sum(list_headers_known), 0)
                  FROM messages WHERE ?1 IS NULL OR account_id = ?1
                """, accountID, transform: { ListHeaderCoverage(known: $0.int(0), unknown: $0.int(1)) })
                ?? ListHeaderCoverage(known: 0, unknown: 0)
        }
    }
}
