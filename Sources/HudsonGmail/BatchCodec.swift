/*!
 Encodes and decodes Gmail batch bodies (gmail-api.md §1 "Batch endpoint"): a
 `multipart/mixed` request whose parts are `Content-Type: application/http` with a
 `Content-ID: <item-N>`, each wrapping a request line with a path-only target, and a
 `multipart/mixed` response whose parts wrap whole HTTP responses. Responses are returned
 keyed by Content-ID (`<response-item-N>` → `item-N`), never by position, because parts can
 arrive in any order (§9.12). The parser works on bytes and accepts LF as well as CRLF.
 */

import Foundation

/// One sub-response of a batch.
struct BatchPartResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
}

enum BatchCodec {
    /// One sub-request: its Content-ID (without angle brackets) and `GET` target.
    struct Part: Sendable {
        var contentID: String
        var target: String
    }

    /// The request body; every part is a bodiless GET, so the outer Authorization applies.
    static func encode(_ parts: [Part], boundary: String) -> Data {
        var text = ""
        for part in parts {
            text += "--\(boundary)\r\n"
            text += "Content-Type: application/http\r\n"
            text += "Content-ID: <\(part.contentID)>\r\n\r\n"
            text += "GET \(part.target) HTTP/1.1\r\n\r\n"
        }
        text += "--\(boundary)--\r\n"
        return Data(text.utf8)
    }

    /// The `boundary` parameter of a `multipart/mixed` Content-Type, or nil.
    static func boundary(fromContentType contentType: String?) -> String? {
        guard let contentType else { return nil }
        let fields = contentType.split(separator: ";").map { trimmed($0) }
        guard let type = fields.first, type.lowercased() == "multipart/mixed" else { return nil }
        for field in fields.dropFirst() {
            let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, trimmed(pair[0]).lowercased() == "boundary" else { continue }
            var value = trimmed(pair[1])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Sub-responses keyed by Content-ID with any `response-` prefix removed. Parts without
    /// a usable Content-ID or status line are skipped: their items read as missing, which the
    /// caller treats like a failed sub-request.
    static func decode(_ body: Data, boundary: String) -> [String: BatchPartResponse] {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        var results: [String: BatchPartResponse] = [:]
        var starts = occurrences(of: delimiter, in: bytes)
        guard !starts.isEmpty else { return [:] }
        starts.append(bytes.count)
        for (start, end) in zip(starts, starts.dropFirst()) {
            var cursor = start + delimiter.count
            if bytes[cursor..<min(cursor + 2, bytes.count)].elementsEqual(Array("--".utf8)) { break }
            cursor = skipLineEnd(bytes, from: skipTransportPadding(bytes, from: cursor))
            let part = trimTrailingLineEnd(Array(bytes[cursor..<end]))
            guard let (partHeaders, innerStart) = headerBlock(part, from: 0),
                  let contentID = partHeaders["content-id"].map(normalizedContentID),
                  let inner = httpResponse(Array(part[innerStart...]))
            else { continue }
            results[contentID] = inner
        }
        return results
    }

    /// `<response-item-3>` → `item-3`.
    static func normalizedContentID(_ raw: String) -> String {
        var id = trimmed(raw)
        if id.hasPrefix("<"), id.hasSuffix(">") { id = String(id.dropFirst().dropLast()) }
        if id.hasPrefix("response-") { id = String(id.dropFirst("response-".count)) }
        return id
    }

    /// Parses `HTTP/1.1 200 OK`, headers, blank line, body (cut to Content-Length if given).
    private static func httpResponse(_ bytes: [UInt8]) -> BatchPartResponse? {
        guard let lineEnd = bytes.firstIndex(of: 0x0A) else { return nil }
        let statusLine = trimmed(String(decoding: bytes[..<lineEnd], as: UTF8.self), newlines: true)
        let fields = statusLine.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else { return nil }
        guard let (headers, bodyStart) = headerBlock(bytes, from: lineEnd + 1) else {
            return BatchPartResponse(status: status, headers: HTTPHeaders(), body: Data())
        }
        var body = Array(bytes[bodyStart...])
        if let length = headers["content-length"].flatMap({ Int(trimmed($0)) }),
           length >= 0, length < body.count {
            body = Array(body[..<length])
        }
        return BatchPartResponse(status: status, headers: headers, body: Data(body))
    }

    /// Header lines from `start` up to the first empty line; returns them and where the
    /// content after the empty line begins. Nil when there is no empty line.
    private static func headerBlock(_ bytes: [UInt8], from start: Int) -> (HTTPHeaders, Int)? {
        var headers = HTTPHeaders()
        var cursor = start
        while cursor < bytes.count {
            let lineEnd = bytes[cursor...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[cursor..<lineEnd]
            if line.last == 0x0D { line = line.dropLast() }
            cursor = min(lineEnd + 1, bytes.count)
            if line.isEmpty { return (headers, cursor) }
            let text = String(decoding: line, as: UTF8.self)
            if let colon = text.firstIndex(of: ":") {
                let name = trimmed(text[..<colon])
                headers[name] = trimmed(text[text.index(after: colon)...])
            }
        }
        return nil
    }

    /// `trimmingCharacters(in: .whitespaces)` (or `.whitespacesAndNewlines`) without
    /// Foundation's bridging, which was most of the cost of reading a batch answer:
    /// tab, the space separators (Zs) and U+200B as Foundation counts them, plus the line
    /// ends and the line and paragraph separators with `newlines`.
    static func trimmed<S: StringProtocol>(_ text: S, newlines: Bool = false) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x09, 0x200B: return true
            case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return newlines
            default: return scalar.properties.generalCategory == .spaceSeparator
            }
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// RFC 2046 allows linear whitespace after a boundary delimiter.
    private static func skipTransportPadding(_ bytes: [UInt8], from start: Int) -> Int {
        var cursor = start
        while cursor < bytes.count, bytes[cursor] == 0x20 || bytes[cursor] == 0x09 { cursor += 1 }
        return cursor
    }

    private static func skipLineEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var cursor = start
        if cursor < bytes.count, bytes[cursor] == 0x0D { cursor += 1 }
        if cursor < bytes.count, bytes[cursor] == 0x0A { cursor += 1 }
        return cursor
    }

    /// The line end before the next delimiter belongs to the delimiter (RFC 2046 §5.1.1).
    private static func trimTrailingLineEnd(_ bytes: [UInt8]) -> [UInt8] {
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        if end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        return Array(bytes[..<end])
    }

    /// Start offsets of `needle` in `haystack` that begin a line, as delimiters must.
    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
        var found: [Int] = []
        var index = 0
        while index <= haystack.count - needle.count {
            if (index == 0 || haystack[index - 1] == 0x0A), haystack[index] == needle[0],
               haystack[index..<index + needle.count].elementsEqual(needle) {
                found.append(index)
                index += needle.count
            } else {
                index += 1
            }
        }
        return found
    }
}
