/*!
 What a reader sees of a message: one readable UTF-8 text, the original HTML (for
 `hd-show --html`), and the attachment list, taken from a `MIMEPart` tree of any of the shapes
 gmail-api.md §8 lists. The walk picks text/plain over text/html within multipart/alternative,
 concatenates inline parts of multipart/mixed, follows the root of multipart/related, shows
 forwarded message/rfc822 parts under a header block, notes encrypted content, and lists every
 part it does not show, so no content is dropped silently. The walk is depth-bounded.
 */

/// A part that is listed rather than shown: a file, an inline image, a part whose content
/// Gmail did not deliver inline.
public struct ExtractedAttachment: Sendable, Equatable {
    /// Gmail's `partId`, to address the part.
    public var partID: String
    /// The decoded file name (RFC 2231/2047); empty when the part has none.
    public var filename: String
    /// `type/subtype`, lower-cased.
    public var mimeType: String
    /// The content length in bytes (Gmail's `body.size`).
    public var size: Int
    /// Gmail's `attachmentId`, for `messages.attachments.get`; nil when the data came inline.
    public var attachmentID: String?
    /// The Content-ID without angle brackets, which `cid:` URLs in the HTML refer to.
    public var contentID: String?
    /// Whether the sender meant the part to appear within the body (`Content-Disposition:
    /// inline`, or a Content-ID without a disposition, or a resource of multipart/related).
    public var isInline: Bool

    /// Creates an attachment entry (memberwise).
    public init(partID: String, filename: String, mimeType: String, size: Int,
                attachmentID: String? = nil, contentID: String? = nil, isInline: Bool = false) {
        self.partID = partID
        self.filename = filename
        self.mimeType = mimeType
        self.size = size
        self.attachmentID = attachmentID
        self.contentID = contentID
        self.isInline = isInline
    }
}

/// The readable content of a message.
public struct ExtractedContent: Sendable, Equatable {
    /// The body as plain text (converted from HTML when there is no text/plain); nil when the
    /// message has no displayable text.
    public var text: String?
    /// The HTML body, decoded to UTF-8, as sent; nil when there is none.
    public var html: String?
    /// Attachments in tree order.
    public var attachments: [ExtractedAttachment]

    /// Creates extracted content (memberwise).
    public init(text: String?, html: String? = nil, attachments: [ExtractedAttachment] = []) {
        self.text = text
        self.html = html
        self.attachments = attachments
    }
}

public enum MessageContent {
    /// Parts nested deeper than this are not opened; a note in the text says so.
    public static let maximumDepth = 64

    /// Extracts the text, HTML and attachments of a message (see the file comment).
    public static func extract(from root: MIMEPart) -> ExtractedContent {
        var walker = Walker()
        let body = walker.walk(root, depth: 0)
        let text = body.segments.map(\.text).filter { !$0.isEmpty }.joined(separator: "\n\n")
        return ExtractedContent(
            text: text.isEmpty ? nil : text,
            html: body.htmlSources.isEmpty ? nil : body.htmlSources.joined(separator: "\n"),
            attachments: walker.attachments
        )
    }

    static let encryptedNote = "[encrypted message]"
    static let tooDeepNote = "[message nested too deeply to show: parts more than \(maximumDepth) levels down are left out]"
}

/// A piece of displayable text; HTML is converted only if the piece is chosen.
enum Segment {
    case plain(String)
    case html(String)
    case note(String)

    var text: String {
        switch self {
        case .plain(let text): return trimBlankLines(text)
        case .html(let source): return HTMLText.render(source)
        case .note(let text): return text
        }
    }

    var isPlainWithContent: Bool {
        if case .plain(let text) = self { return text.contains(where: { !$0.isWhitespace }) }
        return false
    }

    var isHTML: Bool {
        if case .html = self { return true }
        return false
    }
}

struct Body {
    var segments: [Segment] = []
    var htmlSources: [String] = []

    mutating func append(_ other: Body) {
        segments.append(contentsOf: other.segments)
        htmlSources.append(contentsOf: other.htmlSources)
    }
}

struct Walker {
    var attachments: [ExtractedAttachment] = []

    mutating func walk(_ part: MIMEPart, depth: Int) -> Body {
        guard depth <= MessageContent.maximumDepth else {
            return Body(segments: [.note(MessageContent.tooDeepNote)])
        }
        let type = part.normalizedMIMEType
        if type.hasPrefix("multipart/") {
            if part.parts.isEmpty {
                // At the parser's depth limit a multipart is left unopened (RFC822.swift):
                // its body is the raw markup of every level below, which is no text to show.
                if depth >= RFC822.maximumDepth { return Body(segments: [.note(MessageContent.tooDeepNote)]) }
                // A multipart whose boundary never occurred: its body is plain text.
                guard let data = part.decodedBody, !data.isEmpty else { return Body() }
                return Body(segments: [.plain(decode(data, of: part))])
            }
            switch type {
            case "multipart/alternative": return alternative(part, depth: depth)
            case "multipart/related": return related(part, depth: depth)
            case "multipart/signed": return signed(part, depth: depth)
            case "multipart/encrypted": return encrypted(part, depth: depth)
            default:
                var body = Body()
                for child in part.parts { body.append(walk(child, depth: depth + 1)) }
                return body
            }
        }
        if type == "message/rfc822" || type == "message/global" {
            return forwarded(part, depth: depth)
        }
        return leaf(part, type: type)
    }

    // MARK: - Leaves

    mutating func leaf(_ part: MIMEPart, type: String) -> Body {
        if type == "application/pkcs7-mime" || type == "application/x-pkcs7-mime" {
            list(part)
            let signedOnly = part.contentType[parameter: "smime-type"]?.lowercased() == "signed-data"
            return Body(segments: [.note(signedOnly ? "[signed message (S/MIME); content not shown]"
                                                    : MessageContent.encryptedNote)])
        }
        if Self.isAttachment(part) || !(type == "text/plain" || type == "text/html") {
            list(part)
            if type == "text/calendar", !Self.isAttachment(part), let data = part.decodedBody,
               let summary = CalendarSummary.line(for: decode(data, of: part)) {
                return Body(segments: [.note(summary)])
            }
            return Body()
        }
        guard let data = part.decodedBody else {
            // Large text parts can arrive by attachmentId only (gmail-api.md §8): list them.
            list(part)
            return Body()
        }
        let (text, unknown) = decodeNoting(data, of: part)
        // A charset Hudson cannot read is said, not hidden: the text below it is a guess.
        let note: [Segment] = unknown.map { [.note("[unknown charset \"\(String($0.prefix(40)))\"; shown as UTF-8 or Windows-1252]")] } ?? []
        if type == "text/html" { return Body(segments: note + [.html(text)], htmlSources: [text]) }
        return Body(segments: note + [.plain(text)])
    }

    /// The text of a part in its declared charset; HTML without one may name it in a `<meta>`.
    func decode(_ data: [UInt8], of part: MIMEPart) -> String {
        decodeNoting(data, of: part).text
    }

    /// `decode`, and the charset named when Hudson cannot read it.
    func decodeNoting(_ data: [UInt8], of part: MIMEPart) -> (text: String, unknownCharset: String?) {
        var charset = part.contentType[parameter: "charset"]
        if charset == nil && part.normalizedMIMEType == "text/html" { charset = Self.metaCharset(data) }
        return Charset.decode(bytes: data, charset: charset)
    }

    // MARK: - Multiparts

    /// RFC 2046 §5.1.4: alternatives are in increasing order of preference, but Hudson shows
    /// text, so the last alternative with plain text wins, else the last with HTML. The HTML
    /// output comes from the last alternative that has HTML. Files in any alternative are listed.
    mutating func alternative(_ part: MIMEPart, depth: Int) -> Body {
        let bodies = part.parts.map { walk($0, depth: depth + 1) }
        let chosen = bodies.last(where: { $0.segments.contains(where: \.isPlainWithContent) })
            ?? bodies.last(where: { $0.segments.contains(where: \.isHTML) })
            ?? bodies.last(where: { !$0.segments.isEmpty })
            ?? Body()
        let html = bodies.last(where: { !$0.htmlSources.isEmpty })?.htmlSources ?? []
        return Body(segments: chosen.segments, htmlSources: html)
    }

    /// RFC 2387: the root is the part named by `start`, else the first; the other parts are
    /// resources it refers to (`cid:` images), listed as inline attachments.
    mutating func related(_ part: MIMEPart, depth: Int) -> Body {
        var rootIndex = 0
        if let start = part.contentType[parameter: "start"] {
            let wanted = MIMEPart.stripAngleBrackets(start)
            rootIndex = part.parts.firstIndex(where: { $0.contentID == wanted }) ?? 0
        }
        var body = walk(part.parts[rootIndex], depth: depth + 1)
        for (index, child) in part.parts.enumerated() where index != rootIndex {
            if child.parts.isEmpty && !child.normalizedMIMEType.hasPrefix("multipart/") {
                list(child, isResource: true)
            } else {
                body.append(walk(child, depth: depth + 1))
            }
        }
        return body
    }

    /// RFC 1847 §2.1: the first part is the content; the signature is listed only when it is
    /// named (Gmail shows a named `signature.asc` as a file).
    mutating func signed(_ part: MIMEPart, depth: Int) -> Body {
        let body = walk(part.parts[0], depth: depth + 1)
        for child in part.parts.dropFirst() where Self.isAttachment(child) { list(child) }
        return body
    }

    /// RFC 1847 §2.2: nothing is readable without the key; say so and list every part.
    mutating func encrypted(_ part: MIMEPart, depth: Int) -> Body {
        listLeaves(part, depth: depth)
        return Body(segments: [.note(MessageContent.encryptedNote)])
    }

    mutating func listLeaves(_ part: MIMEPart, depth: Int) {
        guard depth <= MessageContent.maximumDepth else { return }
        if part.parts.isEmpty { list(part); return }
        for child in part.parts { listLeaves(child, depth: depth + 1) }
    }

    /// A forwarded or attached message: a header block, then its content. When the embedded
    /// message came as bytes rather than as a parsed child, it is parsed here.
    mutating func forwarded(_ part: MIMEPart, depth: Int) -> Body {
        // At the depth limit the mapping of Gmail's JSON leaves an embedded message without
        // its child (SnapshotMapping.mimePart), as the raw parser leaves a multipart
        // unopened: what lies below is left out, and said so.
        if part.parts.isEmpty && part.bodyData == nil && part.attachmentID == nil && depth >= RFC822.maximumDepth {
            return Body(segments: [.note(MessageContent.tooDeepNote)])
        }
        if Self.isAttachment(part) || (part.parts.isEmpty && part.bodyData == nil) { list(part) }
        var inner = part.parts.first
        if inner == nil, let data = part.decodedBody, !data.isEmpty {
            var budget = RFC822.maximumParts
            inner = RFC822.parseEntity(data[...], partID: RFC822.childID(part.partID, 0), depth: depth + 1,
                                       defaultType: "text/plain", budget: &budget)
        }
        guard let inner else { return Body() }
        var lines = ["---------- Forwarded message ----------"]
        for name in ["From", "Date", "Subject", "To", "Cc"] {
            guard let raw = inner.header(name) ?? part.header(name) else { continue }
            let value = EncodedWords.decode(raw).collapsingWhitespace()
            lines.append("\(name): \(value)")
        }
        var body = Body(segments: [.note(lines.joined(separator: "\n"))])
        body.append(walk(inner, depth: depth + 1))
        return body
    }

    // MARK: - Attachments

    /// gmail-api.md §8: an attachment is a part with a non-empty filename and/or
    /// `Content-Disposition: attachment`.
    static func isAttachment(_ part: MIMEPart) -> Bool {
        !filename(of: part).isEmpty || part.contentDisposition?.value == "attachment"
    }

    /// Gmail's `filename` when set (decoded, in case it still holds encoded words), else the
    /// Content-Disposition `filename`, else the Content-Type `name` (RFC 2231/2047 decoded).
    static func filename(of part: MIMEPart) -> String {
        if !part.filename.isEmpty { return EncodedWords.decode(part.filename) }
        return part.contentDisposition?[parameter: "filename"] ?? part.contentType[parameter: "name"] ?? ""
    }

    mutating func list(_ part: MIMEPart, isResource: Bool = false) {
        // A part with no name and no content at all (the empty body of a headers-only
        // message, an empty multipart) is nothing to show or save: no phantom 0-byte file.
        if part.size == 0 && part.attachmentID == nil && (part.bodyData?.isEmpty ?? true) && Self.filename(of: part).isEmpty {
            return
        }
        let disposition = part.contentDisposition?.value
        let contentID = part.contentID
        let isInline = disposition == "inline"
            || (disposition == nil && (contentID != nil || isResource))
        attachments.append(ExtractedAttachment(
            partID: part.partID, filename: Self.filename(of: part), mimeType: part.normalizedMIMEType,
            size: part.size, attachmentID: part.attachmentID, contentID: contentID, isInline: isInline))
    }

    /// The charset a `<meta charset>` or `<meta http-equiv content="...; charset=...">` names
    /// within the first 2 KB (HTML5 §13.2.3.2 prescans 1024 bytes; mail headers push it later).
    static func metaCharset(_ data: [UInt8]) -> String? {
        let head = data.prefix(2048).map(lowerASCII)
        let needle = Array("charset=".utf8)
        guard let start = head.indices.first(where: { head[$0...].starts(with: needle) }) else { return nil }
        var cursor = start + needle.count
        while cursor < head.count, head[cursor] == 34 || head[cursor] == 39 || head[cursor] == 32 { cursor += 1 }
        let name = head[cursor...].prefix(while: { byte in
            (48...57).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95 || byte == 46 || byte == 58
        })
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }
}

/// Plain text with CR LF and lone CR turned into LF, and leading and trailing blank lines
/// removed. Lines keep their blanks: a trailing space means something in format=flowed
/// (RFC 3676) and in the `-- ` signature separator.
func trimBlankLines(_ text: String) -> String {
    // Bytes, not Characters: this runs on every stored body, and walking a body by
    // grapheme was a tenth of hydration. A line counts as blank when every Character of
    // it is whitespace; lines of ASCII are decided byte by byte, others by Characters.
    var bytes = Array(text.utf8)
    if bytes.contains(0x0D) {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(bytes.count)
        var previousWasCR = false
        for byte in bytes {
            if byte == 0x0A && previousWasCR { previousWasCR = false; continue }
            previousWasCR = byte == 0x0D
            normalized.append(byte == 0x0D ? 0x0A : byte)
        }
        bytes = normalized
    }
    func isBlank(_ line: Range<Int>) -> Bool {
        for index in line {
            switch bytes[index] {
            case 0x20, 0x09, 0x0B, 0x0C: continue
            case 0x80...: return String(decoding: bytes[line], as: UTF8.self).allSatisfy(\.isWhitespace)
            default: return false
            }
        }
        return true
    }
    var first: Int?
    var end = 0
    var lineStart = 0
    for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
        if !isBlank(lineStart..<index) {
            if first == nil { first = lineStart }
            end = index
        }
        lineStart = index + 1
    }
    guard let first else { return "" }
    return String(decoding: bytes[first..<end], as: UTF8.self)
}
