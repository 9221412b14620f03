-- Schema fixture: a store at migration 022_inbox_listed_from_thread_labels, made by
--   hudson-store-helper fixture PATH && sqlite3 PATH .dump
-- `.dump` leaves out the header's application id, so it is set here as a store has it.
-- Never edit: it is what a store of that version looked like.
PRAGMA application_id=1212437326;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE hudson_migrations (id TEXT PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL DEFAULT (unixepoch()));
INSERT INTO hudson_migrations VALUES('001_initial',1796421623);
INSERT INTO hudson_migrations VALUES('002_outbox',1796421623);
INSERT INTO hudson_migrations VALUES('003_message_key_exceptions',1796421623);
INSERT INTO hudson_migrations VALUES('004_relist_unconfirmed',1796421623);
INSERT INTO hudson_migrations VALUES('005_triage_locality',1796421623);
INSERT INTO hudson_migrations VALUES('006_rollup_by_recency',1796421623);
INSERT INTO hudson_migrations VALUES('007_queue_checks_inbox_only',1796421623);
INSERT INTO hudson_migrations VALUES('008_faults_recorded',1796421623);
INSERT INTO hudson_migrations VALUES('009_index_as_shown',1796421623);
INSERT INTO hudson_migrations VALUES('010_trash_and_spam_listed_apart',1796421623);
INSERT INTO hudson_migrations VALUES('011_label_objects',1796421623);
INSERT INTO hudson_migrations VALUES('012_drafts',1796421623);
INSERT INTO hudson_migrations VALUES('013_index_cjk_bigrams_and_snippets',1796421623);
INSERT INTO hudson_migrations VALUES('014_attachment_has_a_filename',1796421623);
INSERT INTO hudson_migrations VALUES('015_messages_by_size',1796421623);
INSERT INTO hudson_migrations VALUES('016_label_counts',1796421623);
INSERT INTO hudson_migrations VALUES('017_rules_applied',1796421623);
INSERT INTO hudson_migrations VALUES('018_raw_sources',1796421623);
INSERT INTO hudson_migrations VALUES('019_imports',1796421623);
INSERT INTO hudson_migrations VALUES('020_thread_counts_kept_by_their_writer',1796421623);
INSERT INTO hudson_migrations VALUES('021_queue_counts_kept_by_enqueue',1796421623);
INSERT INTO hudson_migrations VALUES('022_inbox_listed_from_thread_labels',1796421623);
CREATE TABLE accounts (
    id                  INTEGER PRIMARY KEY,
    email               TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (email <> ''),
    -- history cursor: NULL until ensureCursor records it, before the first list call
    history_id          INTEGER CHECK (history_id IS NULL OR history_id > 0),
    consented_at        INTEGER NOT NULL,           -- epoch seconds; anchors the window
    lookback_days       INTEGER NOT NULL DEFAULT 90 CHECK (lookback_days >= 0),
    backfill_state      TEXT NOT NULL DEFAULT 'pending'
                        CHECK (backfill_state IN ('pending', 'running', 'complete')),
    backfill_page_token TEXT,
    -- the backfill window, fixed once chosen: after:<backfill_after> before:<backfill_before>
    backfill_after      INTEGER,                    -- epoch seconds; NULL = no lower bound
    backfill_before     INTEGER,                    -- epoch seconds; NULL = no upper bound
    backfill_listed     INTEGER NOT NULL DEFAULT 0, -- messages listed so far in this window
    backfill_estimate   INTEGER,                    -- resultSizeEstimate of the first page
    created_at          INTEGER NOT NULL,           -- epoch ms, like every *_at below
    last_sync_at        INTEGER,
    last_history_at     INTEGER,
    last_backfill_at    INTEGER,
    labels_synced_at    INTEGER
, keep_raw INTEGER NOT NULL DEFAULT 0 CHECK (keep_raw IN (0, 1)));
INSERT INTO accounts VALUES(1,'ann@example.com',100050,1767225600,90,'running','relist-2',1759449600,NULL,1,3,1796421623087,NULL,1796421623107,1796421623107,1796421623089,0);
INSERT INTO accounts VALUES(2,'bob@example.org',NULL,1767225600,0,'pending',NULL,NULL,NULL,0,NULL,1796421623088,NULL,NULL,NULL,NULL,0);
CREATE TABLE labels (
    account_id              INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    id                      TEXT NOT NULL CHECK (id <> ''),
    name                    TEXT COLLATE NOCASE,
    type                    TEXT CHECK (type IS NULL OR type IN ('system', 'user')),
    message_list_visibility TEXT,
    label_list_visibility   TEXT,
    text_color              TEXT,
    background_color        TEXT,
    PRIMARY KEY (account_id, id)
) WITHOUT ROWID;
INSERT INTO labels VALUES(1,'CATEGORY_PERSONAL',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(1,'INBOX','INBOX','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(1,'Label_1','Work','user',NULL,NULL,'#000000','#16a766');
INSERT INTO labels VALUES(1,'SENT',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(1,'STARRED',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(1,'UNREAD',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CATEGORY_FORUMS','CATEGORY_FORUMS','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CATEGORY_PERSONAL','CATEGORY_PERSONAL','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CATEGORY_PROMOTIONS','CATEGORY_PROMOTIONS','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CATEGORY_SOCIAL','CATEGORY_SOCIAL','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CATEGORY_UPDATES','CATEGORY_UPDATES','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'CHAT','CHAT','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'DRAFT','DRAFT','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'IMPORTANT','IMPORTANT','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'INBOX','INBOX','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'SENT','SENT','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'SPAM','SPAM','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'STARRED','STARRED','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'TRASH','TRASH','system',NULL,NULL,NULL,NULL);
INSERT INTO labels VALUES(2,'UNREAD','UNREAD','system',NULL,NULL,NULL,NULL);
CREATE TABLE messages (
    id                INTEGER PRIMARY KEY,
    account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    gmail_id          TEXT NOT NULL CHECK (gmail_id <> ''),
    thread_id         TEXT NOT NULL CHECK (thread_id <> ''),
    -- the history id this row came from: the version guard refuses older snapshots
    history_id        INTEGER NOT NULL CHECK (history_id > 0),
    internal_date     INTEGER NOT NULL,             -- epoch ms, Gmail's ordering key
    size_estimate     INTEGER NOT NULL DEFAULT 0,
    snippet           TEXT NOT NULL DEFAULT '',
    subject           TEXT,
    sender            TEXT,                         -- From, decoded
    to_header         TEXT,
    cc_header         TEXT,
    bcc_header        TEXT,
    reply_to          TEXT,
    date_header       TEXT,
    message_id_header TEXT,                         -- RFC 5322 Message-ID, with <>
    in_reply_to       TEXT,
    references_header TEXT,
    list_id           TEXT,
    content_type      TEXT,                         -- top-level MIME type
    has_attachment    INTEGER NOT NULL DEFAULT 0 CHECK (has_attachment IN (0, 1)),
    -- 0: metadata only; 1: body hydrated (message_bodies has the row)
    body_state        INTEGER NOT NULL DEFAULT 0 CHECK (body_state IN (0, 1)),
    -- gmail_id first: a bare id on the command line is looked up without an account
    UNIQUE (gmail_id, account_id)
);
INSERT INTO messages VALUES(1767225660000000,1,'a1','ta',100001,1767225660000,2048,'Snippet of a1 &amp; more','Re: Plans for Zürich','"Doe, Jane" <jane@example.net>','Ann <ann@example.com>','team@example.com',NULL,NULL,'Thu, 01 Jan 2026 00:01:00 +0000','<a1@example.net>',NULL,NULL,'<team.example.com>','multipart/mixed; boundary=x',1,0);
INSERT INTO messages VALUES(1767225720000000,1,'a2','ta',100002,1767225720000,2048,'Snippet of a2 &amp; more','Re: Plans for Zürich','"Doe, Jane" <jane@example.net>','Ann <ann@example.com>','team@example.com',NULL,NULL,'Thu, 01 Jan 2026 00:02:00 +0000','<a2@example.net>','<a1@example.net>','<a1@example.net>','<team.example.com>','multipart/mixed; boundary=x',1,1);
INSERT INTO messages VALUES(1767225780000000,1,'b1','tb',100003,1767225780000,2048,'Snippet of b1 &amp; more','Re: Plans for Zürich','"Doe, Jane" <jane@example.net>','Ann <ann@example.com>','team@example.com',NULL,NULL,'Thu, 01 Jan 2026 00:03:00 +0000','<b1@example.net>','<a1@example.net>','<a1@example.net>','<team.example.com>','multipart/mixed; boundary=x',1,0);
CREATE TABLE message_labels (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    label      TEXT NOT NULL CHECK (label <> ''),
    PRIMARY KEY (message_id, label)
) WITHOUT ROWID;
INSERT INTO message_labels VALUES(1767225660000000,'CATEGORY_PERSONAL');
INSERT INTO message_labels VALUES(1767225660000000,'INBOX');
INSERT INTO message_labels VALUES(1767225720000000,'INBOX');
INSERT INTO message_labels VALUES(1767225720000000,'Label_1');
INSERT INTO message_labels VALUES(1767225780000000,'SENT');
INSERT INTO message_labels VALUES(1767225660000000,'UNREAD');
CREATE TABLE message_addresses (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('from', 'to', 'cc', 'bcc')),
    address    TEXT NOT NULL COLLATE NOCASE,
    name       TEXT,
    PRIMARY KEY (message_id, role, address)
) WITHOUT ROWID;
INSERT INTO message_addresses VALUES(1767225660000000,'cc','team@example.com',NULL);
INSERT INTO message_addresses VALUES(1767225660000000,'from','jane@example.net','Doe, Jane');
INSERT INTO message_addresses VALUES(1767225660000000,'to','ann@example.com','Ann');
INSERT INTO message_addresses VALUES(1767225720000000,'cc','team@example.com',NULL);
INSERT INTO message_addresses VALUES(1767225720000000,'from','jane@example.net','Doe, Jane');
INSERT INTO message_addresses VALUES(1767225720000000,'to','ann@example.com','Ann');
INSERT INTO message_addresses VALUES(1767225780000000,'cc','team@example.com',NULL);
INSERT INTO message_addresses VALUES(1767225780000000,'from','jane@example.net','Doe, Jane');
INSERT INTO message_addresses VALUES(1767225780000000,'to','ann@example.com','Ann');
CREATE TABLE message_bodies (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text       TEXT,                                -- readable text (text/plain, or HTML made text)
    html       TEXT,                                -- the original HTML part, when there is one
    fetched_at INTEGER NOT NULL
);
INSERT INTO message_bodies VALUES(1767225720000000,'Shall we meet in Zürich?','<p>Shall we meet in Z&uuml;rich?</p>',1796421623093);
CREATE TABLE attachments (
    message_id    INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    part_id       TEXT NOT NULL,                    -- keyed by part, not attachmentId (gmail-api.md 2.4)
    filename      TEXT NOT NULL DEFAULT '',
    mime_type     TEXT NOT NULL DEFAULT 'application/octet-stream',
    size          INTEGER NOT NULL DEFAULT 0,
    attachment_id TEXT,
    content_id    TEXT,
    is_inline     INTEGER NOT NULL DEFAULT 0 CHECK (is_inline IN (0, 1)),
    PRIMARY KEY (message_id, part_id)
) WITHOUT ROWID;
INSERT INTO attachments VALUES(1767225720000000,'1','plan.pdf','application/pdf',4021,'ANGjdJ8w',NULL,0);
CREATE TABLE actions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    description TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    undoes      INTEGER REFERENCES actions(id) ON DELETE SET NULL,
    undone_by   INTEGER REFERENCES actions(id) ON DELETE SET NULL
);
INSERT INTO actions VALUES(1,'archive',1796421623094,NULL,NULL);
INSERT INTO actions VALUES(2,'star',1796421623097,NULL,3);
INSERT INTO actions VALUES(3,'undo 2',1796421623097,2,NULL);
INSERT INTO actions VALUES(4,'+Work',1796421623105,NULL,NULL);
PRAGMA writable_schema=ON;
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','fts_messages','fts_messages',0,'CREATE VIRTUAL TABLE fts_messages USING fts5 (
    subject, sender, recipients, body,
    content = ''fts_content'', content_rowid = ''rowid'',
    tokenize = ''unicode61 remove_diacritics 2'', prefix = ''2 3 4''
)');
CREATE TABLE IF NOT EXISTS 'fts_messages_data'(id INTEGER PRIMARY KEY, block BLOB);
INSERT INTO fts_messages_data VALUES(1,X'030c0f150f');
INSERT INTO fts_messages_data VALUES(10,X'000000000106060006010101020101030101040101050101060101');
INSERT INTO fts_messages_data VALUES(137438953473,X'0000037a033061318391e984cdcf8e000601030402026d708391e984cdcf8e000601030502026e6e8391e984cdcf8e0008010202030103636f6d8391e984cdcf8e0008010205050103646f658391e984cdcf8e000601010201076578616d706c658391e984cdcf8e000e010105010204050103666f728391e984cdcf8e00020401046a616e658391e984cdcf8e00080101030301046d6f72658391e984cdcf8e000601030601036e65748391e984cdcf8e000601010601026f668391e984cdcf8e00060103030105706c616e738391e984cdcf8e000203010272658391e984cdcf8e0002020107736e69707065748391e984cdcf8e000601030201047465616d8391e984cdcf8e000601020601067a75726963688391e984cdcf8e00020500033161318391e984cdcf8e000601030402016d8391e984cdcf8e000601030502016e8391e984cdcf8e0008010202030102636f8391e984cdcf8e0008010205050102646f8391e984cdcf8e0006010102010265788391e984cdcf8e000e010105010204050102666f8391e984cdcf8e00020401026a618391e984cdcf8e00080101030301026d6f8391e984cdcf8e000601030601026e658391e984cdcf8e000601010601026f668391e984cdcf8e00060103030102706c8391e984cdcf8e000203010272658391e984cdcf8e0002020102736e8391e984cdcf8e0006010302010274658391e984cdcf8e000601020601027a758391e984cdcf8e000205000432616d708391e984cdcf8e000601030502026e6e8391e984cdcf8e0008010202030103636f6d8391e984cdcf8e0008010205050103646f658391e984cdcf8e000601010201036578618391e984cdcf8e000e010105010204050103666f728391e984cdcf8e00020401036a616e8391e984cdcf8e00080101030301036d6f728391e984cdcf8e000601030601036e65748391e984cdcf8e00060101060103706c618391e984cdcf8e0002030103736e698391e984cdcf8e000601030201037465618391e984cdcf8e000601020601037a75728391e984cdcf8e0002050005336578616d8391e984cdcf8e000e0101050102040501046a616e658391e984cdcf8e00080101030301046d6f72658391e984cdcf8e00060103060104706c616e8391e984cdcf8e0002030104736e69708391e984cdcf8e000601030201047465616d8391e984cdcf8e000601020601047a7572698391e984cdcf8e000205041010111211190f13121110110e151212110f101110140e111010100e0e10100e12111211150f1211110f11110f171312101212');
INSERT INTO fts_messages_data VALUES(274877906945,X'0000037a033061328391e984ea9d9c000601030402026d708391e984ea9d9c000601030502026e6e8391e984ea9d9c0008010202030103636f6d8391e984ea9d9c0008010205050103646f658391e984ea9d9c000601010201076578616d706c658391e984ea9d9c000e010105010204050103666f728391e984ea9d9c00020401046a616e658391e984ea9d9c00080101030301046d6f72658391e984ea9d9c000601030601036e65748391e984ea9d9c000601010601026f668391e984ea9d9c00060103030105706c616e738391e984ea9d9c000203010272658391e984ea9d9c0002020107736e69707065748391e984ea9d9c000601030201047465616d8391e984ea9d9c000601020601067a75726963688391e984ea9d9c00020500033161328391e984ea9d9c000601030402016d8391e984ea9d9c000601030502016e8391e984ea9d9c0008010202030102636f8391e984ea9d9c0008010205050102646f8391e984ea9d9c0006010102010265788391e984ea9d9c000e010105010204050102666f8391e984ea9d9c00020401026a618391e984ea9d9c00080101030301026d6f8391e984ea9d9c000601030601026e658391e984ea9d9c000601010601026f668391e984ea9d9c00060103030102706c8391e984ea9d9c000203010272658391e984ea9d9c0002020102736e8391e984ea9d9c0006010302010274658391e984ea9d9c000601020601027a758391e984ea9d9c000205000432616d708391e984ea9d9c000601030502026e6e8391e984ea9d9c0008010202030103636f6d8391e984ea9d9c0008010205050103646f658391e984ea9d9c000601010201036578618391e984ea9d9c000e010105010204050103666f728391e984ea9d9c00020401036a616e8391e984ea9d9c00080101030301036d6f728391e984ea9d9c000601030601036e65748391e984ea9d9c00060101060103706c618391e984ea9d9c0002030103736e698391e984ea9d9c000601030201037465618391e984ea9d9c000601020601037a75728391e984ea9d9c0002050005336578616d8391e984ea9d9c000e0101050102040501046a616e658391e984ea9d9c00080101030301046d6f72658391e984ea9d9c00060103060104706c616e8391e984ea9d9c0002030104736e69708391e984ea9d9c000601030201047465616d8391e984ea9d9c000601020601047a7572698391e984ea9d9c000205041010111211190f13121110110e151212110f101110140e111010100e0e10100e12111211150f1211110f11110f171312101212');
INSERT INTO fts_messages_data VALUES(412316860417,X'0000037c0430616d708391e98586ebaa000601030502026e6e8391e98586ebaa000801020203010262318391e98586ebaa00060103040103636f6d8391e98586ebaa0008010205050103646f658391e98586ebaa000601010201076578616d706c658391e98586ebaa000e010105010204050103666f728391e98586ebaa00020401046a616e658391e98586ebaa00080101030301046d6f72658391e98586ebaa000601030601036e65748391e98586ebaa000601010601026f668391e98586ebaa00060103030105706c616e738391e98586ebaa000203010272658391e98586ebaa0002020107736e69707065748391e98586ebaa000601030201047465616d8391e98586ebaa000601020601067a75726963688391e98586ebaa000205000331616d8391e98586ebaa000601030502016e8391e98586ebaa000801020203010262318391e98586ebaa00060103040102636f8391e98586ebaa0008010205050102646f8391e98586ebaa0006010102010265788391e98586ebaa000e010105010204050102666f8391e98586ebaa00020401026a618391e98586ebaa00080101030301026d6f8391e98586ebaa000601030601026e658391e98586ebaa000601010601026f668391e98586ebaa00060103030102706c8391e98586ebaa000203010272658391e98586ebaa0002020102736e8391e98586ebaa0006010302010274658391e98586ebaa000601020601027a758391e98586ebaa000205000432616d708391e98586ebaa000601030502026e6e8391e98586ebaa0008010202030103636f6d8391e98586ebaa0008010205050103646f658391e98586ebaa000601010201036578618391e98586ebaa000e010105010204050103666f728391e98586ebaa00020401036a616e8391e98586ebaa00080101030301036d6f728391e98586ebaa000601030601036e65748391e98586ebaa00060101060103706c618391e98586ebaa0002030103736e698391e98586ebaa000601030201037465618391e98586ebaa000601020601037a75728391e98586ebaa0002050005336578616d8391e98586ebaa000e0101050102040501046a616e658391e98586ebaa00080101030301046d6f72658391e98586ebaa00060103060104706c616e8391e98586ebaa0002030104736e69708391e98586ebaa000601030201047465616d8391e98586ebaa000601020601047a7572698391e98586ebaa000205041111101211190f13121110110e1512121110101110140e111010100e0e10100e12111211150f1211110f11110f171312101212');
INSERT INTO fts_messages_data VALUES(549755813889,X'0000037a0430616d708391e985a3b9b8000601030502026e6e8391e985a3b9b8000801020203010263318391e985a3b9b8000601030402026f6d8391e985a3b9b80008010205050103646f658391e985a3b9b8000601010201076578616d706c658391e985a3b9b8000e010105010204050103666f728391e985a3b9b800020401046a616e658391e985a3b9b800080101030301046d6f72658391e985a3b9b8000601030601036e65748391e985a3b9b8000601010601026f668391e985a3b9b800060103030105706c616e738391e985a3b9b8000203010272658391e985a3b9b80002020107736e69707065748391e985a3b9b8000601030201047465616d8391e985a3b9b8000601020601067a75726963688391e985a3b9b8000205000331616d8391e985a3b9b8000601030502016e8391e985a3b9b8000801020203010263318391e985a3b9b8000601030402016f8391e985a3b9b80008010205050102646f8391e985a3b9b80006010102010265788391e985a3b9b8000e010105010204050102666f8391e985a3b9b800020401026a618391e985a3b9b800080101030301026d6f8391e985a3b9b8000601030601026e658391e985a3b9b8000601010601026f668391e985a3b9b800060103030102706c8391e985a3b9b8000203010272658391e985a3b9b80002020102736e8391e985a3b9b80006010302010274658391e985a3b9b8000601020601027a758391e985a3b9b8000205000432616d708391e985a3b9b8000601030502026e6e8391e985a3b9b80008010202030103636f6d8391e985a3b9b80008010205050103646f658391e985a3b9b8000601010201036578618391e985a3b9b8000e010105010204050103666f728391e985a3b9b800020401036a616e8391e985a3b9b800080101030301036d6f728391e985a3b9b8000601030601036e65748391e985a3b9b800060101060103706c618391e985a3b9b80002030103736e698391e985a3b9b8000601030201037465618391e985a3b9b8000601020601037a75728391e985a3b9b80002050005336578616d8391e985a3b9b8000e0101050102040501046a616e658391e985a3b9b800080101030301046d6f72658391e985a3b9b800060103060104706c616e8391e985a3b9b80002030104736e69708391e985a3b9b8000601030201047465616d8391e985a3b9b8000601020601047a7572698391e985a3b9b8000205041111101111190f13121110110e1512121110101010140e111010100e0e10100e12111211150f1211110f11110f171312101212');
INSERT INTO fts_messages_data VALUES(687194767361,X'0000041c033061328391e984ea9d9c000102026d708391e984ea9d9c000102026e6e8391e984ea9d9c0009010202030103636f6d8391e984ea9d9c0009010205050103646f658391e984ea9d9c000701010201076578616d706c658391e984ea9d9c000f010105010204050103666f728391e984ea9d9c0003040102696e8391e984ea9d9c000601030501046a616e658391e984ea9d9c00090101030301046d6565748391e984ea9d9c000601030402036f72658391e984ea9d9c000101036e65748391e984ea9d9c000701010601026f668391e984ea9d9c00010105706c616e738391e984ea9d9c000303010272658391e984ea9d9c00030201057368616c6c8391e984ea9d9c000601030202066e69707065748391e984ea9d9c000101047465616d8391e984ea9d9c0007010206010277658391e984ea9d9c000601030301067a75726963688391e984ea9d9c00090501030600033161328391e984ea9d9c000102016d8391e984ea9d9c000102016e8391e984ea9d9c0009010202030102636f8391e984ea9d9c0009010205050102646f8391e984ea9d9c0007010102010265788391e984ea9d9c000f010105010204050102666f8391e984ea9d9c0003040102696e8391e984ea9d9c000601030501026a618391e984ea9d9c00090101030301026d658391e984ea9d9c000601030402016f8391e984ea9d9c000101026e658391e984ea9d9c000701010601026f668391e984ea9d9c00010102706c8391e984ea9d9c000303010272658391e984ea9d9c000302010273688391e984ea9d9c000601030202016e8391e984ea9d9c0001010274658391e984ea9d9c0007010206010277658391e984ea9d9c000601030301027a758391e984ea9d9c000905010306000432616d708391e984ea9d9c000102026e6e8391e984ea9d9c0009010202030103636f6d8391e984ea9d9c0009010205050103646f658391e984ea9d9c000701010201036578618391e984ea9d9c000f010105010204050103666f728391e984ea9d9c00030401036a616e8391e984ea9d9c00090101030301036d65658391e984ea9d9c000601030402026f728391e984ea9d9c000101036e65748391e984ea9d9c00070101060103706c618391e984ea9d9c00030301037368618391e984ea9d9c000601030202026e698391e984ea9d9c000101037465618391e984ea9d9c000701020601037a75728391e984ea9d9c0009050103060005336578616d8391e984ea9d9c000f0101050102040501046a616e658391e984ea9d9c00090101030301046d6565748391e984ea9d9c000601030402036f72658391e984ea9d9c00010104706c616e8391e984ea9d9c00030301047368616c8391e984ea9d9c000601030202036e69708391e984ea9d9c000101047465616d8391e984ea9d9c000701020601047a7572698391e984ea9d9c000905010306040d0d111211190f1013120e110d110e13111210150e0c101110140e1011100c100d0e0e100c1010110f111211150f12110d110f110d11121713120e10120e12');
INSERT INTO fts_messages_data VALUES(824633720833,X'000002de0430616d708391e985a3b9b8000102026e6e8391e985a3b9b80001010263318391e985a3b9b8000102026f6d8391e985a3b9b800010103646f658391e985a3b9b8000101076578616d706c658391e985a3b9b800010103666f728391e985a3b9b8000101046a616e658391e985a3b9b8000101046d6f72658391e985a3b9b8000101036e65748391e985a3b9b8000101026f668391e985a3b9b800010105706c616e738391e985a3b9b80001010272658391e985a3b9b800010107736e69707065748391e985a3b9b8000101047465616d8391e985a3b9b8000101067a75726963688391e985a3b9b80001000331616d8391e985a3b9b8000102016e8391e985a3b9b80001010263318391e985a3b9b8000102016f8391e985a3b9b800010102646f8391e985a3b9b80001010265788391e985a3b9b800010102666f8391e985a3b9b8000101026a618391e985a3b9b8000101026d6f8391e985a3b9b8000101026e658391e985a3b9b8000101026f668391e985a3b9b800010102706c8391e985a3b9b80001010272658391e985a3b9b800010102736e8391e985a3b9b80001010274658391e985a3b9b8000101027a758391e985a3b9b80001000432616d708391e985a3b9b8000102026e6e8391e985a3b9b800010103636f6d8391e985a3b9b800010103646f658391e985a3b9b8000101036578618391e985a3b9b800010103666f728391e985a3b9b8000101036a616e8391e985a3b9b8000101036d6f728391e985a3b9b8000101036e65748391e985a3b9b800010103706c618391e985a3b9b800010103736e698391e985a3b9b8000101037465618391e985a3b9b8000101037a75728391e985a3b9b800010005336578616d8391e985a3b9b8000101046a616e658391e985a3b9b8000101046d6f72658391e985a3b9b800010104706c616e8391e985a3b9b800010104736e69708391e985a3b9b8000101047465616d8391e985a3b9b8000101047a7572698391e985a3b9b80001040e0d0d0d0e120e0f0f0e0d100d120f110e0c0d0c0d0d0d0d0d0d0d0d0d0d0d0d0f0d0e0e0e0e0e0e0e0e0e0e0e100f0f0f0f0f');
CREATE TABLE IF NOT EXISTS 'fts_messages_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
INSERT INTO fts_messages_idx VALUES(1,X'',2);
INSERT INTO fts_messages_idx VALUES(2,X'',2);
INSERT INTO fts_messages_idx VALUES(3,X'',2);
INSERT INTO fts_messages_idx VALUES(4,X'',2);
INSERT INTO fts_messages_idx VALUES(5,X'',2);
INSERT INTO fts_messages_idx VALUES(6,X'',2);
CREATE TABLE IF NOT EXISTS 'fts_messages_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
INSERT INTO fts_messages_docsize VALUES(1767225660000000,X'04050705');
INSERT INTO fts_messages_docsize VALUES(1767225720000000,X'04050705');
INSERT INTO fts_messages_docsize VALUES(1767225780000000,X'04050705');
CREATE TABLE IF NOT EXISTS 'fts_messages_config'(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO fts_messages_config VALUES('version',4);
CREATE TABLE outbox (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT, -- outbox:N, never reused
    account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    raw                BLOB NOT NULL,                     -- the RFC 822 message, CRLF; emptied once sent or cancelled
    message_id         TEXT NOT NULL CHECK (message_id GLOB '<?*@?*>'), -- what the probe searches for
    thread_id          TEXT CHECK (thread_id IS NULL OR thread_id <> ''), -- Gmail threadId of a reply
    recipients         TEXT NOT NULL DEFAULT '',          -- To, Cc and Bcc addresses, comma-separated (display)
    subject            TEXT NOT NULL DEFAULT '',          -- decoded (display)
    size               INTEGER NOT NULL CHECK (size > 0), -- bytes of the message as queued
    state              TEXT NOT NULL DEFAULT 'queued'
                       CHECK (state IN ('queued', 'sending', 'sent', 'failed', 'cancelled')),
    attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error         TEXT,
    not_before         INTEGER NOT NULL,                  -- epoch ms: the undo window ends; no attempt before
    next_attempt_at    INTEGER,                           -- epoch ms: backoff after a transient failure
    attempt_started_at INTEGER,                           -- epoch ms: the last request went out
    claimed_at         INTEGER,                           -- epoch ms: a sender holds the entry
    claim_token        INTEGER,                           -- which sender
    gmail_id           TEXT,                              -- the sent message, once known
    gmail_thread_id    TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL, attempt_history_id INTEGER, kind TEXT NOT NULL DEFAULT 'send' CHECK (kind IN ('send', 'draft', 'draft-send')), draft_id TEXT CHECK (draft_id IS NULL OR draft_id <> ''),
    CHECK ((state = 'sent') = (gmail_id IS NOT NULL)),
    CHECK (state <> 'failed' OR last_error IS NOT NULL),
    CHECK (state <> 'sending' OR attempt_started_at IS NOT NULL),
    CHECK (state IN ('sent', 'cancelled') OR length(raw) > 0),
    CHECK ((claimed_at IS NULL) = (claim_token IS NULL))
);
INSERT INTO outbox VALUES(1,1,X'46726f6d3a20616e6e406578616d706c652e636f6d0d0a546f3a20626f62406578616d706c652e6f72670d0a5375626a6563743a204f7574626f7820310d0a4d6573736167652d49443a203c6f757431406578616d706c652e636f6d3e0d0a0d0a48656c6c6f20310d0a','<out1@example.com>',NULL,'bob@example.org','Outbox 1',106,'queued',0,NULL,1796421633098,NULL,NULL,NULL,NULL,NULL,NULL,1796421623098,1796421623098,NULL,'send',NULL);
INSERT INTO outbox VALUES(2,1,X'46726f6d3a20616e6e406578616d706c652e636f6d0d0a546f3a20626f62406578616d706c652e6f72670d0a5375626a6563743a204f7574626f7820320d0a4d6573736167652d49443a203c6f757432406578616d706c652e636f6d3e0d0a0d0a48656c6c6f20320d0a','<out2@example.com>',NULL,'bob@example.org','Outbox 2',106,'sending',1,'network error: lost',1796421623098,1796421623103,1796421623099,NULL,NULL,NULL,NULL,1796421623098,1796421623103,100000,'send',NULL);
INSERT INTO outbox VALUES(3,1,X'','<out3@example.com>','ta','bob@example.org','Outbox 3',106,'sent',1,NULL,1796421623098,NULL,1796421623102,NULL,NULL,'sent3','ta',1796421623098,1796421623103,100000,'send',NULL);
INSERT INTO outbox VALUES(4,1,X'46726f6d3a20616e6e406578616d706c652e636f6d0d0a546f3a20626f62406578616d706c652e6f72670d0a5375626a6563743a204f7574626f7820340d0a4d6573736167652d49443a203c6f757434406578616d706c652e636f6d3e0d0a0d0a48656c6c6f20340d0a','<out4@example.com>',NULL,'bob@example.org','Outbox 4',106,'failed',1,'Invalid To header',1796421623098,NULL,1796421623102,NULL,NULL,NULL,NULL,1796421623098,1796421623103,100000,'send',NULL);
INSERT INTO outbox VALUES(5,1,X'','<out5@example.com>',NULL,'bob@example.org','Outbox 5',106,'cancelled',1,'Invalid To header',1796421623099,NULL,1796421623103,NULL,NULL,NULL,NULL,1796421623099,1796421623104,100000,'send',NULL);
CREATE TABLE message_key_exceptions (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
);
CREATE TABLE relist_unconfirmed (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, message_id)
) WITHOUT ROWID;
INSERT INTO relist_unconfirmed VALUES(1,1767225660000000);
INSERT INTO relist_unconfirmed VALUES(1,1767225720000000);
CREATE TABLE IF NOT EXISTS "thread_labels" (
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label           TEXT NOT NULL,
    last_message_at INTEGER NOT NULL,
    thread_id       TEXT NOT NULL,
    PRIMARY KEY (account_id, label, last_message_at DESC, thread_id DESC)
) WITHOUT ROWID;
INSERT INTO thread_labels VALUES(1,'CATEGORY_PERSONAL',1767225720000,'ta');
INSERT INTO thread_labels VALUES(1,'Label_1',1767225720000,'ta');
INSERT INTO thread_labels VALUES(1,'SENT',1767225780000,'tb');
INSERT INTO thread_labels VALUES(1,'UNREAD',1767225720000,'ta');
CREATE TABLE IF NOT EXISTS "action_items" (
    action_id  INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL,                    -- messages.id when queued
    gmail_id   TEXT NOT NULL,                       -- ... and the message it named then
    label      TEXT NOT NULL,
    op         TEXT NOT NULL CHECK (op IN ('add', 'remove')),
    PRIMARY KEY (action_id, message_id, label)
) WITHOUT ROWID;
INSERT INTO action_items VALUES(1,1767225660000000,'a1','INBOX','remove');
INSERT INTO action_items VALUES(1,1767225720000000,'a2','INBOX','remove');
INSERT INTO action_items VALUES(2,1767225780000000,'b1','STARRED','add');
INSERT INTO action_items VALUES(3,1767225780000000,'b1','STARRED','remove');
INSERT INTO action_items VALUES(4,1767225780000000,'b1','Label_1','add');
CREATE TABLE IF NOT EXISTS "message_seq" (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    gmail_id           TEXT NOT NULL,
    thread_id          TEXT NOT NULL,
    message_id         INTEGER UNIQUE,              -- messages.id while stored; NULL once deleted
    deleted            INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
    deleted_history_id INTEGER
);
INSERT INTO message_seq VALUES(6,1,'c1','tc',NULL,1,100010);
INSERT INTO message_seq VALUES(7,1,'a2','ta',1767225720000000,0,NULL);
INSERT INTO message_seq VALUES(8,1,'a1','ta',1767225660000000,0,NULL);
INSERT INTO message_seq VALUES(12,1,'b1','tb',1767225780000000,0,NULL);
CREATE TABLE IF NOT EXISTS "thread_rollup" (
    account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id         TEXT NOT NULL,
    last_message_at   INTEGER NOT NULL,             -- newest message's internal_date
    newest_message_id INTEGER NOT NULL,             -- messages.id of that message
    subject           TEXT,
    snippet           TEXT NOT NULL DEFAULT '',
    sender            TEXT NOT NULL DEFAULT '',     -- newest message's sender, for display
    participants      TEXT NOT NULL DEFAULT '',     -- distinct senders, oldest first
    message_count     INTEGER NOT NULL,
    unread_count      INTEGER NOT NULL,
    in_inbox          INTEGER NOT NULL CHECK (in_inbox IN (0, 1)),
    unread            INTEGER NOT NULL CHECK (unread IN (0, 1)),
    starred           INTEGER NOT NULL CHECK (starred IN (0, 1)),
    has_attachment    INTEGER NOT NULL CHECK (has_attachment IN (0, 1)),
    labels            TEXT NOT NULL DEFAULT '',     -- effective label ids, space-separated, sorted
    PRIMARY KEY (account_id, last_message_at DESC, thread_id DESC)
) WITHOUT ROWID;
INSERT INTO thread_rollup VALUES(1,'tb',1767225780000,1767225780000000,'Re: Plans for Zürich','Snippet of b1 &amp; more','Doe, Jane','Doe, Jane',1,0,0,0,0,1,'SENT');
INSERT INTO thread_rollup VALUES(1,'ta',1767225720000,1767225720000000,'Re: Plans for Zürich','Snippet of a2 &amp; more','Doe, Jane','Doe, Jane',2,1,0,1,0,1,'CATEGORY_PERSONAL Label_1 UNREAD');
CREATE TABLE IF NOT EXISTS "mutation_queue" (
    id                  INTEGER PRIMARY KEY,
    account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    message_id          INTEGER NOT NULL,           -- messages.id (History.tombstone deletes its rows)
    label               TEXT NOT NULL CHECK (label <> ''),
    op                  TEXT NOT NULL CHECK (op IN ('add', 'remove')),
    state               TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'in_flight')),
    expected_history_id INTEGER,                    -- the retirement gate, set with in_flight
    action_id           INTEGER REFERENCES actions(id) ON DELETE SET NULL,
    attempts            INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    next_attempt_at     INTEGER,                    -- epoch ms; backoff after a transient failure
    claimed_at          INTEGER,                    -- epoch ms; a flusher is sending this row
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL, attempted_at INTEGER,
    UNIQUE (message_id, label),
    CHECK (state <> 'in_flight' OR expected_history_id IS NOT NULL)
);
INSERT INTO mutation_queue VALUES(1,1,1767225720000000,'INBOX','remove','in_flight',100020,1,1,NULL,NULL,NULL,1796421623095,1796421623097,NULL);
INSERT INTO mutation_queue VALUES(2,1,1767225660000000,'INBOX','remove','pending',NULL,1,1,'network error: lost',1796421623105,1796421623106,1796421623095,1796421623105,1796421623104);
CREATE TABLE sync_parked (
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    stage           TEXT NOT NULL CHECK (stage IN ('message', 'body')),
    gmail_id        TEXT NOT NULL CHECK (gmail_id <> ''),
    error           TEXT NOT NULL,
    attempts        INTEGER NOT NULL CHECK (attempts > 0),
    first_failed_at INTEGER NOT NULL,              -- epoch ms, like every *_at below
    last_failed_at  INTEGER NOT NULL,
    next_attempt_at INTEGER NOT NULL,
    reported        INTEGER NOT NULL DEFAULT 0 CHECK (reported IN (0, 1)),
    PRIMARY KEY (account_id, stage, gmail_id)
) WITHOUT ROWID;
INSERT INTO sync_parked VALUES(1,'body','a1','invalid response from Gmail: not JSON',1,1796421623106,1796421623106,1796421683106,0);
INSERT INTO sync_parked VALUES(1,'message','z9','Gmail server error (500): retry later',1,1796421623106,1796421623106,1796421683106,0);
CREATE TABLE rejected_changes (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    gmail_id    TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    label       TEXT NOT NULL,
    op          TEXT NOT NULL CHECK (op IN ('add', 'remove')),
    action_id   INTEGER REFERENCES actions(id) ON DELETE SET NULL,
    reason      TEXT NOT NULL,
    rejected_at INTEGER NOT NULL
);
INSERT INTO rejected_changes VALUES(1,1,'b1','tb','Label_1','add',4,'request rejected by Gmail: Invalid label: Label_1',1796421623106);
CREATE TABLE label_overlay (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,   -- order of sending; Hudson+seq names a created label
    account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label_id        TEXT NOT NULL CHECK (label_id <> ''),
    op              TEXT NOT NULL CHECK (op IN ('create', 'rename', 'delete')),
    name            TEXT COLLATE NOCASE,                 -- the name wanted; NULL for delete
    previous_name   TEXT,                                -- the name before (rename, delete), for reports
    text_color      TEXT,
    background_color TEXT,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent')),
    attempted_at    INTEGER,                             -- epoch ms; a request carrying it went out
    attempted_name  TEXT,                                -- the name that request carried (create)
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    next_attempt_at INTEGER,
    sent_at         INTEGER,                             -- epoch ms; Gmail answered
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (account_id, label_id),
    CHECK ((op = 'delete') = (name IS NULL)),
    CHECK (state <> 'sent' OR sent_at IS NOT NULL)
);
CREATE TABLE rejected_label_changes (
    id          INTEGER PRIMARY KEY,
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label_id    TEXT NOT NULL,
    op          TEXT NOT NULL CHECK (op IN ('create', 'rename', 'delete')),
    name        TEXT,                                    -- the name asked for (create, rename)
    previous_name TEXT,
    reason      TEXT NOT NULL,
    rejected_at INTEGER NOT NULL
);
CREATE TABLE drafts (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    draft_id   TEXT NOT NULL CHECK (draft_id <> ''),
    gmail_id   TEXT NOT NULL CHECK (gmail_id <> ''),           -- the draft's current message
    PRIMARY KEY (account_id, draft_id)
) WITHOUT ROWID;
CREATE TABLE label_counts (
    account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    label          TEXT NOT NULL,
    messages       INTEGER NOT NULL DEFAULT 0,
    threads        INTEGER NOT NULL DEFAULT 0,
    unread_threads INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, label)
) WITHOUT ROWID;
INSERT INTO label_counts VALUES(1,'CATEGORY_PERSONAL',1,1,1);
INSERT INTO label_counts VALUES(1,'INBOX',0,0,0);
INSERT INTO label_counts VALUES(1,'Label_1',1,1,1);
INSERT INTO label_counts VALUES(1,'SENT',1,1,0);
INSERT INTO label_counts VALUES(1,'STARRED',0,0,0);
INSERT INTO label_counts VALUES(1,'UNREAD',1,1,1);
CREATE TABLE rules_accounts (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    since      INTEGER NOT NULL                 -- epoch ms: new mail is internal_date >= since
);
CREATE TABLE rules_applied (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    gmail_id   TEXT NOT NULL,
    action_id  INTEGER,                         -- NULL when no rule changed it
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, gmail_id)
) WITHOUT ROWID;
CREATE TABLE message_sources (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    source     BLOB NOT NULL,
    fetched_at INTEGER NOT NULL
);
CREATE TABLE imports (
    account_id         INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    source_key         TEXT NOT NULL CHECK (source_key <> ''),
    message_id         TEXT CHECK (message_id IS NULL OR message_id <> ''),   -- with <>; the probe's key
    state              TEXT NOT NULL CHECK (state IN ('sending', 'imported', 'failed')),
    origin             TEXT NOT NULL,                                         -- file, and number in an mbox
    attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    attempt_started_at INTEGER,                                               -- epoch ms of the last attempt
    gmail_id           TEXT CHECK (gmail_id IS NULL OR gmail_id <> ''),
    last_error         TEXT,
    updated_at         INTEGER NOT NULL,
    CHECK (state <> 'imported' OR gmail_id IS NOT NULL),
    PRIMARY KEY (account_id, source_key)
) WITHOUT ROWID;
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('message_seq',12);
INSERT INTO sqlite_sequence VALUES('actions',4);
INSERT INTO sqlite_sequence VALUES('outbox',5);
CREATE INDEX labels_by_name ON labels (account_id, name);
CREATE INDEX messages_by_rfc822_id ON messages (message_id_header) WHERE message_id_header IS NOT NULL;
CREATE INDEX messages_needing_body ON messages (account_id, internal_date DESC) WHERE body_state = 0;
CREATE INDEX message_labels_by_label ON message_labels (label, message_id);
CREATE INDEX message_addresses_by_address ON message_addresses (address, role, message_id);
CREATE INDEX outbox_unfinished ON outbox (account_id, not_before) WHERE state IN ('queued', 'sending');
CREATE TRIGGER outbox_legal_transition BEFORE UPDATE OF state ON outbox
WHEN OLD.state <> NEW.state AND NOT (
       (OLD.state = 'queued'  AND NEW.state IN ('sending', 'cancelled'))
    OR (OLD.state = 'sending' AND NEW.state IN ('queued', 'sent', 'failed'))
    OR (OLD.state = 'failed'  AND NEW.state = 'cancelled'))
BEGIN
    SELECT RAISE(ABORT, 'outbox: illegal state change');
END;
CREATE TRIGGER outbox_message_fixed BEFORE UPDATE OF account_id, message_id, thread_id, raw ON outbox
WHEN OLD.account_id <> NEW.account_id OR OLD.message_id <> NEW.message_id OR OLD.thread_id IS NOT NEW.thread_id
  OR (OLD.raw <> NEW.raw AND NOT (length(NEW.raw) = 0 AND NEW.state IN ('sent', 'cancelled')))
BEGIN
    SELECT RAISE(ABORT, 'outbox: a queued message cannot change');
END;
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
CREATE INDEX relist_unconfirmed_by_message ON relist_unconfirmed (message_id);
CREATE INDEX messages_by_thread ON messages (thread_id, account_id, internal_date, gmail_id);
CREATE UNIQUE INDEX message_seq_deleted ON message_seq (account_id, gmail_id) WHERE deleted = 1;
CREATE UNIQUE INDEX thread_rollup_by_thread ON thread_rollup (thread_id, account_id);
CREATE INDEX mutation_queue_by_state ON mutation_queue (account_id, state, id);
CREATE VIEW effective_labels (message_id, label) AS
    SELECT ml.message_id, ml.label
      FROM message_labels AS ml
     WHERE NOT EXISTS (SELECT 1 FROM mutation_queue AS q
                        WHERE q.message_id = ml.message_id AND q.label = ml.label AND q.op = 'remove')
    UNION ALL
    SELECT q.message_id, q.label
      FROM mutation_queue AS q
     WHERE q.op = 'add'
       AND NOT EXISTS (SELECT 1 FROM message_labels AS ml
                        WHERE ml.message_id = q.message_id AND ml.label = q.label);
CREATE INDEX sync_parked_due ON sync_parked (account_id, stage, next_attempt_at);
CREATE INDEX rejected_changes_by_action ON rejected_changes (action_id) WHERE action_id IS NOT NULL;
CREATE INDEX rejected_changes_by_time ON rejected_changes (rejected_at);
CREATE INDEX rejected_label_changes_by_time ON rejected_label_changes (rejected_at);
CREATE VIEW shown_labels (account_id, id, name, type, message_list_visibility, label_list_visibility,
                          text_color, background_color, local_op, local_state) AS
    SELECT l.account_id, l.id, coalesce(o.name, l.name), coalesce(l.type, CASE WHEN o.op IS NOT NULL THEN 'user' END),
           l.message_list_visibility, l.label_list_visibility,
           coalesce(o.text_color, l.text_color), coalesce(o.background_color, l.background_color), o.op, o.state
      FROM labels AS l
      LEFT JOIN label_overlay AS o ON o.account_id = l.account_id AND o.label_id = l.id
     WHERE o.op IS NULL OR o.op <> 'delete'
    UNION ALL
    SELECT o.account_id, o.label_id, o.name, 'user', 'show', 'labelShow', o.text_color, o.background_color, o.op, o.state
      FROM label_overlay AS o
     WHERE o.op IN ('create', 'rename')   -- a rename: of a label created here, not listed yet
       AND NOT EXISTS (SELECT 1 FROM labels AS l WHERE l.account_id = o.account_id AND l.id = o.label_id)
;
CREATE INDEX drafts_by_message ON drafts (account_id, gmail_id);
CREATE UNIQUE INDEX outbox_by_message_id ON outbox (account_id, message_id, kind) WHERE state <> 'cancelled';
CREATE VIEW fts_content (rowid, subject, sender, recipients, body) AS
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(b.text, m.snippet))
      FROM messages AS m LEFT JOIN message_bodies AS b ON b.message_id = m.id;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    VALUES (NEW.id, hudson_indexed_v1(NEW.subject), hudson_indexed_v1(NEW.sender), hudson_indexed_v1(coalesce(NEW.to_header, '') || ' ' || coalesce(NEW.cc_header, '') || ' ' || coalesce(NEW.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = NEW.id), NEW.snippet)));
END;
CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    VALUES ('delete', OLD.id, hudson_indexed_v1(OLD.subject), hudson_indexed_v1(OLD.sender), hudson_indexed_v1(coalesce(OLD.to_header, '') || ' ' || coalesce(OLD.cc_header, '') || ' ' || coalesce(OLD.bcc_header, '')), hudson_indexed_v1(coalesce((SELECT text FROM message_bodies WHERE message_id = OLD.id), OLD.snippet)));
END;
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
CREATE TRIGGER message_bodies_fts_insert AFTER INSERT ON message_bodies BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
      FROM messages AS m WHERE m.id = NEW.message_id;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(NEW.text, m.snippet))
      FROM messages AS m WHERE m.id = NEW.message_id;
END;
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
CREATE TRIGGER message_bodies_fts_delete AFTER DELETE ON message_bodies BEGIN
    INSERT INTO fts_messages (fts_messages, rowid, subject, sender, recipients, body)
    SELECT 'delete', m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(coalesce(OLD.text, m.snippet))
      FROM messages AS m WHERE m.id = OLD.message_id;
    INSERT INTO fts_messages (rowid, subject, sender, recipients, body)
    SELECT m.id, hudson_indexed_v1(m.subject), hudson_indexed_v1(m.sender), hudson_indexed_v1(coalesce(m.to_header, '') || ' ' || coalesce(m.cc_header, '') || ' ' || coalesce(m.bcc_header, '')), hudson_indexed_v1(m.snippet)
      FROM messages AS m WHERE m.id = OLD.message_id;
END;
CREATE INDEX messages_by_size ON messages (size_estimate);
CREATE TRIGGER label_counts_canonical_insert AFTER INSERT ON message_labels
WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = NEW.message_id AND q.label = NEW.label)
BEGIN
    INSERT INTO label_counts (account_id, label, messages)
        SELECT m.account_id, NEW.label, 1 FROM messages AS m WHERE m.id = NEW.message_id
        ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + 1;
END;
CREATE TRIGGER label_counts_canonical_delete AFTER DELETE ON message_labels
WHEN NOT EXISTS (SELECT 1 FROM mutation_queue AS q WHERE q.message_id = OLD.message_id AND q.label = OLD.label)
BEGIN
    UPDATE label_counts SET messages = messages - 1
     WHERE label = OLD.label AND account_id = (SELECT m.account_id FROM messages AS m WHERE m.id = OLD.message_id);
END;
CREATE TRIGGER label_counts_queue_delete AFTER DELETE ON mutation_queue
WHEN EXISTS (SELECT 1 FROM messages AS m WHERE m.id = OLD.message_id)
 AND (OLD.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                    WHERE ml.message_id = OLD.message_id AND ml.label = OLD.label)
BEGIN
    UPDATE label_counts SET messages = messages - CASE OLD.op WHEN 'add' THEN 1 ELSE -1 END
     WHERE account_id = OLD.account_id AND label = OLD.label;
END;
CREATE TRIGGER label_counts_queue_update AFTER UPDATE OF op, label, message_id ON mutation_queue
WHEN OLD.op IS NOT NEW.op OR OLD.label IS NOT NEW.label OR OLD.message_id IS NOT NEW.message_id
BEGIN
    UPDATE label_counts SET messages = messages - CASE OLD.op WHEN 'add' THEN 1 ELSE -1 END
     WHERE account_id = OLD.account_id AND label = OLD.label
       AND EXISTS (SELECT 1 FROM messages AS m WHERE m.id = OLD.message_id)
       AND (OLD.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                          WHERE ml.message_id = OLD.message_id AND ml.label = OLD.label);
    INSERT INTO label_counts (account_id, label, messages)
        SELECT NEW.account_id, NEW.label, CASE NEW.op WHEN 'add' THEN 1 ELSE -1 END
         WHERE EXISTS (SELECT 1 FROM messages AS m WHERE m.id = NEW.message_id)
           AND (NEW.op = 'add') = NOT EXISTS (SELECT 1 FROM message_labels AS ml
                                              WHERE ml.message_id = NEW.message_id AND ml.label = NEW.label)
        ON CONFLICT (account_id, label) DO UPDATE SET messages = messages + excluded.messages;
END;
CREATE TRIGGER label_counts_message_delete BEFORE DELETE ON messages BEGIN
    UPDATE label_counts SET messages = messages - 1
     WHERE account_id = OLD.account_id
       AND label IN (SELECT el.label FROM effective_labels AS el WHERE el.message_id = OLD.id);
END;
PRAGMA writable_schema=OFF;
COMMIT;
