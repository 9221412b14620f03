/*!
 Migration 015_messages_by_size:
 `larger:` and `smaller:` read every message without it, newest first, until a page
 is found: 58 ms for `larger:1M` at 100,000 messages, where mu answers in 16. With
 the index the few large messages are found at once and sorted.
 */
extension Schema {
    static let messagesBySize = """
    CREATE INDEX messages_by_size ON messages (size_estimate);
    """
}
