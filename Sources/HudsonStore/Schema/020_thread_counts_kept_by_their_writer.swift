/*!
 Migration 020_thread_counts_kept_by_their_writer:
 The thread columns of `label_counts` (`threads`, `unread_threads`) are kept by the
 code that writes what they count, not by triggers: every `thread_labels` row and
 every rollup row's label list and unread flag is written by ThreadRollup.swift
 (`ThreadLabelChanges`), which adds up what a write does to each label's counts and
 applies it in one statement. A trigger ran a subprogram for each `thread_labels`
 row and each rollup row it saw change, and looked the thread's rollup row up again
 by its id: archiving 1,000 threads of 100,000 messages ran 207 M instructions, 12 M
 of them in these five triggers (issue 19, docs/performance.md). The message counts
 stay with their triggers: the queue and the canonical labels have many writers.
 The counts themselves are right as 016 to 019 left them, and are not touched.
 */
extension Schema {
    static let threadCountsKeptByTheirWriter = """
    DROP TRIGGER label_counts_thread_insert;
    DROP TRIGGER label_counts_thread_delete;
    DROP TRIGGER label_counts_thread_update;
    DROP TRIGGER label_counts_rollup_unread;
    DROP TRIGGER label_counts_rollup_replace;
    """
}
