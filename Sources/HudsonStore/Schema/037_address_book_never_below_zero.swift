/*!
 Migration 037_address_book_never_below_zero: the address book's counts are taken off
 with the message's labels as they are now, which need not be those they were added with
 (a SENT label added to a stored message, rows grouped by a case that the book's NOCASE
 key merges). Below zero, the table's CHECK would abort the writer's whole transaction: a
 sync that could never store that message again. The two removal triggers of 036 are
 made again with each count held at zero (a count off by one ranks an address a little
 wrong; a refused snapshot stops the mailbox).
 */
extension Schema {
    static let addressBookNeverBelowZero = """
    DROP TRIGGER address_book_delete;
    CREATE TRIGGER address_book_delete AFTER DELETE ON message_addresses BEGIN
        UPDATE address_book SET
               sent = max(0, address_book.sent - (OLD.role <> 'from' AND s.is_sent)),
               received = max(0, address_book.received - (OLD.role = 'from' AND NOT s.is_sent)),
               seen = max(0, address_book.seen - 1)
          FROM messages AS m,
               (SELECT EXISTS (SELECT 1 FROM message_labels WHERE message_id = OLD.message_id AND label = 'SENT') AS is_sent) AS s
         WHERE m.id = OLD.message_id AND address_book.account_id = m.account_id AND address_book.address = OLD.address;
        DELETE FROM address_book
         WHERE address = OLD.address AND seen = 0
           AND account_id = (SELECT account_id FROM messages WHERE id = OLD.message_id);
    END;

    DROP TRIGGER address_book_message_delete;
    CREATE TRIGGER address_book_message_delete BEFORE DELETE ON messages BEGIN
        UPDATE address_book
           SET sent = max(0, address_book.sent - d.sent), received = max(0, address_book.received - d.received),
               seen = max(0, address_book.seen - d.seen)
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
