/*!
 `users.messages.import` (gmail-api.md §2.13; `gmail.users.messages.import` in the discovery
 document): a message put into the mailbox as if it had arrived by SMTP, with the labels given.
 It costs 25 units (GmailMethod) and is not idempotent — a second import of the same bytes is a
 second message — so after an ambiguous failure the caller looks for the message
 (`rfc822msgid:`) before anything is repeated, and the client repeats it only after a rate-limit
 refusal, as it does `messages.send`. The message goes as a multipart upload
 (`/upload/gmail/v1/users/me/messages/import?uploadType=multipart`, the discovery document's
 `mediaUpload.protocols.simple`): the JSON metadata (`labelIds`) and the message as
 `message/rfc822` bytes, so a message of up to 150 MB is not inflated by base64 and JSON.
 */
import Foundation

/// The query parameters of messages.import (gmail.v1.json).
public struct ImportOptions: Sendable, Equatable {
    /// `internalDateSource`: Gmail's date of the message from its `Date:` header (the default,
    /// `dateHeader`), or the time Gmail receives it (`receivedTime`).
    public var dateFromHeader: Bool
    /// `neverMarkSpam`: skip Gmail's spam classifier.
    public var neverMarkSpam: Bool
    /// `processForCalendar`: add the invitations found to the user's Google Calendar.
    public var processForCalendar: Bool

    public init(dateFromHeader: Bool = true, neverMarkSpam: Bool = false, processForCalendar: Bool = false) {
        self.dateFromHeader = dateFromHeader
        self.neverMarkSpam = neverMarkSpam
        self.processForCalendar = processForCalendar
    }
}

public protocol GmailImportAPI: Sendable {
    /// `messages.import` of a complete RFC 822 message with `labelIDs`: the stored message
    /// (id, threadId, labelIds).
    func importMessage(raw: [UInt8], labelIDs: [String], options: ImportOptions) async throws -> GmailMessage
}

struct ImportMetadataPart: Encodable {
    var labelIds: [String]
}

extension Endpoint {
    static func importMessage(raw: [UInt8], labelIDs: [String], options: ImportOptions, boundary: String) -> GmailRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let metadata = (try? encoder.encode(ImportMetadataPart(labelIds: labelIDs))) ?? Data("{}".utf8)
        var body = Data("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".utf8)
        body.append(metadata)
        body.append(Data("\r\n--\(boundary)\r\nContent-Type: message/rfc822\r\n\r\n".utf8))
        body.append(contentsOf: raw)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        var query = [QueryItem(name: "uploadType", value: "multipart"),
                     QueryItem(name: "internalDateSource", value: options.dateFromHeader ? "dateHeader" : "receivedTime")]
        if options.neverMarkSpam { query.append(QueryItem(name: "neverMarkSpam", value: "true")) }
        if options.processForCalendar { query.append(QueryItem(name: "processForCalendar", value: "true")) }
        return GmailRequest(method: .messagesImport, httpMethod: "POST", path: "/upload" + userRoot + "/messages/import",
                            query: query, body: body, contentType: "multipart/related; boundary=\(boundary)",
                            units: GmailMethod.messagesImport.units)
    }

    /// A boundary that does not occur in `raw` (RFC 2046 §5.1.1).
    static func boundary(for raw: [UInt8]) -> String {
        var boundary = "hudson_import_boundary"
        var counter = 0
        while raw.containsSubsequence(Array(boundary.utf8)) {
            counter += 1
            boundary = "hudson_import_boundary_\(counter)_\(UInt64.random(in: 0...UInt64.max))"
        }
        return boundary
    }
}

extension Array where Element == UInt8 {
    fileprivate func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return false }
        let first = needle[0]
        var index = 0
        while index <= count - needle.count {
            if self[index] == first && self[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}

extension GmailClient: GmailImportAPI {
    public func importMessage(raw: [UInt8], labelIDs: [String], options: ImportOptions) async throws -> GmailMessage {
        let request = Endpoint.importMessage(raw: raw, labelIDs: labelIDs, options: options, boundary: Endpoint.boundary(for: raw))
        return try Self.decodeBody(try await perform(request).body)
    }
}
