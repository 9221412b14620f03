/*!
 Messages and bodies Gmail would not serve, parked so that one bad message never stalls
 an account (issue 17; local-first-sync.md: "the batch catches per-message errors so one
 bad id cannot stall the other 24"). A message whose fetch fails for a reason of its own
 — a 5xx after the client's retries, a 4xx other than 404, an answer that cannot be read,
 mapped or stored — is recorded here with its error, its attempts and when to try again,
 in the same transaction as the rest of the page or poll, so the pass goes on and the
 cursor or the listing moves past it without losing it. Sync retries what is due with
 growing back-off, across passes and processes; success, a 404 (the message is gone) or
 a deletion takes it out.

 Two stages: `message` (the store lacks the message: a history event or a listed page
 named it, and its metadata fetch failed) and `body` (the message is stored, its body
 fetch failed; hydration's work-list skips it until it is due).

 What fails for ever can be dropped (`hd-pending --parked --drop`, issue 37 §2): the entry
 stays, so `hd-pending --parked` still says what is missing, but its next attempt is
 `droppedAttempt` — never — so no query that looks for due work finds it (hydration's
 work-list included), it is not counted as parked, and it keeps no catch-up from
 completing. Nothing else changes: a dropped message that history names again is fetched
 like any other; stored, it leaves the table; failing, it is parked afresh, and told.
 */
import SQLite

public enum ParkedStage: String, Sendable, CaseIterable {
    /// The message is not in the store: its metadata fetch failed.
    case message
    /// The message is stored; its body fetch failed.
    case body
}

/// One failure to park: which message, at which stage, and why.
public struct ParkingFailure: Equatable, Sendable {
    public var gmailID: String
    public var stage: ParkedStage
    public var error: String

    public init(gmailID: String, stage: ParkedStage, error: String) {
        self.gmailID = gmailID
        self.stage = stage
        self.error = error
    }
}

/// A parked message as `hd-pending --parked` and `hd-sync` report it.
public struct ParkedMessage: Equatable, Sendable {
    public var accountID: Int64
    public var accountEmail: String
    public var gmailID: String
    public var stage: ParkedStage
    public var error: String
    public var attempts: Int
    public var firstFailedAt: Int64
    public var lastFailedAt: Int64
    public var nextAttemptAt: Int64

    /// Whether the user dropped it: sync no longer fetches it.
    public var isDropped: Bool { nextAttemptAt == Store.droppedAttempt }
}

extension Store {
    /// The next attempt of a dropped entry: never.
    public static let droppedAttempt = Int64.max

    /// The wait before the next attempt after `attempts` failures: one minute, doubling,
    /// at most six hours. A message that fails for days costs a few requests a day.
    public static func parkingBackoffMilliseconds(attempts: Int) -> Int64 {
        let minutes = min(360, 1 << min(max(attempts, 1) - 1, 9))
        return Int64(minutes) * 60_000
    }

    /// Parks `failures` (inside the caller's write, or in one of its own): a new entry
    /// starts at one attempt, a known one counts one more, and each waits its back-off.
    /// A body is parked only while its message is stored. A dropped entry that fails again
    /// (history named it) is parked again, and told again.
    public func park(_ failures: [ParkingFailure], accountID: Int64) throws {
        guard !failures.isEmpty else { return }
        try db.write {
            let now = self.now
            for failure in failures {
                if failure.stage == .body, try messageKey(gmailID: failure.gmailID, accountID: accountID) == nil { continue }
                let attempts = 1 + (try db.scalarInt("""
                    SELECT attempts FROM sync_parked WHERE account_id = ? AND stage = ? AND gmail_id = ?
                    """, accountID, failure.stage.rawValue, failure.gmailID).map { Int($0) } ?? 0)
                try db.execute("""
                    INSERT INTO sync_parked (account_id, stage, gmail_id, error, attempts, first_failed_at, last_failed_at,
                                             next_attempt_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)
                    ON CONFLICT (account_id, stage, gmail_id) DO UPDATE
                       SET error = excluded.error, attempts = excluded.attempts, last_failed_at = excluded.last_failed_at,
                           next_attempt_at = excluded.next_attempt_at,
                           reported = CASE WHEN sync_parked.next_attempt_at = ?8 THEN 0 ELSE sync_parked.reported END
                    """, arguments: [accountID, failure.stage.rawValue, failure.gmailID, failure.error, attempts, now,
                                     now + Self.parkingBackoffMilliseconds(attempts: attempts), Self.droppedAttempt])
            }
        }
    }

    /// Takes messages out of the parked set (all stages when `stage` is nil): they were
    /// stored, or they are gone. Inside the caller's write.
    func unpark(gmailID: String, accountID: Int64, stage: ParkedStage? = nil) throws {
        // One primary-key seek per stage: it runs for every snapshot stored.
        for stage in stage.map({ [$0] }) ?? ParkedStage.allCases {
            try db.execute("DELETE FROM sync_parked WHERE account_id = ? AND stage = ? AND gmail_id = ?",
                           accountID, stage.rawValue, gmailID)
        }
    }

    /// Parked messages whose next attempt is due, the oldest failures first.
    public func dueParkedMessages(accountID: Int64, stage: ParkedStage, limit: Int) throws -> [String] {
        try db.map("""
            SELECT gmail_id FROM sync_parked
             WHERE account_id = ? AND stage = ? AND next_attempt_at <= ?
             ORDER BY next_attempt_at, gmail_id LIMIT ?
            """, accountID, stage.rawValue, now, limit) { $0.string(0) }
    }

    /// Every parked message (one account's when given), by account, then oldest first;
    /// those the user dropped too when `includingDropped`.
    public func parkedMessages(accountID: Int64? = nil, includingDropped: Bool = false) throws -> [ParkedMessage] {
        try parkedMessages(accountID: accountID, unreportedOnly: false, includingDropped: includingDropped)
    }

    private func parkedMessages(accountID: Int64?, unreportedOnly: Bool, includingDropped: Bool = false) throws -> [ParkedMessage] {
        try db.map("""
            SELECT p.account_id, a.email, p.gmail_id, p.stage, p.error, p.attempts, p.first_failed_at, p.last_failed_at,
                   p.next_attempt_at
              FROM sync_parked AS p JOIN accounts AS a ON a.id = p.account_id
             WHERE (?1 IS NULL OR p.account_id = ?1) AND (?2 = 0 OR p.reported = 0) AND (?3 OR p.next_attempt_at <> ?4)
             ORDER BY p.account_id, p.first_failed_at, p.gmail_id
            """, accountID, unreportedOnly, includingDropped, Self.droppedAttempt) {
            ParkedMessage(accountID: $0.int64(0), accountEmail: $0.string(1), gmailID: $0.string(2),
                          stage: ParkedStage(rawValue: $0.string(3)) ?? .message, error: $0.string(4), attempts: $0.int(5),
                          firstFailedAt: $0.int64(6), lastFailedAt: $0.int64(7), nextAttemptAt: $0.int64(8))
        }
    }

    /// The number of parked messages (one account's when given), not counting those dropped.
    public func parkedCount(accountID: Int64? = nil) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM sync_parked WHERE (?1 IS NULL OR account_id = ?1) AND next_attempt_at <> ?2",
                             accountID, Self.droppedAttempt) ?? 0)
    }

    /// Parked messages not reported yet, which are then marked reported: each is told
    /// once (with its id and error), not on every pass.
    public func takeUnreportedParked(accountID: Int64) throws -> [ParkedMessage] {
        try db.write {
            let fresh = try parkedMessages(accountID: accountID, unreportedOnly: true)
            if !fresh.isEmpty {
                try db.execute("UPDATE sync_parked SET reported = 1 WHERE account_id = ? AND reported = 0", accountID)
            }
            return fresh
        }
    }

    /// Makes every parked message of the account due now (`hd-sync --retry-parked`),
    /// after an outage the user knows is over; not those the user dropped. Returns how many.
    @discardableResult
    public func makeParkedDue(accountID: Int64) throws -> Int {
        try db.write {
            try db.execute("""
                UPDATE sync_parked SET next_attempt_at = ? WHERE account_id = ? AND next_attempt_at > ? AND next_attempt_at <> ?
                """, now, accountID, now, Self.droppedAttempt)
            return db.changes
        }
    }

    /// Drops parked messages (`hd-pending --parked --drop`): sync stops fetching them,
    /// and they no longer keep the account from being caught up (see the file's comment).
    /// Both stages of each id; one account's when given. Returns the entries dropped, as
    /// they are now; an id with no entry returns none (already dropped ones are returned
    /// again, unchanged).
    public func dropParked(gmailIDs: [String], accountID: Int64? = nil) throws -> [ParkedMessage] {
        try db.write {
            for id in gmailIDs {
                try db.execute("""
                    UPDATE sync_parked SET next_attempt_at = ?1, reported = 1
                     WHERE gmail_id = ?2 AND (?3 IS NULL OR account_id = ?3)
                    """, Self.droppedAttempt, id, accountID)
            }
            let wanted = Set(gmailIDs)
            return try parkedMessages(accountID: accountID, unreportedOnly: false, includingDropped: true)
                .filter { wanted.contains($0.gmailID) }
        }
    }
}
