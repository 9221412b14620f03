/*!
 Migration 021_queue_counts_kept_by_enqueue:
 The message count a new queue row changes is added up by its one writer
 (MutationQueue.enqueue, which has read the canonical row already) and written once
 per label, not by a trigger per row that read the canonical row again and upserted
 the count: that trigger was half of what queueing a change cost (docs/performance.md).
 Deleted and changed queue rows keep their triggers: they have many writers.
 */
extension Schema {
    static let queueCountsKeptByEnqueue = """
    DROP TRIGGER label_counts_queue_insert;
    """
}
