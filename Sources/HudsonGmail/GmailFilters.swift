/*!
 users.settings.filters.list (gmail-api.md §2.14): the account's own filters, read with
 Hudson's gmail.modify scope. Only the discovery document's fields are decoded; the list
 has no paging, and its key (`filter`, singular) is absent when there are none. Creating
 and deleting filters needs gmail.settings.basic, which Hudson does not ask for. A filter
 id is checked as every id in an answer is (WireValidation.swift): a filter whose id has
 not a Gmail id's shape is left out of the list and its id kept in `unusableIDs`, for the
 caller to name.
 */
import Foundation
import GmailIDShape

/// `FilterCriteria`: every given criterion must match.
public struct GmailFilterCriteria: Codable, Sendable, Equatable {
    public var from: String?
    public var to: String?
    public var subject: String?
    public var query: String?
    public var negatedQuery: String?
    public var hasAttachment: Bool?
    public var excludeChats: Bool?
    /// Bytes of the whole RFC 822 message.
    public var size: Int64?
    /// `larger`, `smaller` or `unspecified`.
    public var sizeComparison: String?

    public init(from: String? = nil, to: String? = nil, subject: String? = nil, query: String? = nil,
                negatedQuery: String? = nil, hasAttachment: Bool? = nil, excludeChats: Bool? = nil,
                size: Int64? = nil, sizeComparison: String? = nil) {
        self.from = from
        self.to = to
        self.subject = subject
        self.query = query
        self.negatedQuery = negatedQuery
        self.hasAttachment = hasAttachment
        self.excludeChats = excludeChats
        self.size = size
        self.sizeComparison = sizeComparison
    }
}

/// `FilterAction`.
public struct GmailFilterAction: Codable, Sendable, Equatable {
    public var addLabelIds: [String]?
    public var removeLabelIds: [String]?
    /// An address the message is forwarded to.
    public var forward: String?

    public init(addLabelIds: [String]? = nil, removeLabelIds: [String]? = nil, forward: String? = nil) {
        self.addLabelIds = addLabelIds
        self.removeLabelIds = removeLabelIds
        self.forward = forward
    }
}

/// `Filter`.
public struct GmailFilter: Codable, Sendable, Equatable {
    public var id: String
    public var criteria: GmailFilterCriteria
    public var action: GmailFilterAction

    public init(id: String, criteria: GmailFilterCriteria, action: GmailFilterAction) {
        self.id = id
        self.criteria = criteria
        self.action = action
    }

    enum CodingKeys: String, CodingKey { case id, criteria, action }

    /// An `id` of another shape than a Gmail filter id's is `UnusableID` (`../bad` was
    /// accepted and printed as `filter:../bad`).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeID(.id, .filter)
        criteria = try container.decodeIfPresent(GmailFilterCriteria.self, forKey: .criteria) ?? GmailFilterCriteria()
        action = try container.decodeIfPresent(GmailFilterAction.self, forKey: .action) ?? GmailFilterAction()
    }
}

/// `ListFiltersResponse`: the filters, in Gmail's order, and the ids of those left out.
public struct GmailFilterList: Decodable, Sendable, Equatable {
    public var filters: [GmailFilter]
    /// Filters whose id has not a Gmail filter id's shape: left out of `filters`.
    public var unusableIDs: [String] = []

    public init(filters: [GmailFilter], unusableIDs: [String] = []) {
        self.filters = filters
        self.unusableIDs = unusableIDs
    }

    enum CodingKeys: String, CodingKey { case filter }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        (filters, unusableIDs) = [GmailFilter].kept(try container.decodeIfPresent([Skippable<GmailFilter>].self, forKey: .filter))
    }
}

public protocol GmailFiltersAPI: Sendable {
    /// users.settings.filters.list: every filter, in Gmail's order.
    func listFilters() async throws -> GmailFilterList
}

extension GmailClient: GmailFiltersAPI {
    public func listFilters() async throws -> GmailFilterList {
        let request = GmailRequest(method: .filtersList, httpMethod: "GET", path: Endpoint.userRoot + "/settings/filters",
                                   query: [], body: nil, contentType: nil, units: GmailMethod.filtersList.units)
        return try Self.decodeBody(try await perform(request).body)
    }
}
