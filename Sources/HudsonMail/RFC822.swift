/*!
 Raw Internet messages (RFC 5322 syntax, RFC 2045–2046 MIME structure) parsed into the same
 `MIMEPart` tree Gmail's `format=full` gives, so `format=raw` mail (gmail-api.md §2.3, §8: the
 exact copy) and test corpora go through the one extraction path. Like Python's `email`
 feedparser it never fails: a header block without its blank line, a multipart without its
 closing delimiter, a missing boundary or an unknown transfer encoding each degrade to the most
 useful reading. Nesting and part count are bounded, so hostile input cannot exhaust the
 stack or memory.
 */

public enum RFC822 {
    /// Nesting deeper than this is kept as an opaque leaf.
    public static let maximumDepth = 64
    /// The most parts one message may produce; further parts are ignored.
    public static let maximumParts = 10_000

    /// Parses a whole message. Headers are unfolded (RFC 5322 §2.2.3) and kept in order with
    /// duplicates, values raw (encoded words are left for `EncodedWords.decode`, as in
    /// `format=raw`); Content-Transfer-Encoding is undone; part ids follow Gmail's numbering
    /// ("" for the root, "0", "1", "0.1"; the message inside a `message/rfc822` part "N.0").
    public static func parse(bytes: [UInt8]) -> MIMEPart {
        var budget = maximumParts
        return parseEntity(bytes[...], partID: "", depth: 0, defaultType: "text/plain", budget: &budget)
    }

    /// The header block at the start of `bytes` (up to the first empty line), unfolded.
    public static func parseHeaders(_ bytes: [UInt8]) -> [MIMEPart.Header] {
        readHeaders(bytes[...]).headers
    }

    /// Whether `bytes` can be a message at all (what `hd-import` sends, and what it refuses
    /// as "not mail"): after an optional mbox `From ` line, it starts with a header field
    /// (RFC 5322 §2.2: a name of printable ASCII without ":", then ":"), its header block
    /// holds no NUL (§2.2: a field body is printable characters and blanks; a NUL there is
    /// binary data, not a header), and it holds at least one field a message has
    /// (`messageFieldNames`): any `name: value` text has the shape of a header (a
    /// configuration file, /etc/passwd), and was imported as a message. A message of only
    /// headers is a message; what the body holds is Gmail's to judge.
    public static func looksLikeMessage(_ bytes: some Collection<UInt8>) -> Bool {
        let bytes = Array(bytes)[...]
        var cursor = bytes.startIndex
        if bytes.starts(with: "From ".utf8) { cursor = nextLine(bytes, from: cursor).next }
        guard cursor < bytes.endIndex else { return false }
        let (firstEnd, _) = nextLine(bytes, from: cursor)
        let first = bytes[cursor..<firstEnd]
        guard let colon = first.firstIndex(of: UInt8(ascii: ":")), colon > first.startIndex,
              isFieldName(first[first.startIndex..<colon]) else { return false }
        let (headers, bodyStart) = readHeaders(bytes[cursor...])
        guard !bytes[cursor..<bodyStart].contains(0) else { return false }
        return headers.contains { messageFieldNames.contains($0.name.lowercased()) }
    }

    /// The fields RFC 5322 §3.6 defines for a message (origination date, originator,
    /// destination, identification, informational, resent and trace fields), and
    /// MIME-Version, which RFC 2045 §4 puts only in a message's header. Every message has
    /// one (§3.6 requires From and Date; what a server adds is Received); text that has
    /// none of them is not mail. Field names are matched without case (§1.2.2).
    public static let messageFieldNames: Set<String> = [
        "date", "from", "sender", "reply-to", "to", "cc", "bcc", "message-id", "in-reply-to", "references",
        "subject", "comments", "keywords", "resent-date", "resent-from", "resent-sender", "resent-to", "resent-cc",
        "resent-bcc", "resent-message-id", "return-path", "received", "mime-version",
    ]

    /// Whether the header block of `bytes` ends before the bytes do: with its empty line,
    /// or with a line that is not a field (the body then starts without one). False for a
    /// message of only header fields, which is whole or cut inside its header.
    public static func headerBlockIsClosed(_ bytes: [UInt8]) -> Bool {
        let slice = bytes[...]
        var cursor = slice.startIndex
        if slice.starts(with: "From ".utf8) { cursor = nextLine(slice, from: cursor).next }
        while cursor < slice.endIndex {
            let (end, next) = nextLine(slice, from: cursor)
            let line = slice[cursor..<end]
            if line.isEmpty { return true }
            if line.first != 32 && line.first != 9 {
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                      isFieldName(line[line.startIndex..<colon]) else { return true }
            }
            cursor = next
        }
        return false
    }

    /// Why a message's top-level multipart body looks cut short: it has no close delimiter
    /// (RFC 2046 §5.1.1: the line `--boundary--` ends the body). Nil when it has one, or is
    /// not multipart.
    public static func unclosedMultipart(_ bytes: [UInt8]) -> String? {
        let (headers, bodyStart) = readHeaders(bytes[...])
        guard let type = headers.value(of: "Content-Type").map(MIMEHeaderValue.parse),
              type.mediaType?.hasPrefix("multipart/") == true, let boundary = type[parameter: "boundary"], !boundary.isEmpty else {
            return nil
        }
        let close = Array("--\(boundary)--".utf8)
        let body = bytes[bodyStart...]
        var cursor = body.startIndex
        while cursor < body.endIndex {
            let (end, next) = nextLine(body, from: cursor)
            let line = body[cursor..<end]
            if line.starts(with: close), line.dropFirst(close.count).allSatisfy({ $0 == 32 || $0 == 9 }) { return nil }
            cursor = next
        }
        return "its multipart body has no closing delimiter line"
    }

    // MARK: - Entities

    static func parseEntity(
        _ bytes: ArraySlice<UInt8>, partID: String, depth: Int, defaultType: String, budget: inout Int
    ) -> MIMEPart {
        let (headers, bodyStart) = readHeaders(bytes)
        let body = bytes[bodyStart...]
        let contentType = headers.value(of: "Content-Type").map(MIMEHeaderValue.parse)
        // RFC 2045 §5.2: a missing or invalid Content-Type means the context's default.
        let mimeType = contentType == nil ? defaultType : (contentType?.mediaType ?? "text/plain")
        let disposition = headers.value(of: "Content-Disposition").map(MIMEHeaderValue.parse)
        let filename = disposition?[parameter: "filename"] ?? contentType?[parameter: "name"] ?? ""
        var part = MIMEPart(partID: partID, mimeType: mimeType, filename: filename, headers: headers)
        let canNest = depth < maximumDepth

        if mimeType.hasPrefix("multipart/"), canNest,
           let boundary = contentType?[parameter: "boundary"], !boundary.isEmpty,
           let bodies = splitMultipart(body, boundary: Array(boundary.utf8), budget: &budget) {
            // RFC 2046 §5.1.5: in a digest the default part type is message/rfc822.
            let childDefault = mimeType == "multipart/digest" ? "message/rfc822" : "text/plain"
            part.filename = ""
            part.parts = bodies.enumerated().map { index, slice in
                parseEntity(slice, partID: childID(partID, index), depth: depth + 1,
                            defaultType: childDefault, budget: &budget)
            }
            return part
        }
        let content = TransferEncoding.decode(Array(body), encoding: headers.value(of: "Content-Transfer-Encoding"))
        part.size = content.count
        if (mimeType == "message/rfc822" || mimeType == "message/global"), canNest, budget > 0 {
            budget -= 1
            part.parts = [parseEntity(content[...], partID: childID(partID, 0), depth: depth + 1,
                                      defaultType: "text/plain", budget: &budget)]
        } else {
            part.bodyData = content
        }
        return part
    }

    static func childID(_ parent: String, _ index: Int) -> String {
        parent.isEmpty ? String(index) : "\(parent).\(index)"
    }

    // MARK: - Headers

    /// Reads header fields up to the empty line; returns them and where the body starts.
    /// A line that is neither a field nor a continuation ends the header block and belongs to
    /// the body (Python's MissingHeaderBodySeparatorDefect handling). A leading mbox
    /// `From ` line is skipped.
    static func readHeaders(_ bytes: ArraySlice<UInt8>) -> (headers: [MIMEPart.Header], bodyStart: Int) {
        var headers: [MIMEPart.Header] = []
        var name: [UInt8] = []
        var value: [UInt8] = []
        var haveField = false
        func finishField() {
            if haveField {
                let text = Charset.decodeText(bytes: value, charset: nil).trimmingWhitespace()
                headers.append(MIMEPart.Header(name: String(decoding: name, as: UTF8.self), value: text))
            }
            haveField = false
        }
        var cursor = bytes.startIndex
        if bytes.starts(with: "From ".utf8) { cursor = nextLine(bytes, from: cursor).next }
        while cursor < bytes.endIndex {
            let (lineEnd, next) = nextLine(bytes, from: cursor)
            let line = bytes[cursor..<lineEnd]
            if line.isEmpty {
                finishField()
                return (headers, next)
            }
            if line.first == 32 || line.first == 9 {
                // A folded continuation: unfolding removes only the line break.
                if haveField { value.append(contentsOf: line) }
                cursor = next
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  isFieldName(line[line.startIndex..<colon]) else {
                finishField()
                return (headers, cursor)
            }
            finishField()
            name = Array(line[line.startIndex..<colon])
            while let last = name.last, last == 32 || last == 9 { name.removeLast() }
            value = Array(line[(colon + 1)...])
            haveField = true
            cursor = next
        }
        finishField()
        return (headers, bytes.endIndex)
    }

    /// RFC 5322 §2.2 field names are printable ASCII without ":"; blanks before the colon are
    /// obsolete syntax (§4.5) that is still accepted.
    private static func isFieldName(_ bytes: ArraySlice<UInt8>) -> Bool {
        var sawBlank = false
        for byte in bytes {
            if byte == 32 || byte == 9 { sawBlank = true; continue }
            if sawBlank || byte < 33 || byte > 126 { return false }
        }
        return bytes.first != 32 && bytes.first != 9
    }

    /// The end of the line at `start` (without its CR LF or LF) and the start of the next.
    static func nextLine(_ bytes: ArraySlice<UInt8>, from start: Int) -> (end: Int, next: Int) {
        guard let newline = bytes[start...].firstIndex(of: 10) else { return (bytes.endIndex, bytes.endIndex) }
        let end = newline > start && bytes[newline - 1] == 13 ? newline - 1 : newline
        return (end, newline + 1)
    }

    // MARK: - Multipart

    /// Splits a multipart body at its delimiter lines (RFC 2046 §5.1.1): `--boundary`, optionally
    /// `--` for the close delimiter, then only blanks. The line break before a delimiter belongs
    /// to it. The preamble and epilogue are dropped; without a close delimiter the last part
    /// runs to the end. Returns nil when no delimiter occurs at all.
    static func splitMultipart(
        _ body: ArraySlice<UInt8>, boundary: [UInt8], budget: inout Int
    ) -> [ArraySlice<UInt8>]? {
        let dashes: [UInt8] = [45, 45]
        var parts: [ArraySlice<UInt8>] = []
        var partStart: Int? = nil
        var previousLineBreakStart = body.startIndex
        var cursor = body.startIndex
        var sawDelimiter = false
        while cursor < body.endIndex {
            let (lineEnd, next) = nextLine(body, from: cursor)
            let line = body[cursor..<lineEnd]
            if line.starts(with: dashes), line.dropFirst(2).starts(with: boundary) {
                var rest = line.dropFirst(2 + boundary.count)
                let isClose = rest.starts(with: dashes)
                if isClose { rest = rest.dropFirst(2) }
                if rest.allSatisfy({ $0 == 32 || $0 == 9 }) {
                    sawDelimiter = true
                    if let start = partStart {
                        guard budget > 0 else { return parts }
                        budget -= 1
                        parts.append(body[start..<max(start, previousLineBreakStart)])
                    }
                    if isClose { return parts }
                    partStart = next
                }
            }
            previousLineBreakStart = lineEnd
            cursor = next
        }
        guard sawDelimiter else { return nil }
        if let start = partStart, start <= body.endIndex, budget > 0 {
            budget -= 1
            parts.append(body[start..<body.endIndex])
        }
        return parts
    }
}
