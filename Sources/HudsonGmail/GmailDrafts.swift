/*!
 Gmail's drafts (gmail-api.md §2.12; `users.drafts` in the discovery document): a draft is
 an id naming one message labelled `DRAFT`. A protocol of its own beside `GmailAPI`, so
 the scripted servers of the sync tests need not grow; `GmailClient` implements it.
 `drafts.create` and `drafts.send` are not idempotent (GmailMethod): after an ambiguous
 failure the caller looks for the draft (`drafts.list` with `rfc822msgid:`) or the sent
 message before anything is repeated.
 */
import Foundation
import GmailIDShape

/// A `Draft`: its id and its message (list entries carry only the message's id and thread).
public struct GmailDraft: Codable, Sendable, Equatable {
    public var id: String
    public var message: GmailMessage?

    public init(id: String, message: GmailMessage? = nil) {
        self.id = id
        self.message = message
    }

    enum CodingKeys: String, CodingKey { case id, message }

    /// An `id` of another shape than a Gmail draft id's is `UnusableID` (WireValidation.swift):
    /// a draft id goes into paths (drafts.get, drafts.update, drafts.delete).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeID(.id, .draft)
        message = try c.decodeIfPresent(GmailMessage.self, forKey: .message)
    }
}

/// One page of `drafts.list`.
public struct DraftListPage: Codable, Sendable, Equatable {
    public var drafts: [GmailDraft]
    public var nextPageToken: String?
    /// Drafts whose id (or whose message's) has not a Gmail id's shape: left out of
    /// `drafts`, never requested.
    public var unusableIDs: [String] = []

    public init(drafts: [GmailDraft] = [], nextPageToken: String? = nil) {
        self.drafts = drafts
        self.nextPageToken = nextPageToken
    }

    enum CodingKeys: String, CodingKey { case drafts, nextPageToken }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Empty fields are left out (§1): no "drafts" key means no drafts.
        (drafts, unusableIDs) = [GmailDraft].kept(try container.decodeIfPresent([Skippable<GmailDraft>].self, forKey: .drafts))
        nextPageToken = try container.decodePageToken(.nextPageToken)
    }
}

public protocol GmailDraftsAPI: Sendable {
    /// `drafts.create` of a complete RFC 2822 message, in `threadID` when given.
    func createDraft(raw: [UInt8], threadID: String?) async throws -> GmailDraft
    /// `drafts.update`: the draft's content replaced (its message gets a new id).
    func updateDraft(id: String, raw: [UInt8], threadID: String?) async throws -> GmailDraft
    /// `drafts.get` in the given message format.
    func getDraft(id: String, format: String) async throws -> GmailDraft
    /// One page of `drafts.list`, `query` in Gmail search syntax.
    func listDrafts(pageToken: String?, query: String?) async throws -> DraftListPage
    /// `drafts.send` of the draft as Gmail has it: the sent message.
    func sendDraft(id: String) async throws -> GmailMessage
    /// `drafts.delete` (permanent).
    func deleteDraft(id: String) async throws
}

struct DraftRequest: Encodable {
    struct Message: Encodable {
        var raw: String
        var threadId: String?
    }
    var id: String?
    var message: Message?
}

extension Endpoint {
    static func draftRequest(_ method: GmailMethod, _ httpMethod: String, _ path: String, _ body: DraftRequest?,
                             _ query: [QueryItem] = []) -> GmailRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return GmailRequest(
            method: method, httpMethod: httpMethod, path: userRoot + path, query: query,
            body: body.map { (try? encoder.encode($0)) ?? Data("{}".utf8) },
            contentType: body == nil ? nil : "application/json; charset=UTF-8", units: method.units)
    }
}

extension GmailClient: GmailDraftsAPI {
    public func createDraft(raw: [UInt8], threadID: String?) async throws -> GmailDraft {
        let body = DraftRequest(message: .init(raw: Endpoint.base64URL(raw), threadId: threadID))
        return try Self.decodeBody(try await perform(Endpoint.draftRequest(.draftsCreate, "POST", "/drafts", body)).body)
    }

    public func updateDraft(id: String, raw: [UInt8], threadID: String?) async throws -> GmailDraft {
        let body = DraftRequest(id: id, message: .init(raw: Endpoint.base64URL(raw), threadId: threadID))
        let path = "/drafts/\(try Endpoint.segment(id, .draft))"
        return try Self.decodeBody(try await perform(Endpoint.draftRequest(.draftsUpdate, "PUT", path, body)).body)
    }

    public func getDraft(id: String, format: String) async throws -> GmailDraft {
        try Self.checkFormat(format)
        let path = "/drafts/\(try Endpoint.segment(id, .draft))"
        let request = Endpoint.draftRequest(.draftsGet, "GET", path, nil, [QueryItem(name: "format", value: format)])
        return try Self.decodeBody(try await perform(request).body)
    }

    public func listDrafts(pageToken: String?, query: String?) async throws -> DraftListPage {
        var items = [QueryItem(name: "maxResults", value: "500")]
        if let pageToken, !pageToken.isEmpty { items.append(QueryItem(name: "pageToken", value: pageToken)) }
        if let query, !query.isEmpty { items.append(QueryItem(name: "q", value: query)) }
        return try Self.decodeBody(try await perform(Endpoint.draftRequest(.draftsList, "GET", "/drafts", nil, items)).body)
    }

    public func sendDraft(id: String) async throws -> GmailMessage {
        // The id goes in the body, not the path; it is still an id Gmail must have given.
        _ = try Endpoint.segment(id, .draft)
        let request = Endpoint.draftRequest(.draftsSend, "POST", "/drafts/send", DraftRequest(id: id))
        return try Self.decodeBody(try await perform(request).body)
    }

    public func deleteDraft(id: String) async throws {
        _ = try await perform(Endpoint.draftRequest(.draftsDelete, "DELETE", "/drafts/\(try Endpoint.segment(id, .draft))", nil))
    }
}
