/*!
 users.settings.filters.list (gmail-api.md §2.14): the account's own filters, read with
 Hudson's gmail.modify scope. Only the discovery document's fields are decoded; the list
 has no paging, and its key (`filter`, singular) is absent when there are none. Creating
 and deleting filters needs gmail.settings.basic, which Hudson does not ask for.
 */
import Foundation

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

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        criteria = try container.decodeIfPresent(GmailFilterCriteria.self, forKey: .criteria) ?? GmailFilterCriteria()
        action = try container.decodeIfPresent(GmailFilterAction.self, forKey: .action) ?? GmailFilterAction()
    }
}

/// `ListFiltersResponse`.
struct FilterList: Decodable {
    var filter: [GmailFilter]?
}

public protocol GmailFiltersAPI: Sendable {
    /// users.settings.filters.list: every filter, in Gmail's order.
    func listFilters() async throws -> [GmailFilter]
}

extension GmailClient: GmailFiltersAPI {
    public func listFilters() async throws -> [GmailFilter] {
        let request = GmailRequest(method: .filtersList, httpMethod: "GET", path: Endpoint.userRoot + "/settings/filters",
                                   query: [], body: nil, contentType: nil, units: GmailMethod.filtersList.units)
        let list: FilterList = try Self.decodeBody(try await perform(request).body)
        return list.filter ?? []
    }
}
