/*!
 The Codable shapes of Gmail's message resources (gmail-api.md §2.1–§2.4), named exactly as
 the discovery document names them. Google leaves out empty and default fields instead of
 sending `null` or `[]` (§1 "JSON encoding rules"), so every field decodes as optional or with
 an empty default; only the identity key `id` of a message is required, because a message
 without one cannot be stored and is a wrong-shape response. `int64`/`uint64` values arrive as
 JSON strings and stay strings here; the `…Value`/`…Milliseconds` accessors parse them strictly.
 Every field is validated as it is decoded (WireValidation.swift): types, ranges, and the
 shape of every id.
 */

import Foundation
import GmailIDShape

/// Strict parsing of Google's decimal-string integers (gmail-api.md §1, §5).
///
/// `UInt64("+7")` and `Int64(" 7")`-style leniency would let a malformed id through as a
/// plausible number, and a wrong history cursor silently loses mail (§9.9), so only plain
/// ASCII digits (and, for signed values, one leading `-`) are accepted.
enum WireInteger {
    static func unsigned(_ text: String?) -> UInt64? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }

    static func signed(_ text: String?) -> Int64? {
        guard let text else { return nil }
        let digits = text.hasPrefix("-") ? String(text.dropFirst()) : text
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}

/// `users.getProfile` (gmail-api.md §2.1).
public struct Profile: Codable, Sendable, Equatable {
    public var emailAddress: String?
    public var messagesTotal: Int?
    public var threadsTotal: Int?
    /// The mailbox's current history id, a decimal uint64 string.
    public var historyId: String?

    public init(emailAddress: String? = nil, messagesTotal: Int? = nil, threadsTotal: Int? = nil, historyId: String? = nil) {
        self.emailAddress = emailAddress
        self.messagesTotal = messagesTotal
        self.threadsTotal = threadsTotal
        self.historyId = historyId
    }

    /// `historyId` as a number, or nil when absent or not a plain decimal.
    public var historyIDValue: UInt64? { WireInteger.unsigned(historyId) }

    enum CodingKeys: String, CodingKey { case emailAddress, messagesTotal, threadsTotal, historyId }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        emailAddress = try c.decodeIfPresent(String.self, forKey: .emailAddress)
        messagesTotal = try c.decodeCountIfPresent(.messagesTotal)
        threadsTotal = try c.decodeCountIfPresent(.threadsTotal)
        historyId = try c.decodeHistoryIDIfPresent(.historyId)
    }
}

/// One entry of a `messages.list` page: only `id` and `threadId` are populated (§2.2).
public struct MessageRef: Codable, Sendable, Equatable {
    public var id: String
    public var threadId: String?

    public init(id: String, threadId: String? = nil) {
        self.id = id
        self.threadId = threadId
    }

    enum CodingKeys: String, CodingKey { case id, threadId }

    /// An `id` of another shape than a Gmail message id's is `UnusableID` (the page skips
    /// the entry). `threadId` is not used (the message's own answer gives its thread), so
    /// one of a wrong shape reads as absent.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(.id, .message)
        threadId = try c.decodeIfPresent(String.self, forKey: .threadId).flatMap { GmailID.isWellFormed($0, as: .thread) ? $0 : nil }
    }
}

/// `ListMessagesResponse` (§2.2). An empty mailbox is `{"resultSizeEstimate": 0}` with no `messages`.
public struct MessageListPage: Codable, Sendable, Equatable {
    public var messages: [MessageRef]
    /// Absent on the last page: stop paging then (never loop on `resultSizeEstimate`).
    public var nextPageToken: String?
    public var resultSizeEstimate: Int?
    /// Entries whose id has not a Gmail message id's shape: left out of `messages`, never
    /// requested (WireValidation.swift).
    public var unusableIDs: [String] = []

    public init(messages: [MessageRef] = [], nextPageToken: String? = nil, resultSizeEstimate: Int? = nil,
                unusableIDs: [String] = []) {
        self.messages = messages
        self.nextPageToken = nextPageToken
        self.resultSizeEstimate = resultSizeEstimate
        self.unusableIDs = unusableIDs
    }

    enum CodingKeys: String, CodingKey { case messages, nextPageToken, resultSizeEstimate }

    /// A message listed twice is kept once, where it first appears.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let (refs, unusable) = [MessageRef].kept(try c.decodeIfPresent([Skippable<MessageRef>].self, forKey: .messages))
        var seen = Set<String>()
        messages = refs.filter { seen.insert($0.id).inserted }
        unusableIDs = unusable
        nextPageToken = try c.decodePageToken(.nextPageToken)
        resultSizeEstimate = try c.decodeCountIfPresent(.resultSizeEstimate)
    }
}

/// A Gmail `Message` in any of the four formats (§2.3): `minimal` has no `payload`, `raw`
/// adds `raw`, `metadata` adds header-only `payload`, `full` adds the parsed MIME tree.
/// The minimal form returned by modify/trash/send may carry only `id`, `threadId`, `labelIds`.
public struct GmailMessage: Codable, Sendable, Equatable {
    public var id: String
    public var threadId: String?
    public var labelIds: [String]
    /// Contains HTML character references (`&amp;`) as Gmail sends it.
    public var snippet: String?
    /// The last history record that modified this message, a decimal uint64 string.
    public var historyId: String?
    /// Epoch milliseconds as a decimal int64 string; Hudson's ordering key (§8).
    public var internalDate: String?
    public var sizeEstimate: Int?
    public var payload: MessagePart?
    /// The whole RFC 2822 message, base64url with or without padding (§8, §9.11).
    public var raw: String?

    public init(
        id: String, threadId: String? = nil, labelIds: [String] = [], snippet: String? = nil,
        historyId: String? = nil, internalDate: String? = nil, sizeEstimate: Int? = nil,
        payload: MessagePart? = nil, raw: String? = nil
    ) {
        self.id = id
        self.threadId = threadId
        self.labelIds = labelIds
        self.snippet = snippet
        self.historyId = historyId
        self.internalDate = internalDate
        self.sizeEstimate = sizeEstimate
        self.payload = payload
        self.raw = raw
    }

    enum CodingKeys: String, CodingKey {
        case id, threadId, labelIds, snippet, historyId, internalDate, sizeEstimate, payload, raw
    }

    /// Ids of another shape than Gmail's (the message's, its thread's, a label's, an
    /// attachment's in the payload) are `UnusableID`; a label listed twice counts once.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(.id, .message)
        threadId = try c.decodeIDIfPresent(.threadId, .thread)
        labelIds = try c.decodeLabelIDs(.labelIds)
        snippet = try c.decodeIfPresent(String.self, forKey: .snippet)
        historyId = try c.decodeHistoryIDIfPresent(.historyId)
        internalDate = try c.decodeInt64StringIfPresent(.internalDate, in: WireRange.internalDate)
        sizeEstimate = try c.decodeCountIfPresent(.sizeEstimate)
        payload = try c.decodeIfPresent(MessagePart.self, forKey: .payload)
        raw = try c.decodeIfPresent(String.self, forKey: .raw)
    }

    /// `historyId` as a number, or nil when absent or not a plain decimal.
    public var historyIDValue: UInt64? { WireInteger.unsigned(historyId) }

    /// `internalDate` as epoch milliseconds, or nil when absent or not a plain decimal.
    public var internalDateMilliseconds: Int64? { WireInteger.signed(internalDate) }

    /// The first top-level header with this name, matched case-insensitively (§8 "Headers").
    public func header(named name: String) -> String? { payload?.header(named: name) }
}

/// One node of the MIME tree (`MessagePart`, §2.3). `parts` is non-empty only for `multipart/*`.
public struct MessagePart: Codable, Sendable, Equatable {
    /// Opaque; "" for the root by observed convention.
    public var partId: String?
    public var mimeType: String?
    /// Non-empty only for attachments.
    public var filename: String?
    /// In message order, with duplicates (several `Received`).
    public var headers: [MessagePartHeader]
    public var body: MessagePartBody?
    public var parts: [MessagePart]

    public init(
        partId: String? = nil, mimeType: String? = nil, filename: String? = nil,
        headers: [MessagePartHeader] = [], body: MessagePartBody? = nil, parts: [MessagePart] = []
    ) {
        self.partId = partId
        self.mimeType = mimeType
        self.filename = filename
        self.headers = headers
        self.body = body
        self.parts = parts
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        partId = try c.decodeIfPresent(String.self, forKey: .partId)
        mimeType = try c.decodeIfPresent(String.self, forKey: .mimeType)
        filename = try c.decodeIfPresent(String.self, forKey: .filename)
        headers = try c.decodeIfPresent([MessagePartHeader].self, forKey: .headers) ?? []
        body = try c.decodeIfPresent(MessagePartBody.self, forKey: .body)
        parts = try c.decodeIfPresent([MessagePart].self, forKey: .parts) ?? []
    }

    /// The first header of this part with this name, matched case-insensitively.
    public func header(named name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Header names are ASCII (RFC 5322 §2.2), compared byte by byte ignoring ASCII case;
    /// Foundation's caseInsensitiveCompare, kept for anything else, was a twentieth of
    /// hydration.
    static func sameName(_ a: String, _ b: String) -> Bool {
        var ascii = true
        let equal = a.utf8.elementsEqual(b.utf8) { x, y in
            if x >= 0x80 || y >= 0x80 { ascii = false }
            return x == y || (x | 0x20 == y | 0x20 && (0x61...0x7A).contains(x | 0x20))
        }
        if ascii { return equal }
        return a.caseInsensitiveCompare(b) == .orderedSame
    }
}

/// A `{name, value}` header pair. An empty value is omitted by Google, so both default to "".
public struct MessagePartHeader: Codable, Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
        value = try c.decodeIfPresent(String.self, forKey: .value) ?? ""
    }
}

/// `MessagePartBody` (§2.3): with `attachmentId` the bytes must be fetched separately.
public struct MessagePartBody: Codable, Sendable, Equatable {
    public var attachmentId: String?
    /// Decoded byte count ("encoding notwithstanding").
    public var size: Int?
    /// base64url, padding inconsistent (§9.11).
    public var data: String?

    public init(attachmentId: String? = nil, size: Int? = nil, data: String? = nil) {
        self.attachmentId = attachmentId
        self.size = size
        self.data = data
    }

    enum CodingKeys: String, CodingKey { case attachmentId, size, data }

    /// An `attachmentId` is put in a request's path later (attachments.get): one of another
    /// shape than Gmail's is `UnusableID` now.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        attachmentId = try c.decodeIDIfPresent(.attachmentId, .attachment)
        size = try c.decodeCountIfPresent(.size)
        data = try c.decodeIfPresent(String.self, forKey: .data)
    }
}

/// The body returned by `messages.attachments.get` (§2.4), a `MessagePartBody` that may echo
/// `attachmentId`. Attachment ids are unstable between fetches; key by (message, partId).
public struct AttachmentBody: Codable, Sendable, Equatable {
    public var attachmentId: String?
    public var size: Int?
    /// base64url, padding inconsistent (§9.11).
    public var data: String?

    public init(attachmentId: String? = nil, size: Int? = nil, data: String? = nil) {
        self.attachmentId = attachmentId
        self.size = size
        self.data = data
    }

    enum CodingKeys: String, CodingKey { case attachmentId, size, data }

    /// The echoed `attachmentId` is not used (ids change between fetches, §2.4): one of
    /// another shape reads as absent.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        attachmentId = try c.decodeIfPresent(String.self, forKey: .attachmentId)
            .flatMap { GmailID.isWellFormed($0, as: .attachment) ? $0 : nil }
        size = try c.decodeCountIfPresent(.size)
        data = try c.decodeIfPresent(String.self, forKey: .data)
    }
}
