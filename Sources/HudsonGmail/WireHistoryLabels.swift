/*!
 The Codable shapes of Gmail's history and label resources and the JSON request bodies Hudson
 sends (gmail-api.md §2.5–§2.10). As with the message shapes, every response field is optional
 or defaulted: an empty history poll is just `{"historyId": "…"}` (§9.3), and a page may carry
 a `nextPageToken` with no `history` at all (§9.1), which must read as an empty page, not fail.
 Every field is validated as it is decoded (WireValidation.swift).
 */

import Foundation
import GmailIDShape

/// `ListHistoryResponse` (§2.9).
///
/// Read strictly (issue 37 §2): a page whose fields have the wrong types, whose `historyId`
/// is not a history id, or whose records carry ids that are not, or that come after the
/// page's own `historyId` (the mailbox's current one, which no record can pass), cannot be
/// read as documented and fails to decode; the poll then fails and moves nothing. Only an
/// id of a wrong shape is set aside without failing the page (WireValidation.swift).
public struct HistoryPage: Codable, Sendable, Equatable {
    /// Chronological; empty when Google left the key out (§9.1, §9.3).
    public var history: [HistoryRecord]
    public var nextPageToken: String?
    /// The mailbox's *current* history id, repeated on every page: commit it only after the
    /// last page has been applied (§9.9). Validated when present; sync requires it.
    public var historyId: String?

    public init(history: [HistoryRecord] = [], nextPageToken: String? = nil, historyId: String? = nil) {
        self.history = history
        self.nextPageToken = nextPageToken
        self.historyId = historyId
    }

    enum CodingKeys: String, CodingKey { case history, nextPageToken, historyId }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        history = try c.decodeIfPresent([HistoryRecord].self, forKey: .history) ?? []
        nextPageToken = try c.decodePageToken(.nextPageToken)
        historyId = try c.decodeHistoryIDIfPresent(.historyId)
        if let current = WireInteger.unsigned(historyId) {
            for (index, record) in history.enumerated() where (record.idValue ?? 0) > current {
                throw WireRange.error(c.codingPath + [CodingKeys.history, WireKey(intValue: index), HistoryRecord.CodingKeys.id])
            }
        }
    }

    /// `historyId` as a number, or nil when absent or not a plain decimal.
    public var historyIDValue: UInt64? { WireInteger.unsigned(historyId) }

    /// Every id of a wrong shape the page's records named, set aside (never requested).
    public var unusableIDs: [String] { history.flatMap(\.unusableIDs) }
}

/// One `History` record. Typed lists are preferred over `messages`, which may duplicate them.
public struct HistoryRecord: Codable, Sendable, Equatable {
    /// Required, and a history id (WireValidation.swift): a record that cannot be
    /// version-guarded cannot be applied, and must not be guessed at.
    public var id: String?
    public var messages: [GmailMessage]
    public var messagesAdded: [HistoryMessageChange]
    /// Permanent deletions only; trashing arrives as `labelsAdded` with `TRASH` (§2.8).
    public var messagesDeleted: [HistoryMessageChange]
    public var labelsAdded: [HistoryLabelChange]
    public var labelsRemoved: [HistoryLabelChange]
    /// A change of the record names a message by a usable id but carries another id of a
    /// wrong shape (its thread's, a label's): the record cannot be applied as such, and its
    /// messages must be fetched again, which gives Gmail's state whole.
    public var isDamaged = false
    /// The ids of the messages such changes name.
    public var damagedMessageIDs: [String] = []
    /// Message ids of a wrong shape: their changes are set aside, never requested.
    public var unusableIDs: [String] = []

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
        guard let id = try c.decodeHistoryIDIfPresent(.id) else {
            throw DecodingError.keyNotFound(CodingKeys.id, DecodingError.Context(codingPath: c.codingPath, debugDescription: "no id"))
        }
        self.id = id
        var damagedIDs: [String] = []
        var unusable: [String] = []
        func list<T: Decodable>(_ key: CodingKeys) throws -> [T] {
            guard let elements = try c.decodeIfPresent([HistoryElement<T>].self, forKey: key) else { return [] }
            for element in elements {
                if let id = element.refetch, !damagedIDs.contains(id) { damagedIDs.append(id) }
                if let id = element.unusable { unusable.append(id) }
            }
            return elements.compactMap(\.value)
        }
        messages = try list(.messages)
        messagesAdded = try list(.messagesAdded)
        messagesDeleted = try list(.messagesDeleted)
        labelsAdded = try list(.labelsAdded)
        labelsRemoved = try list(.labelsRemoved)
        isDamaged = !damagedIDs.isEmpty
        damagedMessageIDs = damagedIDs
        unusableIDs = unusable
    }

    /// The record id as a number, or nil when absent or not a plain decimal.
    public var idValue: UInt64? { WireInteger.unsigned(id) }
}

/// One element of a history list: the element; or, when it names its message by an id of a
/// wrong shape, that id (the change is set aside); or, when its message id is usable but
/// another id in it is not, the message id, so that the message is fetched again. Faults of
/// type or range are not caught: they make the page unreadable.
struct HistoryElement<T: Decodable>: Decodable {
    var value: T?
    var refetch: String?
    var unusable: String?

    private struct Reference: Decodable {
        struct Message: Decodable { var id: String }
        var message: Message?
        var id: String?
    }

    init(from decoder: any Decoder) throws {
        do {
            value = try T(from: decoder)
        } catch let error as UnusableID {
            if error.kind == .message {
                unusable = error.id
            } else {
                // The message's own id was read before any other id, so it is a usable one.
                let reference = try Reference(from: decoder)
                refetch = reference.message?.id ?? reference.id
            }
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
        labelIds = try c.decodeLabelIDs(.labelIds)
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
    enum CodingKeys: String, CodingKey {
        case id, name, type, messageListVisibility, labelListVisibility, messagesTotal, messagesUnread, threadsTotal,
             threadsUnread, color
    }

    /// An `id` of another shape than a Gmail label id's is `UnusableID` (a label id goes into
    /// paths: labels.patch, labels.delete).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(.id, .label)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        messageListVisibility = try c.decodeIfPresent(String.self, forKey: .messageListVisibility)
        labelListVisibility = try c.decodeIfPresent(String.self, forKey: .labelListVisibility)
        messagesTotal = try c.decodeCountIfPresent(.messagesTotal)
        messagesUnread = try c.decodeCountIfPresent(.messagesUnread)
        threadsTotal = try c.decodeCountIfPresent(.threadsTotal)
        threadsUnread = try c.decodeCountIfPresent(.threadsUnread)
        color = try c.decodeIfPresent(LabelColor.self, forKey: .color)
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

/// `ListLabelsResponse`: `{"labels": [...]}`, no paging. A label whose id has not a Gmail
/// label id's shape is left out (it could never be named in a request).
struct LabelList: Decodable {
    var labels: [GmailLabel]
    var unusableIDs: [String]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        (labels, unusableIDs) = [GmailLabel].kept(try c.decodeIfPresent([Skippable<GmailLabel>].self, forKey: .labels))
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
