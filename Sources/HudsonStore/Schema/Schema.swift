/*!
 The schema, as an append-only list of migrations (local-first-sync.md: "Migrations
 are permanent ... Append-only, no exceptions"). Never edit a shipped entry: add one.
 Every entry is tested from every earlier version (Tests/HudsonStoreTests/Fixtures).
 A migration whose work grows with the mailbox (an index rebuilt, a table derived from
 every message) declares that work as `batches:` (SQLite/BatchedMigration.swift), so a
 killed upgrade at a million messages resumes from its last batch.

 The tables, and who writes them:

 - canonical (server truth, written only by sync): `messages`, `message_labels`,
   `message_addresses`, `message_bodies`, `attachments`, `labels`, `accounts`' cursor,
   and `relist_unconfirmed` (what a re-list after an expired cursor has yet to confirm).
 - overlay (local intent, written only by triage and `hd-labels`): `mutation_queue`,
   `actions`, `action_items`, and `label_overlay` (labels created, renamed or deleted here
   and not yet confirmed by labels.list); `shown_labels` composes it with `labels`.
 - the outbox (written by `hd-send` and the sender): `outbox`, messages on their way to Gmail.
 - sync's bookkeeping of failures: `sync_parked` (messages and bodies Gmail would not
   serve, retried with back-off), `rejected_changes` (label changes Gmail refused) and
   `rejected_label_changes` (label creations, renames and deletions Gmail refused).
 - derived (kept right by every write path, in the same transaction): `thread_rollup`,
   `thread_labels` and the thread counts of `label_counts` (by ThreadRollup.swift, their
   one writer), `fts_messages` and the message counts of `label_counts` (by triggers),
   `message_seq`.
 */
import SQLite

enum Schema {
    /// "HDSN" in ASCII: marks a SQLite file as a Hudson store (`PRAGMA application_id`).
    static let applicationID: Int32 = 0x4844_534E

    static let migrations: [Migration] = [
        Migration("001_initial", initial),
        Migration("002_outbox", outbox),
        Migration("003_message_key_exceptions", messageKeyExceptions),
        Migration("004_relist_unconfirmed", relistUnconfirmed),
        Migration("005_triage_locality", triageLocality),
        Migration("006_rollup_by_recency", rollupByRecency),
        Migration("007_queue_checks_inbox_only", queueChecksInboxOnly),
        Migration("008_faults_recorded", faultsRecorded),
        Migration("009_index_as_shown", indexAsShown),
        Migration("010_trash_and_spam_listed_apart", trashAndSpamListedApart),
        Migration("011_label_objects", labelObjects),
        Migration("012_drafts", drafts),
        Migration("013_index_cjk_bigrams_and_snippets", indexCJKBigramsAndSnippets),
        Migration("014_attachment_has_a_filename", attachmentHasAFilename),
        Migration("015_messages_by_size", messagesBySize),
        Migration("016_label_counts", labelCounts),
        Migration("017_rules_applied", rulesApplied),
        Migration("018_raw_sources", rawSources),
        Migration("019_imports", imports),
        Migration("020_thread_counts_kept_by_their_writer", threadCountsKeptByTheirWriter),
        Migration("021_queue_counts_kept_by_enqueue", queueCountsKeptByEnqueue),
        Migration("022_inbox_listed_from_thread_labels", inboxListedFromThreadLabels),
        Migration("023_triage_rows_cascade_by_trigger", triageRowsCascadeByTrigger),
        Migration("024_rollup_without_message_text", rollupWithoutMessageText),
        Migration("025_draft_edits_checked_before_writing", draftEditsCheckedBeforeWriting),
        Migration("026_import_attempt_history", importAttemptHistory),
        // No 027: no commit ever had one (025, 026 and 028 were numbered side by side), and numbers are never reused.
        Migration("028_attachment_known", attachmentKnown),
        Migration("029_imports_settled_by_the_user", importsSettledByTheUser),
        Migration("030_held_changes", heldChanges),
        Migration("031_export_intakes", exportIntakes),
        Migration("032_thread_by_message_key", threadByMessageKey),
        Migration("033_snoozes", snoozes),
        Migration("034_scheduled_sends", scheduledSends),
        Migration("035_list_headers", listHeaders),
        Migration("036_address_book", addressBook),
        Migration("037_address_book_never_below_zero", addressBookNeverBelowZero),
        Migration("038_list_verdicts_never_cut", listVerdictsNeverCut),
        Migration("039_snooze_moves", snoozeMoves),
    ]

    static let migrator = Migrator(migrations)
}
