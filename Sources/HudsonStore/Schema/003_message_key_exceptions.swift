/*!
 Migration 003_message_key_exceptions:
 A date range is a key range (the key is internal_date × 1000 plus a tie-breaker
 below 1000: Snapshots.allocateMessageKey), so search seeks it instead of scanning
 every message (SearchCompiler). Two things can break the rule for a message: a
 thousand messages in one millisecond, or a snapshot that changes the date. Triggers
 list such messages here, and search widens its key ranges by how far they stray
 (Store.messageKeyDisplacement).
 */
extension Schema {
    static let messageKeyExceptions = """
    CREATE TABLE message_key_exceptions (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
    );

    INSERT INTO message_key_exceptions (message_id)
        SELECT id FROM messages WHERE id NOT BETWEEN internal_date * 1000 AND internal_date * 1000 + 999;

    CREATE TRIGGER messages_key_exception_insert AFTER INSERT ON messages
    WHEN NEW.id NOT BETWEEN NEW.internal_date * 1000 AND NEW.internal_date * 1000 + 999
    BEGIN
        INSERT OR IGNORE INTO message_key_exceptions (message_id) VALUES (NEW.id);
    END;

    CREATE TRIGGER messages_key_exception_update AFTER UPDATE OF internal_date ON messages
    WHEN OLD.internal_date IS NOT NEW.internal_date
    BEGIN
        DELETE FROM message_key_exceptions WHERE message_id = NEW.id;
        INSERT INTO message_key_exceptions (message_id)
            SELECT NEW.id WHERE NEW.id NOT BETWEEN NEW.internal_date * 1000 AND NEW.internal_date * 1000 + 999;
    END;
    """
}
