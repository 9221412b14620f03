/*!
 Test-side reading and writing of Gmail batch bodies, written independently of BatchCodec so
 the codec is checked against a second implementation rather than against itself: split a
 recorded batch request into (Content-ID, request line) pairs, and build a multipart/mixed
 response from (Content-ID, status, body) triples in whatever order a test wants.
 */

import Foundation

/// One sub-request as the server saw it.
struct BatchPartRequest: Equatable {
    var contentID: String
    var requestLine: String

    /// The message id from `GET /gmail/v1/users/me/messages/{id}?…`.
    var messageID: String {
        let target = requestLine.split(separator: " ")[1]
        return String(target.split(separator: "?")[0].split(separator: "/").last!)
    }
}

enum BatchScript {
    static func parts(of request: RecordedRequest) -> [BatchPartRequest] {
        guard let type = request.headers["content-type"], let range = type.range(of: "boundary=") else { return [] }
        let boundary = String(type[range.upperBound...])
        let text = String(decoding: request.body, as: UTF8.self)
        return text.components(separatedBy: "--\(boundary)").compactMap { chunk in
            let lines = chunk.components(separatedBy: "\r\n")
            guard let idLine = lines.first(where: { $0.lowercased().hasPrefix("content-id:") }),
                  let requestLine = lines.first(where: { $0.hasPrefix("GET ") })
            else { return nil }
            let id = idLine.dropFirst("content-id:".count).trimmingCharacters(in: .whitespaces)
            return BatchPartRequest(contentID: id, requestLine: requestLine)
        }
    }

    /// A multipart/mixed response; each part's Content-ID becomes `<response-ID>`.
    static func response(_ parts: [(contentID: String, status: Int, body: String)], boundary: String = "batch_resp_Zx9") -> ScriptedResponse {
        var text = "preamble to ignore\r\n"
        for part in parts {
            let bare = part.contentID.trimmingCharacters(in: CharacterSet(charactersIn: "<>"))
            text += "--\(boundary)\r\nContent-Type: application/http\r\nContent-ID: <response-\(bare)>\r\n\r\n"
            text += "HTTP/1.1 \(part.status) Scripted\r\nContent-Type: application/json; charset=UTF-8\r\nVary: Origin\r\n\r\n"
            text += part.body + "\r\n"
        }
        text += "--\(boundary)--\r\n"
        return .respond(status: 200, headers: ["Content-Type": "multipart/mixed; boundary=\(boundary)"], body: Data(text.utf8))
    }

    static func message(_ id: String) -> String {
        #"{"id": "\#(id)", "threadId": "t-\#(id)", "labelIds": ["INBOX"], "historyId": "100"}"#
    }
}
