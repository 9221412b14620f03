/*!
 Migration 031_export_intakes (issue 39): one row per two-way export (its random id, from
 its state file), with the number of the last read-back of client changes the store
 committed (Feeds/ExportIntake.swift), so a read-back killed at any step is queued once.
 */
extension Schema {
    static let exportIntakes = """
    CREATE TABLE export_intakes (
        export_id  TEXT PRIMARY KEY CHECK (length(export_id) = 32),
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        intake     INTEGER NOT NULL CHECK (intake > 0),
        action_id  INTEGER,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    """
}
