/*!
 `hd-ls --changed-since SEQ [--follow]`: the change sequence as records. With
 `--follow`, after what changed since SEQ, each change as another process commits it,
 until interrupted or until the reader of standard output goes away (issue 23 §3:
 `hd-sync --watch` plus this is "tell me of new mail" in a pipeline).
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

public enum ChangeFeed {
    /// Changes are read this many at a time while following; each read is written out
    /// at once.
    static let page = 1000

    /// Writes the changes after `since` (at most `limit`), and returns the point to
    /// continue from: the last change written when `limit` cut the list, so the next run
    /// picks up the rest; else the newest point of the store.
    public static func list(store: Store, since: Int64, accountID: Int64?, limit: Int, sink: any Sink) throws -> Int64 {
        let names = try LabelNames(store: store)
        let current = try store.currentSequence()
        var listed = 0, last = since
        try store.forEachChange(since: since, accountID: accountID, limit: limit) { change in
            try sink.emit(ChangeLine(change, labels: names))
            listed += 1
            last = change.seq
        }
        try sink.finish()
        return listed == limit ? last : max(current, since)
    }

    /// Writes every change after `since` (nil: from the store's newest point, as `tail
    /// -f` starts at the end), then each new one as it is committed. Returns when the
    /// reader of `output` goes away.
    public static func follow(store: Store, since: Int64?, accountID: Int64?, sink: any Sink, output: OutputStream) throws {
        // The watch starts before the first read, so a commit between the two wakes it.
        let watch = try StoreWatch(storePath: store.path)
        var last = try since ?? store.currentSequence()
        var names = try LabelNames(store: store)
        while true {
            var read = page
            while read == page {
                read = 0
                try store.forEachChange(since: last, accountID: accountID, limit: page) { change in
                    // An account added while following: its name is read again.
                    if names.email(change.accountID).isEmpty { names = try LabelNames(store: store) }
                    try sink.emit(ChangeLine(change, labels: names))
                    read += 1
                    last = change.seq
                }
            }
            try sink.finish()
            if watch.wait(hangUpOf: [output.fd]) == .hangUp { return }
        }
    }
}
