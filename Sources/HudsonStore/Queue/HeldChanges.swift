/*!
 Held changes (issue 40): a label change or an outbox entry the user has to approve before
 it goes to Gmail. A held queue row is an ordinary pending row with `held = 1`: the local
 view (effective labels, the rollup, every read) shows it at once, the collision table
 treats it as any pending row (an opposite change by the user cancels it when it never
 left, or flips it forward and releases it when it may be at Gmail), and the flusher
 passes it over, so it never blocks a sync. Approving clears `held`: the row is then
 pending like any other and goes by the same path. Discarding is `undo`: the inverse of a
 row that never left cancels it. An agent's message held for approval is saved as a
 Gmail draft at once, so every Gmail client shows it and may edit or delete it, and waits
 as a schedule with no time (`Store.enqueueHeldSend`, ScheduledSends.swift); approving it
 sends the draft as it is then with `drafts.send`, through the outbox's never-twice path.
 (A held outbox entry of an older Hudson, a 'queued' entry the sender does not claim, is
 approved by handing it to the same sender.)

 Who asked is recorded with the action (`actions.origin`) and the outbox entry: "agent"
 for hd-mcp, nothing for the user at a command.
 */
import SQLite

enum HeldChanges {
    /// The SQL condition "a change to message `messageColumn` is held for the user's
    /// approval": a seek of the queue by its (message_id, label) key.
    static func isHeld(messageColumn: String) -> String {
        "EXISTS (SELECT 1 FROM mutation_queue AS hq WHERE hq.message_id = \(messageColumn) AND hq.held = 1)"
    }
}

/// Who made an action or queued a message, when it was not the user at a command.
public enum ActionOrigin: String, Sendable, Equatable {
    case agent
}

/// How far an agent (hd-mcp) may act on an account: the account's ceiling
/// (`hd-auth set EMAIL agent-policy …`), and the server's own setting within it. Ordered
/// from the least to the most an agent may do.
public enum AgentPolicy: String, Sendable, CaseIterable, Comparable {
    /// Reads only.
    case readOnly = "read-only"
    /// Reads, and drafts (created or updated); no send, no label change.
    case drafts
    /// Every change and every send held for the user's approval.
    case hold
    /// Changes go out as the commands' do (still undoable); a send to a recipient the
    /// account never wrote to is still held.
    case direct

    public static let names = allCases.map(\.rawValue)

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: AgentPolicy, rhs: AgentPolicy) -> Bool { lhs.rank < rhs.rank }
}

/// A held label change, as `hd-pending --held` lists it.
public struct HeldApproval: Equatable, Sendable {
    /// The queue rows released: now pending, sent by the next push.
    public var changes = 0
    /// The accounts whose queue or outbox gained work to send.
    public var accountIDs: Set<Int64> = []
    /// The outbox entries released.
    public var outbox: [Int64] = []
    /// The actions named that had nothing held (already approved, discarded, or unknown).
    public var notHeldActions: [Int64] = []
    /// The outbox entries named that were not held and queued.
    public var notHeldOutbox: [Int64] = []
}

extension Store {
    /// The live queue rows held for approval, oldest first; one account's when given.
    public func heldMutations(accountID: Int64? = nil) throws -> [QueuedMutation] {
        try db.map("""
            SELECT \(Self.queueColumns) \(Self.queueJoins)
             WHERE (?1 IS NULL OR q.account_id = ?1) AND q.held = 1
             ORDER BY q.id
            """, accountID, transform: Self.queuedMutation(from:))
    }

    /// The outbox entries held for approval (still queued), oldest first.
    public func heldOutbox(accountID: Int64? = nil) throws -> [OutboxEntry] {
        try pendingOutbox(accountID: accountID).filter { $0.held && $0.state == .queued }
    }

    /// Releases held changes and sends to the normal queue, in one transaction: those of
    /// `actions` and the outbox entries `outbox`, or, with both nil, every held one (in
    /// `accountID`'s account when given). Nothing is sent here; the caller pushes.
    public func approveHeld(actions: [Int64]? = nil, outbox: [Int64]? = nil, accountID: Int64? = nil) throws -> HeldApproval {
        let everything = actions == nil && outbox == nil
        return try db.write {
            var approval = HeldApproval()
            let now = self.now
            if everything || actions != nil {
                let named = SQLiteRows(columns: 1)
                for id in actions ?? [] { named.append(.integer(id)) }
                var released: [Int64: Int] = [:]
                try db.forEach("""
                    UPDATE mutation_queue SET held = 0, updated_at = ?1
                     WHERE held = 1 AND (?2 IS NULL OR account_id = ?2)
                       AND (?3 OR action_id IN (SELECT c0 FROM hudson_rows(?4)))
                    RETURNING account_id, action_id
                    """, now, accountID, everything, named) { row in
                    approval.changes += 1
                    approval.accountIDs.insert(row.int64(0))
                    if let action = row.optionalInt64(1) { released[action, default: 0] += 1 }
                }
                approval.notHeldActions = (actions ?? []).filter { released[$0] == nil }
            }
            if everything || outbox != nil {
                var found = Set<Int64>()
                let named = SQLiteRows(columns: 1)
                for id in outbox ?? [] { named.append(.integer(id)) }
                try db.forEach("""
                    UPDATE outbox SET held = 0, updated_at = ?1
                     WHERE held = 1 AND state = 'queued' AND (?2 IS NULL OR account_id = ?2)
                       AND (?3 OR id IN (SELECT c0 FROM hudson_rows(?4)))
                    RETURNING id, account_id
                    """, now, accountID, everything, named) { row in
                    found.insert(row.int64(0))
                    approval.outbox.append(row.int64(0))
                    approval.accountIDs.insert(row.int64(1))
                }
                // Messages held as Gmail drafts (ScheduledSends.swift, `enqueueHeldSend`).
                for (entry, account) in try approveHeldSends(drafts: everything ? nil : outbox, accountID: accountID) {
                    found.insert(entry)
                    approval.outbox.append(entry)
                    approval.accountIDs.insert(account)
                }
                approval.outbox.sort()
                approval.notHeldOutbox = (outbox ?? []).filter { !found.contains($0) }
            }
            return approval
        }
    }

    /// The account's ceiling for agents (`hd-auth set EMAIL agent-policy …`; default hold).
    public func agentPolicy(accountID: Int64) throws -> AgentPolicy {
        let text = try db.first("SELECT agent_policy FROM accounts WHERE id = ?", accountID) { $0.string(0) }
        return text.flatMap(AgentPolicy.init(rawValue:)) ?? .hold
    }

    public func setAgentPolicy(_ policy: AgentPolicy, accountID: Int64) throws {
        try db.write { try db.execute("UPDATE accounts SET agent_policy = ? WHERE id = ?", policy.rawValue, accountID) }
    }

    /// Whether the account ever wrote to `address` (case-insensitively): a message it sent
    /// (labelled SENT) has it among its To, Cc or Bcc addresses, or an outbox entry sent to
    /// it. What keeps an agent's first message to a stranger held under every policy.
    public func hasWrittenTo(_ address: String, accountID: Int64) throws -> Bool {
        let needle = address.lowercased()
        guard !needle.isEmpty else { return false }
        if try db.scalarInt("""
            SELECT 1 FROM message_addresses AS x
              JOIN messages AS m ON m.id = x.message_id AND m.account_id = ?2
              JOIN message_labels AS ml ON ml.message_id = m.id AND ml.label = 'SENT'
             WHERE x.address = ?1 AND x.role IN ('to', 'cc', 'bcc')
             LIMIT 1
            """, needle, accountID) != nil { return true }
        return try db.scalarInt("""
            SELECT 1 FROM outbox
             WHERE account_id = ?2 AND state = 'sent' AND kind <> 'draft'
               AND instr(',' || replace(lower(recipients), ' ', '') || ',', ',' || ?1 || ',') > 0
             LIMIT 1
            """, needle, accountID) != nil
    }
}
