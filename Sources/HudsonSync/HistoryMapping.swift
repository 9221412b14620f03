/*!
 Gmail history records → `HistoryChange` values, in order (gmail-api.md §2.9). The
 typed arrays are used, not `messages` (Google recommends the typed fields); the
 `labelIds` next to `message` are the labels that changed. A record whose id is not a
 positive integer fails the page, because its changes cannot be version-guarded.
 */
import HudsonGmail
import HudsonStore

public enum HistoryMapping {
    public static func changes(from records: [HistoryRecord]) throws -> [HistoryChange] {
        var changes: [HistoryChange] = []
        for record in records {
            let historyID = try parseHistoryID(record.id)
            for added in record.messagesAdded {
                guard let message = added.message, !message.id.isEmpty else { continue }
                changes.append(.messageAdded(messageID: message.id, threadID: message.threadId ?? message.id, historyID: historyID))
            }
            for change in record.labelsAdded where !change.labelIds.isEmpty {
                guard let message = change.message, !message.id.isEmpty else { continue }
                changes.append(.labelsAdded(
                    messageID: message.id, threadID: message.threadId ?? message.id, labelIDs: change.labelIds, historyID: historyID))
            }
            for change in record.labelsRemoved where !change.labelIds.isEmpty {
                guard let message = change.message, !message.id.isEmpty else { continue }
                changes.append(.labelsRemoved(
                    messageID: message.id, threadID: message.threadId ?? message.id, labelIDs: change.labelIds, historyID: historyID))
            }
            for deleted in record.messagesDeleted {
                guard let message = deleted.message, !message.id.isEmpty else { continue }
                changes.append(.messageDeleted(messageID: message.id, historyID: historyID))
            }
        }
        return changes
    }
}
