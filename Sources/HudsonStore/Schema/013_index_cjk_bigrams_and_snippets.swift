/*!
 Migration 013_index_cjk_bigrams_and_snippets:
 Two things Gmail finds that the index missed (issue 19). A Japanese or Chinese word
 inside a sentence: every column is now indexed through `hudson_indexed_v1`
 (`IndexText.forIndex` of the shown text: each run of Han, Hiragana and Katakana as
 its bigrams). And a body word of a message whose body is not stored: the body column
 holds Gmail's snippet until the body arrives (every metadata answer has one), so
 the start of the text is found. The view and triggers are 009's with the new function
 and the snippet in place of a missing body (and a change of snippet re-indexes);
 every row is then indexed again from the view.
 */
extension Schema {
    static let indexCJKBigramsAndSnippets = """
    DROP VIEW fts_content;
    CREATE VIEW fts_content (rowid, subject, sender, recipients, body) AS
        SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(b.text, m.snippet))
          FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id;

    DROP TRIGGER messages_fts_insert;
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, hudson_indexed_v1(NEW.subject), hudson_indexed_v1(NEW.sender), hudson_indexed_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = NEW.id), NEW.snippet)));
    END;

    DROP TRIGGER messages_fts_delete;
    CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, hudson_indexed_v1(OLD.subject), hudson_indexed_v1(OLD.sender), hudson_indexed_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = OLD.id), OLD.snippet)));
    END;

    DROP TRIGGER messages_fts_update;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF subject, sender, to_header, cc_header, bcc_header, snippet ON messages
    WHEN OLD.subject IS NOT NEW.subject OR OLD.sender IS NOT NEW.sender
      OR OLD.to_header IS NOT NEW.to_header OR OLD.cc_header IS NOT NEW.cc_header
      OR OLD.bcc_header IS NOT NEW.bcc_header OR OLD.snippet IS NOT NEW.snippet
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        VALUES ('delete', OLD.id, hudson_indexed_v1(OLD.subject), hudson_indexed_v1(OLD.sender), hudson_indexed_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = OLD.id), OLD.snippet)));
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        VALUES (NEW.id, hudson_indexed_v1(NEW.subject), hudson_indexed_v1(NEW.sender), hudson_indexed_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = NEW.id), NEW.snippet)));
    END;

    DROP TRIGGER message_bodies_fts_insert;
    CREATE TRIGGER message_bodies_fts_insert AFTER INSERT ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
          FROM messages AS m WHERE m.id = NEW.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(NEW.text, m.snippet))
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    DROP TRIGGER message_bodies_fts_update;
    CREATE TRIGGER message_bodies_fts_update AFTER UPDATE OF text ON message_bodies
    WHEN OLD.text IS NOT NEW.text
    BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(OLD.text, m.snippet))
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(NEW.text, m.snippet))
          FROM messages AS m WHERE m.id = NEW.message_id;
    END;

    DROP TRIGGER message_bodies_fts_delete;
    CREATE TRIGGER message_bodies_fts_delete AFTER DELETE ON message_bodies BEGIN
        INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
        SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(OLD.text, m.snippet))
          FROM messages AS m WHERE m.id = OLD.message_id;
        INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
        SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
          FROM messages AS m WHERE m.id = OLD.message_id;
    END;

    INSERT INTO fts_messages (fts_messages) VALUES ('rebuild');
    """
}
