/*!
 Migration 030_held_changes (issue 40): held changes and who made them
 (Queue/HeldChanges.swift). A held queue row or outbox entry is part of the local view at
 once but is never sent until the user approves it (`held` back to 0); the state machines
 are unchanged, so every sender only has to pass held rows over. `origin` records who
 asked ('agent': hd-mcp; NULL: the user at a command). `agent_policy` is the account's
 ceiling for hd-mcp.
 */
extension Schema {
    static let heldChanges = """
    ALTER TABLE mutation_queue ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1));
    ALTER TABLE actions ADD COLUMN origin TEXT CHECK (origin IS NULL OR origin = 'agent');
    ALTER TABLE actions ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1));
    ALTER TABLE outbox ADD COLUMN held INTEGER NOT NULL DEFAULT 0 CHECK (held IN (0, 1));
    ALTER TABLE outbox ADD COLUMN origin TEXT CHECK (origin IS NULL OR origin = 'agent');
    ALTER TABLE accounts ADD COLUMN agent_policy TEXT NOT NULL DEFAULT 'hold'
        CHECK (agent_policy IN ('read-only', 'drafts', 'hold', 'direct'));
    """
}
