/*!
 Builds the requests of every Gmail method Hudson calls: path under `/gmail/v1/users/me`,
 query string, JSON body and quota cost (gmail-api.md §1–§2). Query values are
 percent-encoded to the RFC 3986 unreserved set, so a search like `from:a OR b+c` reaches
 Gmail intact (`+` would otherwise read as a space); repeated parameters repeat the key (§1);
 `prettyPrint=false` goes on every request to save bytes. The same path-and-query string is
 what a batch part carries (§1 "Batch endpoint"), so single and batched gets cannot diverge.
 Every id that goes into a path passes `segment` first, the one check of GmailIDShape: an id
 of another shape (`..`, `a/b`, `%2e`, empty, too long) is refused before anything is sent,
 since percent-encoding leaves `.` and `..` as dot-segments that URL resolution removes.
 */

import Foundation
import GmailIDShape

/// One query parameter; repeated parameters are separate items with the same name.
struct QueryItem: Sendable, Equatable {
    var name: String
    var value: String
}

/// A Gmail call, independent of host and token.
struct GmailRequest: Sendable {
    var method: GmailMethod
    var httpMethod: String
    /// Absolute path from the API root, e.g. `/gmail/v1/users/me/profile`.
    var path: String
    var query: [QueryItem] = []
    /// False only for the outer batch request (see GmailClient+Batch.swift).
    var appendsPrettyPrint = true
    var body: Data?
    var contentType: String?
    /// Quota charged for each attempt: the method's cost, times the sub-requests of a batch.
    var units: Int

    /// `path?query`, with `prettyPrint=false` appended: the request target of the exchange.
    var target: String {
        let items = query + (appendsPrettyPrint ? [QueryItem(name: "prettyPrint", value: "false")] : [])
        guard !items.isEmpty else { return path }
        return path + "?" + items.map { "\(Endpoint.percentEncode($0.name))=\(Endpoint.percentEncode($0.value))" }
            .joined(separator: "&")
    }
}

/// The Gmail REST surface as request builders.
enum Endpoint {
    static let userRoot = "/gmail/v1/users/me"
    static let batchPath = "/batch/gmail/v1"
    static let messageFormats: Set<String> = ["minimal", "metadata", "full", "raw"]

    /// The headers Hudson keeps from a `metadata` fetch, asked for explicitly so Gmail sends
    /// only these (§2.3 `metadataHeaders`).
    static let metadataHeaders = [
        "Subject", "From", "To", "Cc", "Bcc", "Reply-To", "Date", "Message-ID",
        "In-Reply-To", "References", "List-Id", "Content-Type",
        // What an unsubscribe offer rests on (issue 42; HudsonStore's ListHeaders.headerNames).
        "List-Unsubscribe", "List-Unsubscribe-Post", "Authentication-Results", "DKIM-Signature",
    ]

    private static let unreserved: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    )

    /// Percent-encodes everything outside RFC 3986's unreserved set, as UTF-8.
    static func percentEncode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// `id` as one path segment: the id itself, once GmailIDShape has it as a Gmail id of
    /// this kind (its alphabet needs no percent-encoding); `GmailError.malformedID` otherwise.
    static func segment(_ id: String, _ kind: GmailID.Kind) throws(GmailError) -> String {
        guard GmailID.isWellFormed(id, as: kind) else { throw GmailError.malformedID(id, kind: kind) }
        return id
    }

    private static func json<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of strings cannot fail.
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    private static func get(_ method: GmailMethod, _ path: String, _ query: [QueryItem] = []) -> GmailRequest {
        GmailRequest(method: method, httpMethod: "GET", path: userRoot + path, query: query, units: method.units)
    }

    private static func post<T: Encodable>(_ method: GmailMethod, _ path: String, _ body: T) -> GmailRequest {
        GmailRequest(
            method: method, httpMethod: "POST", path: userRoot + path, body: json(body),
            contentType: "application/json; charset=UTF-8", units: method.units
        )
    }

    static func profile() -> GmailRequest { get(.getProfile, "/profile") }

    static func listMessages(pageToken: String?, maxResults: Int, query: String?) -> GmailRequest {
        var items = [QueryItem(name: "maxResults", value: String(min(500, max(1, maxResults))))]
        if let pageToken, !pageToken.isEmpty { items.append(QueryItem(name: "pageToken", value: pageToken)) }
        if let query, !query.isEmpty { items.append(QueryItem(name: "q", value: query)) }
        return get(.messagesList, "/messages", items)
    }

    /// `format` must be one of `messageFormats` (checked by the caller).
    static func getMessage(id: String, format: String) throws(GmailError) -> GmailRequest {
        var items = [QueryItem(name: "format", value: format)]
        if format == "metadata" {
            items += metadataHeaders.map { QueryItem(name: "metadataHeaders", value: $0) }
        }
        return get(.messagesGet, "/messages/\(try segment(id, .message))", items)
    }

    /// `startHistoryId` goes on the query string: sent any other way Gmail answers 400
    /// "Missing/invalid parameter: startHistoryId" (§9.4). Pages of 500, the maximum, since a
    /// page costs 2 units whatever its size.
    static func listHistory(startHistoryID: String, pageToken: String?, labelID: String? = nil) -> GmailRequest {
        var items = [QueryItem(name: "startHistoryId", value: startHistoryID), QueryItem(name: "maxResults", value: "500")]
        if let pageToken, !pageToken.isEmpty { items.append(QueryItem(name: "pageToken", value: pageToken)) }
        if let labelID, !labelID.isEmpty { items.append(QueryItem(name: "labelId", value: labelID)) }
        return get(.historyList, "/history", items)
    }

    static func listLabels() -> GmailRequest { get(.labelsList, "/labels") }

    static func modify(id: String, add: [String], remove: [String]) throws(GmailError) -> GmailRequest {
        post(.messagesModify, "/messages/\(try segment(id, .message))/modify", ModifyMessageRequest(addLabelIds: add, removeLabelIds: remove))
    }

    static func batchModify(ids: [String], add: [String], remove: [String]) -> GmailRequest {
        post(.messagesBatchModify, "/messages/batchModify", BatchModifyMessagesRequest(ids: ids, addLabelIds: add, removeLabelIds: remove))
    }

    static func attachment(messageID: String, attachmentID: String) throws(GmailError) -> GmailRequest {
        get(.attachmentsGet, "/messages/\(try segment(messageID, .message))/attachments/\(try segment(attachmentID, .attachment))")
    }

    static func send(raw: [UInt8], threadID: String?) -> GmailRequest {
        post(.messagesSend, "/messages/send", SendMessageRequest(raw: base64URL(raw), threadId: threadID))
    }

    static func createLabel(name: String, color: LabelColor? = nil) -> GmailRequest {
        post(.labelsCreate, "/labels", CreateLabelRequest(name: name, color: color))
    }

    static func patchLabel(id: String, name: String?, color: LabelColor?) throws(GmailError) -> GmailRequest {
        var request = post(.labelsPatch, "/labels/\(try segment(id, .label))", PatchLabelRequest(name: name, color: color))
        request.httpMethod = "PATCH"
        return request
    }

    static func deleteLabel(id: String) throws(GmailError) -> GmailRequest {
        GmailRequest(method: .labelsDelete, httpMethod: "DELETE", path: userRoot + "/labels/\(try segment(id, .label))",
                     units: GmailMethod.labelsDelete.units)
    }

    /// base64url with padding (§8: Gmail accepts it padded or not; padded suits strict decoders).
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
