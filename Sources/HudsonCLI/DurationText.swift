/*!
 Durations as a progress line shows them.
 */

extension Duration {
    /// Milliseconds with one decimal: "23.4 ms".
    public var millisecondsText: String {
        let (seconds, attoseconds) = components
        // A tenth of a millisecond is 10^14 attoseconds.
        let tenths = max(0, seconds * 10_000 + attoseconds / 100_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}
