/*!
 A remembered answer per key, for work a read repeats on the same few inputs (a From
 header's display name, a label list split and sorted, the names of a label list). It
 holds at most `limit` answers and forgets them all when full: the inputs repeat in
 runs, so starting again costs one computation per key, and memory stays bounded
 however many rows a command streams.
 */
public struct BoundedMemo<Key: Hashable, Value> {
    // Inlinable: the commands stream rows through it from other modules, and an
    // unspecialized generic dictionary costs a hash table's work again per lookup.
    @usableFromInline var answers: [Key: Value] = [:]
    @usableFromInline let limit: Int

    @inlinable public init(limit: Int = 10_000) { self.limit = limit }

    /// The answer for `key`, computed by `make` the first time.
    @inlinable public mutating func value(for key: Key, _ make: () -> Value) -> Value {
        if let answer = answers[key] { return answer }
        let answer = make()
        if answers.count >= limit { answers.removeAll(keepingCapacity: true) }
        answers[key] = answer
        return answer
    }
}
