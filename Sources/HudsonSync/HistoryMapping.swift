/*!
 Gmail history records → `HistoryChange` values, in order (gmail-api.md §2.9). The
 typed arrays are used, not `messages` (Google recommends the typed fields); the
 `labelIds` next to `message` are the labels that changed.

 HudsonGmail has read the page strictly (issue 37 §2): every record has a history id no
 later than the page's, and an id of a wrong shape has been set aside. Two cases remain in
 which a record's changes are not applied as such, and every message it names is fetched
 again instead — a snapshot carries its own history id and goes through the version guard,
 and a 404 tombstones a message the record deleted:
 - a record Gmail's profile could not vouch for (`trusted` false: getProfile did not
   answer, so no record id can be checked against the mailbox's), whose id could poison
   the version guard of every message it names;
 - a record part of which names its message by a usable id but carries another id of a
   wrong shape (a label's, a thread's): it cannot be applied whole.
 A record without a usable id (only a scripted server builds one) is treated the same.
 */
import HudsonGmail
import HudsonStore

public enum HistoryMapping {
    /// A page's records, mapped.
    public struct Mapped: Equatable, Sendable {
        /// The changes of the records applied as such, in order.
        public var changes: [HistoryChange] = []
        /// Messages named by the other records: to be fetched again.
        public var refetch: [String] = []
    }

    /// - Parameter trusted: whether the records' ids are vouched for (see the file's comment).
    public static func map(_ records: [HistoryRecord], trusted: Bool = true) -> Mapped {
        var mapped = Mapped()
        for record in records {
            guard trusted, let historyID = try? parseHistoryID(record.id), !record.isDamaged else {
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
