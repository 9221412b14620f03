/*!
 Migration 009_index_as_shown:
 The full-text index holds each text as it is shown (`hudson_shown_v1`, which
 `Store.open` defines as `TerminalSafety.shown`): without the ESC sequences and
 bidirectional controls a terminal never shows, so `Invoice ESC[5mURGENT` is found
 by `urgent` and a word between bidi isolates is a word. The messages whose text
 changes are re-indexed (out as the old triggers indexed them, in as shown); the
 view and triggers are then the 001 ones with `hudson_shown_v1` around each column.
 */
extension Schema {
    static let indexAsShown = """
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, m.subject, m.sender, coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, ''), b.text
          FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id
         WHERE hudson_shown_v1(m.subject) IS NOT m.subject OR hudson_shown_v1(m.sender) IS NOT m.sender
            OR hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')) IS NOT coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '') OR hudson_shown_v1(b.text) IS NOT b.text;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(b.text)
          FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id
         WHERE hudson_shown_v1(m.subject) IS NOT m.subject OR hudson_shown_v1(m.sender) IS NOT m.sender
            OR hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')) IS NOT coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '') OR hudson_shown_v1(b.text) IS NOT b.text;

    DROP VIEW fts_content;
    CREATE VIEW fts_content (rowid, subject, sender, recipients, body) AS
        SELECT m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(b.text)
          FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id;

    DROP TRIGGER messages_fts_insert;
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, hudson_shown_v1(NEW.subject), hudson_shown_v1(NEW.sender), hudson_shown_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')),
                hudson_shown_v1((SELECT text FROM message_bodies WHERE message_id = NEW.id)));
    END;

    DROP TRIGGER messages_fts_delete;
    CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, hudson_shown_v1(OLD.subject), hudson_shown_v1(OLD.sender), hudson_shown_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')),
                hudson_shown_v1((SELECT text FROM message_bodies WHERE message_id = OLD.id)));
    END;

    DROP TRIGGER messages_fts_update;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF subject, sender, to_header, cc_header, bcc_header ON messages
    WHEN OLD.subject IS NOT NEW.subject OR OLD.sender IS NOT NEW.sender
      OR OLD.to_header IS NOT NEW.to_header OR OLD.cc_header IS NOT NEW.cc_header
      OR OLD.bcc_header IS NOT NEW.bcc_header
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, hudson_shown_v1(OLD.subject), hudson_shown_v1(OLD.sender), hudson_shown_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')),
                hudson_shown_v1((SELECT text FROM message_bodies WHERE message_id = OLD.id)));
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, hudson_shown_v1(NEW.subject), hudson_shown_v1(NEW.sender), hudson_shown_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')),
                hudson_shown_v1((SELECT text FROM message_bodies WHERE message_id = NEW.id)));
    END;

    DROP TRIGGER message_bodies_fts_insert;
    CREATE TRIGGER message_bodies_fts_insert AFTER INSERT ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), NULL
          FROM messages AS m WHERE m.id = NEW.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(NEW.text)
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    DROP TRIGGER message_bodies_fts_update;
    CREATE TRIGGER message_bodies_fts_update AFTER UPDATE OF text ON message_bodies
    WHEN OLD.text IS NOT NEW.text
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(OLD.text)
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(NEW.text)
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    DROP TRIGGER message_bodies_fts_delete;
    CREATE TRIGGER message_bodies_fts_delete AFTER DELETE ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_shown_v1(OLD.text)
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_shown_v1(m.subject), hudson_shown_v1(m.sender), hudson_shown_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), NULL
          FROM messages AS m WHERE m.id = OLD.message_id;
    END;
    """
}
