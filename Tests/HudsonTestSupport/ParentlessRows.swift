/// Rows of the queue, the undo items and the change sequence whose parent is gone. Since
/// migration 023 these tables have no foreign keys (triggers on `accounts` and `actions`
/// delete what the keys' ON DELETE actions did), so `PRAGMA foreign_key_check` no longer
/// sees them; a check of a sound store counts them with this.
public enum ParentlessRows {
    public static let countSQL = """
        SELECT (SELECT count(*) FROM mutation_queue AS q
                 WHERE NOT EXISTS (SELECT 1 FROM accounts AS a WHERE a.id = q.account_id)
                    OR (q.action_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM actions AS x WHERE x.id = q.action_id)))
             + (SELECT count(*) FROM action_items AS i
                 WHERE NOT EXISTS (SELECT 1 FROM actions AS x WHERE x.id = i.action_id))
             + (SELECT count(*) FROM message_seq AS s
                 WHERE NOT EXISTS (SELECT 1 FROM accounts AS a WHERE a.id = s.account_id))
        """
}
