/*!
 The Codable shapes of Gmail's history and label resources and the JSON request bodies Hudson
 sends (gmail-api.md §2.5–§2.10). As with the message shapes, every response field is optional
 or defaulted: an empty history poll is just `{"historyId": "…"}` (§9.3), and a page may carry
 a `nextPageToken` with no `history` at all (§9.1), which must read as an empty page, not fail.
 */

import Foundation

/// `ListHistoryResponse` (§2.9).
public struct HistoryPage: Codable, Sendable, Equatable {
    /// Chronological; empty when Google left the key out (§9.1, §9.3).
    public var history: [HistoryRecord]
    public var nextPageToken: String?
    /// The mailbox's *current* history id, repeated on every page: commit it only after the
    /// last page has been applied (§9.9).
    public var historyId: String?

    public init(history: [HistoryRecord] = [], nextPageToken: String? = nil, historyId: String? = nil) {
        self.history = history
        self.nextPageToken = nextPageToken
        self.historyId = historyId
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        history = try c.decodeIfPresent([HistoryRecord].self, forKey: .history) ?? []
        nextPageToken = try c.decodeIfPresent(String.self, forKey: .nextPageToken)
        // A history id of the wrong type reads as absent, not as an unreadable page: sync
        // then falls back on the records' own ids, and polling goes on (issue 17 §0).
        historyId = (try? c.decodeIfPresent(String.self, forKey: .historyId)) ?? nil
    }

    /// `historyId` as a number, or nil when absent or not a plain decimal.
    public var historyIDValue: UInt64? { WireInteger.unsigned(historyId) }
}

/// One `History` record. Typed lists are preferred over `messages`, which may duplicate them.
public struct HistoryRecord: Codable, Sendable, Equatable {
    public var id: String?
    public var messages: [GmailMessage]
    public var messagesAdded: [HistoryMessageChange]
    /// Permanent deletions only; trashing arrives as `labelsAdded` with `TRASH` (§2.8).
    public var messagesDeleted: [HistoryMessageChange]
    public var labelsAdded: [HistoryLabelChange]
    public var labelsRemoved: [HistoryLabelChange]
    /// Part of the record could not be read (an element or a list of the wrong shape):
    /// its changes cannot all be applied as such, and its messages must be fetched again.
    public var isDamaged = false
    /// The ids of messages named by elements that could not be read otherwise.
    public var damagedMessageIDs: [String] = []

    enum CodingKeys: String, CodingKey {
        case id, messages, messagesAdded, messagesDeleted, labelsAdded, labelsRemoved
    }

    public init(
        id: String? = nil, messages: [GmailMessage] = [], messagesAdded: [HistoryMessageChange] = [],
        messagesDeleted: [HistoryMessageChange] = [], labelsAdded: [HistoryLabelChange] = [],
        labelsRemoved: [HistoryLabelChange] = []
    ) {
        self.id = id
        self.messages = messages
        self.messagesAdded = messagesAdded
        self.messagesDeleted = messagesDeleted
        self.labelsAdded = labelsAdded
        self.labelsRemoved = labelsRemoved
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // An id of the wrong type reads as absent: the record's messages are then fetched
        // again rather than the page refused (HistoryMapping).
        id = (try? c.decodeIfPresent(String.self, forKey: .id)) ?? nil
        messages = (try? c.decodeIfPresent([GmailMessage].self, forKey: .messages)) ?? []
        // Element by element: one change Gmail sent in an unexpected shape must not make the
        // page unreadable, which would stop history polling for as long as Gmail serves it.
        var damaged = false
        var damagedIDs: [String] = []
        func list<T: Decodable>(_ key: CodingKeys) -> [T] {
            guard c.contains(key) else { return [] }
            guard let elements = try? c.decode([Lenient<T>].self, forKey: key) else {
                damaged = true
                return []
            }
            for element in elements where element.value == nil {
                damaged = true
                if let id = element.messageID { damagedIDs.append(id) }
            }
            return elements.compactMap(\.value)
        }
        messagesAdded = list(.messagesAdded)
        messagesDeleted = list(.messagesDeleted)
        labelsAdded = list(.labelsAdded)
        labelsRemoved = list(.labelsRemoved)
        isDamaged = damaged
        damagedMessageIDs = damagedIDs
    }

    /// The record id as a number, or nil when absent or not a plain decimal.
    public var idValue: UInt64? { WireInteger.unsigned(id) }
}

/// One element of a history list: the element, or, when it does not decode, the id of
/// the message it names if even that can be read.
struct Lenient<T: Decodable>: Decodable {
    var value: T?
    var messageID: String?

    private struct Reference: Decodable {
        struct Message: Decodable { var id: String? }
        var message: Message?
    }

    init(from decoder: any Decoder) throws {
        if let value = try? T(from: decoder) {
            self.value = value
        } else {
            messageID = (try? Reference(from: decoder))?.message?.id.flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}

/// `HistoryMessageAdded` / `HistoryMessageDeleted`: `{message}`.
public struct HistoryMessageChange: Codable, Sendable, Equatable {
    /// Typically only `id` and `threadId` are populated.
    public var message: GmailMessage?

    public init(message: GmailMessage? = nil) {
        self.message = message
    }
}

/// `HistoryLabelAdded` / `HistoryLabelRemoved`: `{message, labelIds}`.
public struct HistoryLabelChange: Codable, Sendable, Equatable {
    public var message: GmailMessage?
    /// The labels that changed (not the message's whole label set).
    public var labelIds: [String]

    public init(message: GmailMessage? = nil, labelIds: [String] = []) {
        self.message = message
        self.labelIds = labelIds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        message = try c.decodeIfPresent(GmailMessage.self, forKey: .message)
        labelIds = try c.decodeIfPresent([String].self, forKey: .labelIds) ?? []
    }
}

/// A Gmail `Label` (§2.10). `labels.list` entries carry no counts; only `labels.get` does.
public struct GmailLabel: Codable, Sendable, Equatable {
    public var id: String
    public var name: String?
    /// `system` or `user`.
    public var type: String?
    /// `show` or `hide`.
    public var messageListVisibility: String?
    /// `labelShow`, `labelShowIfUnread` or `labelHide`.
    public var labelListVisibility: String?
    public var messagesTotal: Int?
    public var messagesUnread: Int?
    public var threadsTotal: Int?
    public var threadsUnread: Int?
    public var color: LabelColor?

    public init(
        id: String, name: String? = nil, type: String? = nil, messageListVisibility: String? = nil,
        labelListVisibility: String? = nil, messagesTotal: Int? = nil, messagesUnread: Int? = nil,
        threadsTotal: Int? = nil, threadsUnread: Int? = nil, color: LabelColor? = nil
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.messageListVisibility = messageListVisibility
        self.labelListVisibility = labelListVisibility
        self.messagesTotal = messagesTotal
        self.messagesUnread = messagesUnread
        self.threadsTotal = threadsTotal
        self.threadsUnread = threadsUnread
        self.color = color
    }
}

/// `LabelColor`: values come from a fixed palette.
public struct LabelColor: Codable, Sendable, Equatable {
    public var textColor: String?
    public var backgroundColor: String?

    public init(textColor: String? = nil, backgroundColor: String? = nil) {
        self.textColor = textColor
        self.backgroundColor = backgroundColor
    }
}

/// `ListLabelsResponse`: `{"labels": [...]}`, no paging.
struct LabelList: Decodable {
    var labels: [GmailLabel]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        labels = try c.decodeIfPresent([GmailLabel].self, forKey: .labels) ?? []
    }

    private enum CodingKeys: String, CodingKey { case labels }
}

/// The body of `messages.modify` (§2.5): at most 100 ids per list.
public struct ModifyMessageRequest: Codable, Sendable, Equatable {
    public var addLabelIds: [String]
    public var removeLabelIds: [String]

    public init(addLabelIds: [String], removeLabelIds: [String]) {
        self.addLabelIds = addLabelIds
        self.removeLabelIds = removeLabelIds
    }
}

/// The body of `messages.batchModify` (§2.6): at most 1000 `ids`.
public struct BatchModifyMessagesRequest: Codable, Sendable, Equatable {
    public var ids: [String]
    public var addLabelIds: [String]
    public var removeLabelIds: [String]

    public init(ids: [String], addLabelIds: [String], removeLabelIds: [String]) {
        self.ids = ids
        self.addLabelIds = addLabelIds
        self.removeLabelIds = removeLabelIds
    }
}

/// The body of `messages.send` (§2.7): `raw` is the base64url RFC 2822 message.
public struct SendMessageRequest: Codable, Sendable, Equatable {
    public var raw: String
    /// Joins an existing thread only when References/In-Reply-To and Subject match too.
    public var threadId: String?

    public init(raw: String, threadId: String? = nil) {
        self.raw = raw
        self.threadId = threadId
    }
}

/// The body of `labels.create` (§2.10).
public struct CreateLabelRequest: Codable, Sendable, Equatable {
    public var name: String
    public var labelListVisibility: String
    public var messageListVisibility: String
    /// Left out when nil; both members from Gmail's palette when given.
    public var color: LabelColor?

    public init(name: String, labelListVisibility: String = "labelShow", messageListVisibility: String = "show",
                color: LabelColor? = nil) {
        self.name = name
        self.labelListVisibility = labelListVisibility
        self.messageListVisibility = messageListVisibility
        self.color = color
    }
}

/// The body of `labels.patch` (§2.10): only the fields to change (nil ones are left out).
public struct PatchLabelRequest: Codable, Sendable, Equatable {
    public var name: String?
    public var color: LabelColor?

    public init(name: String? = nil, color: LabelColor? = nil) {
        self.name = name
        self.color = color
    }
}
