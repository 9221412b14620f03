/*!
 Migration 022_inbox_listed_from_thread_labels:
 The inbox is read as the page of the INBOX label, from `thread_labels`
 (Reads.inboxThreads), like every other label. The two partial indexes that listed
 inbox threads apart (migration 007) held the same rows; keeping them cost each
 archived thread a delete in both.
 */
extension Schema {
    static let inboxListedFromThreadLabels = """
    DROP INDEX thread_rollup_inbox;
    DROP INDEX thread_rollup_inbox_all;
    """
}
