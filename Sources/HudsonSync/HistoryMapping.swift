/*!
 Gmail history records → `HistoryChange` values, in order (gmail-api.md §2.9). The
 typed arrays are used, not `messages` (Google recommends the typed fields); the
 `labelIds` next to `message` are the labels that changed.

 A record whose id is missing or not a positive integer cannot be version-guarded, and a
 record part of which could not be read cannot be applied whole, so their changes are not
 applied as such; but refusing the page would stop history polling for
 the account for as long as Gmail serves that record (issue 17 §0). Instead every message
 it names is fetched again: a snapshot carries its own history id and goes through the
 version guard, and a 404 tombstones a message the record deleted.
 */
import HudsonGmail
import HudsonStore

public enum HistoryMapping {
    /// A page's records, mapped.
    public struct Mapped: Equatable, Sendable {
        /// The changes of the records with a usable id, in order.
        public var changes: [HistoryChange] = []
        /// Messages named by records without a usable id: to be fetched again.
        public var refetch: [String] = []
        /// The highest usable record id: everything up to it is on this page or before.
        public var newestRecordID: Int64?
    }

    public static func map(_ records: [HistoryRecord]) -> Mapped {
        var mapped = Mapped()
        for record in records {
            let usableID = try? parseHistoryID(record.id)
            if let usableID { mapped.newestRecordID = max(mapped.newestRecordID ?? 0, usableID) }
            guard let historyID = usableID, !record.isDamaged else {
                mapped.refetch += messageIDs(of: record).filter { !mapped.refetch.contains($0) }
                continue
            }
            for added in record.messagesAdded {
                guard let message = added.message, !message.id.isEmpty else { continue }
                mapped.changes.append(.messageAdded(messageID: message.id, threadID: message.threadId ?? message.id,
                                                    historyID: historyID))
            }
            for change in record.labelsAdded where !change.labelIds.isEmpty {
                guard let message = change.message, !message.id.isEmpty else { continue }
                mapped.changes.append(.labelsAdded(
                    messageID: message.id, threadID: message.threadId ?? message.id, labelIDs: change.labelIds, historyID: historyID))
            }
            for change in record.labelsRemoved where !change.labelIds.isEmpty {
                guard let message = change.message, !message.id.isEmpty else { continue }
                mapped.changes.append(.labelsRemoved(
                    messageID: message.id, threadID: message.threadId ?? message.id, labelIDs: change.labelIds, historyID: historyID))
            }
            for deleted in record.messagesDeleted {
                guard let message = deleted.message, !message.id.isEmpty else { continue }
                mapped.changes.append(.messageDeleted(messageID: message.id, historyID: historyID))
            }
        }
        return mapped
    }

    /// Every message a record names, in its typed fields and in `messages`.
    static func messageIDs(of record: HistoryRecord) -> [String] {
        var ids: [String] = []
        func add(_ id: String?) {
            if let id, !id.isEmpty, !ids.contains(id) { ids.append(id) }
        }
        record.messagesAdded.forEach { add($0.message?.id) }
        record.labelsAdded.forEach { add($0.message?.id) }
        record.labelsRemoved.forEach { add($0.message?.id) }
        record.messagesDeleted.forEach { add($0.message?.id) }
        record.messages.forEach { add($0.id) }
        record.damagedMessageIDs.forEach { add($0) }
        return ids
    }
}
