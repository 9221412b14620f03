/*!
 The input of every decoder here: one node of a MIME tree, shaped like Gmail's `MessagePart`
 (gmail-api.md §2.3) so that sync can map the JSON field by field, and filled the same way by
 `RFC822.parse` from raw mail. The body is held as bytes, not as the base64url text Gmail
 sends: sync decodes `body.data` once at the boundary with `Base64.decode` (lenient about
 padding and alphabet, §8), and the raw parser, which already has bytes, never re-encodes.
 */

/// One node of a MIME tree, as Gmail's `format=full` payload describes it.
public struct MIMEPart: Sendable, Equatable {
    /// One header line, unfolded; the name keeps its original case.
    public struct Header: Sendable, Equatable, Hashable {
        public var name: String
        public var value: String

        /// Creates a header line (memberwise).
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Gmail's `partId`: "" for the root, "0", "1", "0.1", ... (treat as opaque).
    public var partID: String
    /// `type/subtype` as Gmail reports it (`mimeType`); compared case-insensitively.
    public var mimeType: String
    /// Gmail's `filename`: set for attachments, else empty.
    public var filename: String
    /// The part's headers in message order, duplicates kept (gmail-api.md §8).
    public var headers: [Header]
    /// The content bytes (`body.data` after base64url decoding); nil when none were delivered:
    /// containers, and parts whose content must be fetched by `attachmentID`.
    public var bodyData: [UInt8]?
    /// Gmail's `body.attachmentId`, for `messages.attachments.get`.
    public var attachmentID: String?
    /// Gmail's `body.size`: the content length in bytes after transfer decoding.
    public var size: Int
    /// The children of a `multipart/*` part, or the one embedded message of a `message/rfc822`.
    public var parts: [MIMEPart]
    /// Whether `bodyData` still carries the Content-Transfer-Encoding named in the headers.
    /// Gmail's `body.data` has it undone already and must not be decoded twice (§8), and so has
    /// `RFC822.parse`; set this only for bytes taken from an undecoded source.
    public var bodyIsTransferEncoded: Bool

    /// Creates a part; `size` defaults to the length of `bodyData`.
    public init(
        partID: String = "",
        mimeType: String,
        filename: String = "",
        headers: [Header] = [],
        bodyData: [UInt8]? = nil,
        attachmentID: String? = nil,
        size: Int? = nil,
        parts: [MIMEPart] = [],
        bodyIsTransferEncoded: Bool = false
    ) {
        self.partID = partID
        self.mimeType = mimeType
        self.filename = filename
        self.headers = headers
        self.bodyData = bodyData
        self.attachmentID = attachmentID
        self.size = size ?? bodyData?.count ?? 0
        self.parts = parts
        self.bodyIsTransferEncoded = bodyIsTransferEncoded
    }

    /// The first value of a header, matched case-insensitively (RFC 5322 §1.2.2).
    public func header(_ name: String) -> String? {
        headers.value(of: name)
    }

    /// The lower-cased `mimeType`, or `text/plain` when it is empty.
    public var normalizedMIMEType: String {
        let type = mimeType.trimmingWhitespace().lowercased()
        return type.isEmpty ? "text/plain" : type
    }

    /// The parsed Content-Type header (empty when absent).
    public var contentType: MIMEHeaderValue {
        MIMEHeaderValue.parse(header("Content-Type") ?? "")
    }

    /// The parsed Content-Disposition header, or nil when absent.
    public var contentDisposition: MIMEHeaderValue? {
        header("Content-Disposition").map(MIMEHeaderValue.parse)
    }

    /// The Content-ID without its angle brackets, or nil when absent or empty.
    public var contentID: String? {
        guard let raw = header("Content-ID") else { return nil }
        let id = Self.stripAngleBrackets(raw)
        return id.isEmpty ? nil : id
    }

    /// `<id@host>` to `id@host`, also for the `start` parameter of multipart/related.
    static func stripAngleBrackets(_ text: String) -> String {
        var id = text.trimmingWhitespace()
        if id.hasPrefix("<") { id.removeFirst() }
        if id.hasSuffix(">") { id.removeLast() }
        return id.trimmingWhitespace()
    }

    /// The body bytes with any pending Content-Transfer-Encoding undone (see
    /// ``bodyIsTransferEncoded``), or nil when no data was delivered.
    public var decodedBody: [UInt8]? {
        guard let bodyData else { return nil }
        guard bodyIsTransferEncoded else { return bodyData }
        return TransferEncoding.decode(bodyData, encoding: header("Content-Transfer-Encoding"))
    }
}

extension Array where Element == MIMEPart.Header {
    /// The first value of the header named `name`, compared case-insensitively.
    public func value(of name: String) -> String? {
        first(where: { equalsIgnoringASCIICase($0.name, name) })?.value
    }

    /// Every value of the header named `name`, in message order (e.g. all `Received`).
    public func values(of name: String) -> [String] {
        filter { equalsIgnoringASCIICase($0.name, name) }.map(\.value)
    }
}

/// Content-Transfer-Encoding (RFC 2045 §6) in one place, for the raw parser and for parts
/// flagged ``MIMEPart/bodyIsTransferEncoded``.
enum TransferEncoding {
    /// Undoes `base64` and `quoted-printable`; `7bit`, `8bit`, `binary`, a missing and an
    /// unknown encoding leave the bytes as they are (RFC 2045 §6.4 says an unknown encoding
    /// makes the part opaque; raw bytes are the most useful opaque form).
    static func decode(_ bytes: [UInt8], encoding: String?) -> [UInt8] {
        let name = MIMEHeaderValue.parse(encoding ?? "").value
        switch name {
        case "base64": return Base64.decode(bytes: bytes)
        case "quoted-printable": return QuotedPrintable.decode(bytes)
        default: return bytes
        }
    }
}

/// ASCII whitespace as MIME and HTML use it: space, tab, CR, LF and form feed.
func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0C}"
}

extension String {
    /// Runs of whitespace (line breaks included) as single spaces, trimmed at both ends.
    func collapsingWhitespace() -> String {
        split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// ASCII case-insensitive equality, without allocating lower-cased copies.
func equalsIgnoringASCIICase(_ left: String, _ right: String) -> Bool {
    var rightBytes = right.utf8.makeIterator()
    for leftByte in left.utf8 {
        guard let rightByte = rightBytes.next() else { return false }
        if leftByte != rightByte && lowerASCII(leftByte) != lowerASCII(rightByte) { return false }
    }
    return rightBytes.next() == nil
}

func lowerASCII(_ byte: UInt8) -> UInt8 {
    byte >= 65 && byte <= 90 ? byte + 32 : byte
}
