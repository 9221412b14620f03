/*!
 Migration 036_address_book (issue 42): one row per address an account's mail names, with
 what `hd-address` ranks by: messages the account sent to it (it is in To, Cc or Bcc of a
 SENT message), messages received from it (From of any other), the newest message it is
 on, and the name it was last given. Derived from `message_addresses` and kept by
 triggers, so every writer of addresses (snapshots, imports) keeps it in its own
 transaction: a message's addresses are written after its labels (Snapshots.swift), and a
 deleted message is taken off before its rows go (BEFORE DELETE; the cascade that follows
 finds no message and changes nothing). `seen` counts the address rows behind a row; at 0
 the row goes. `last_at` is not lowered when the newest message goes (recency only ranks).
 */
extension Schema {
    static let addressBook = """
    CREATE TABLE address_book (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        address    TEXT NOT NULL COLLATE NOCASE,
        name       TEXT,
        sent       INTEGER NOT NULL DEFAULT 0 CHECK (sent >= 0),
        received   INTEGER NOT NULL DEFAULT 0 CHECK (received >= 0),
        seen       INTEGER NOT NULL DEFAULT 0 CHECK (seen >= 0),
        last_at    INTEGER NOT NULL,                   -- epoch ms: the newest message it is on
        PRIMARY KEY (account_id, address)
    ) WITHOUT ROWID;

    INSERT INTO address_book (account_id, address, name, sent, received, seen, last_at)
    SELECT account_id, address, name, sum(sent), sum(received), count(*), max(internal_date)
      FROM (SELECT m.account_id, a.address, a.name, m.internal_date,
                   a.role <> 'from' AND l.message_id IS NOT NULL AS sent,
                   a.role = 'from' AND l.message_id IS NULL AS received,
                   CASE WHEN a.name IS NOT NULL THEN m.internal_date END AS named_at
              FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id
              LEFT JOIN message_labels AS l ON l.message_id = a.message_id AND l.label = 'SENT'
             ORDER BY named_at)
     GROUP BY account_id, address;
    -- The name of each address's newest named message (the ORDER BY above only helps;
    -- this makes it exact).
    UPDATE address_book SET name = (
        SELECT a.name FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id
         WHERE a.address = address_book.address AND m.account_id = address_book.account_id AND a.name IS NOT NULL
         ORDER BY m.internal_date DESC LIMIT 1);

    CREATE TRIGGER address_book_insert AFTER INSERT ON message_addresses BEGIN
        INSERT INTO address_book (account_id, address, name, sent, received, seen, last_at)
        SELECT m.account_id, NEW.address, NEW.name,
               NEW.role <> 'from' AND s.is_sent, NEW.role = 'from' AND NOT s.is_sent, 1, m.internal_date
          FROM messages AS m,
               (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = NEW.message_id AND label = 'SENT') AS is_sent) AS s
         WHERE m.id = NEW.message_id
        ON CONFLICT (account_id, address) DO UPDATE SET
           sent = sent + excluded.sent, received = received + excluded.received, seen = seen + 1,
           name = CASE WHEN excluded.name IS NOT NULL AND (name IS NULL OR excluded.last_at >= last_at)
                       THEN excluded.name ELSE name END,
           last_at = max(last_at, excluded.last_at);
    END;

    -- replaceAddresses deletes a live message's rows: the message is there to say whose.
    CREATE TRIGGER address_book_delete AFTER DELETE ON message_addresses BEGIN
        UPDATE address_book SET
               sent = address_book.sent - (OLD.role <> 'from' AND s.is_sent),
               received = address_book.received - (OLD.role = 'from' AND NOT s.is_sent), seen = address_book.seen - 1
          FROM messages AS m,
               (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = OLD.message_id AND label = 'SENT') AS is_sent) AS s
         WHERE m.id = OLD.message_id AND address_book.account_id = m.account_id AND address_book.address = OLD.address;
        DELETE FROM address_book
         WHERE address = OLD.address AND seen = 0
           AND account_id = (SELECT account_id FROM messages WHERE id = OLD.message_id);
    END;

    -- A message deleted: its addresses come off while its rows and labels are still there.
    CREATE TRIGGER address_book_message_delete BEFORE DELETE ON messages BEGIN
        UPDATE address_book
           SET sent = address_book.sent - d.sent, received = address_book.received - d.received,
               seen = address_book.seen - d.seen
          FROM (SELECT a.address,
                       sum(a.role <> 'from' AND s.is_sent) AS sent, sum(a.role = 'from' AND NOT s.is_sent) AS received,
                       count(*) AS seen
                  FROM message_addresses AS a,
                       (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = OLD.id AND label = 'SENT') AS is_sent) AS s
                 WHERE a.message_id = OLD.id GROUP BY a.address) AS d
         WHERE address_book.account_id = OLD.account_id AND address_book.address = d.address;
        DELETE FROM address_book
         WHERE account_id = OLD.account_id AND seen = 0
           AND address IN (SELECT address FROM message_addresses WHERE message_id = OLD.id);
    END;
    """
}
