/*!
 Reads of the address book (migration 036): `hd-address`'s matches, ranked by mail the
 account sent to an address, then mail received from it, then recency; and `hd-send`'s
 wrong-recipient check (an address never written to, one edit away from one that was).
 */
import SQLite

public struct AddressEntry: Equatable, Sendable {
    public var address: String
    public var name: String?
    /// Messages the account sent to it.
    public var sent: Int
    /// Messages received from it.
    public var received: Int
    /// Epoch ms of the newest message it is on.
    public var lastAt: Int64
}

/// A recipient never written to that is one edit from an address that was.
public struct NearMiss: Equatable, Sendable {
    public var typed: String
    public var known: String

    public init(typed: String, known: String) {
        self.typed = typed
        self.known = known
    }
}

extension Store {
    /// Addresses whose address, or a word of whose name, starts with `prefix`
    /// (case-insensitively), best first, at most `limit`. Every account's when `accountID` is nil.
    /// One scan of the address book (a row per address, not per message); the name is
    /// that of the account whose mail named the address last (SQLite takes a bare
    /// column from the row of the one max() aggregate).
    public func addresses(prefix: String, accountID: Int64?, limit: Int) throws -> [AddressEntry] {
        let escaped = Self.likeEscaped(prefix)
        return try db.read {
            try db.map("""
                SELECT address, name, sum(sent), sum(received), max(last_at)
                  FROM address_book AS b
                 WHERE (?1 IS NULL OR account_id = ?1)
                   AND (address LIKE ?2 ESCAPE '\\' OR name LIKE ?2 ESCAPE '\\' OR name LIKE ?3 ESCAPE '\\')
                 GROUP BY address
                 ORDER BY 3 DESC, 4 DESC, 5 DESC, address
                 LIMIT ?4
                """, arguments: [accountID, escaped + "%", "% " + escaped + "%", Int64(limit)]) {
                AddressEntry(address: $0.string(0), name: $0.optionalString(1), sent: $0.int(2), received: $0.int(3),
                             lastAt: $0.int64(4))
            }
        }
    }

    /// For each recipient the account has never written to, the addresses it has written
    /// to that are one edit away (a letter changed, added, removed, or two swapped).
    public func nearMisses(_ recipients: [String], accountID: Int64?) throws -> [NearMiss] {
        try db.read {
            let written = try db.map(
                "SELECT DISTINCT lower(address) FROM address_book WHERE sent > 0 AND (?1 IS NULL OR account_id = ?1)",
                accountID) { $0.string(0) }
            let known = Set(written)
            var result: [NearMiss] = []
            for typed in recipients {
                let lowered = typed.lowercased()
                guard !known.contains(lowered) else { continue }
                for candidate in written where EditDistance.isOneEdit(Array(lowered.utf8), Array(candidate.utf8)) {
                    result.append(NearMiss(typed: typed, known: candidate))
                }
            }
            return result
        }
    }

    /// `text` with LIKE's wildcards and the escape character escaped.
    static func likeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}

/// One edit (Damerau–Levenshtein distance exactly 1, on bytes): `alise` and `alice`.
enum EditDistance {
    static func isOneEdit(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        if a == b { return false }
        if a.count == b.count {
            let differing = a.indices.filter { a[$0] != b[$0] }
            if differing.count == 1 { return true }
            return differing.count == 2 && differing[1] == differing[0] + 1
                && a[differing[0]] == b[differing[1]] && a[differing[1]] == b[differing[0]]
        }
        let (short, long) = a.count < b.count ? (a, b) : (b, a)
        guard long.count == short.count + 1 else { return false }
        var i = 0
        while i < short.count && short[i] == long[i] { i += 1 }
        return short[i...] == long[(i + 1)...]
    }
}
