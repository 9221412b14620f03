/*!
 The headers a sender's unsubscribe offer rests on (issue 42), kept per message by sync
 (SnapshotMapping asks Gmail's metadata for them) and, for messages stored before, by
 migration 035 from the stored RFC 822 source:

 - `List-Unsubscribe` (RFC 2369) and `List-Unsubscribe-Post` (RFC 8058 §3.1), as sent;
 - Gmail's verdict, the first `Authentication-Results` header (RFC 8601), the one Gmail's
   receiving server puts on top;
 - of each `DKIM-Signature`, only its `d=`, `s=` and `h=` tags: what RFC 8058 §4 needs to
   know whether a passing signature covered both list headers, without the signatures'
   hundreds of bytes of `b=` and `bh=`.

 Kept only when the message carries `List-Unsubscribe`: the other three matter only then.
 */
import HudsonMail

/// The list headers of one message; all nil when it has no `List-Unsubscribe`.
public struct ListHeaders: Equatable, Sendable {
    public var unsubscribe: String?
    public var unsubscribePost: String?
    public var authenticationResults: String?
    /// One line per DKIM-Signature: `d=DOMAIN; s=SELECTOR; h=NAME:NAME...`.
    public var dkimSignatures: String?

    public init(unsubscribe: String? = nil, unsubscribePost: String? = nil, authenticationResults: String? = nil,
                dkimSignatures: String? = nil) {
        self.unsubscribe = unsubscribe
        self.unsubscribePost = unsubscribePost
        self.authenticationResults = authenticationResults
        self.dkimSignatures = dkimSignatures
    }

    /// The header names a metadata fetch must ask for (gmail-api.md §2.3 `metadataHeaders`).
    public static let headerNames = ["List-Unsubscribe", "List-Unsubscribe-Post", "Authentication-Results", "DKIM-Signature"]

    /// Longest value kept of one header: a header longer than this is no unsubscribe offer
    /// any client would act on (RFC 2369 URIs are short), and a store row stays small. A
    /// longer List-Unsubscribe is cut (a URI cut short loses its closing `>` and is no
    /// URI); a longer Authentication-Results or DKIM summary is not kept at all (`whole`).
    public static let maximumValueBytes = 4096

    /// The list headers among `headers` (name, value; in message order, duplicates kept).
    public init(headers: [(name: String, value: String)]) {
        func first(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name }.map { Self.unfolded($0.value) }
        }
        // A header added above a signed message is not what its signature vouches for (a
        // verifier checks the last instance of a signed header, RFC 6376 §5.4.2), and a
        // message with two offers has no one offer to trust: none is kept.
        func count(_ name: String) -> Int { headers.filter { $0.name.lowercased() == name }.count }
        guard let unsubscribe = first("list-unsubscribe"), !unsubscribe.isEmpty,
              count("list-unsubscribe") == 1, count("list-unsubscribe-post") <= 1 else {
            self.init()
            return
        }
        let signatures = headers.filter { $0.name.lowercased() == "dkim-signature" }
            .compactMap { Self.signatureSummary(Self.unfolded($0.value)) }
        self.init(unsubscribe: Self.bounded(unsubscribe), unsubscribePost: first("list-unsubscribe-post").map(Self.bounded),
                  authenticationResults: first("authentication-results").flatMap(Self.whole),
                  dkimSignatures: signatures.isEmpty ? nil : Self.whole(signatures.joined(separator: "\n")))
    }

    /// The list headers of an RFC 822 source's header block.
    public init(source: [UInt8]) {
        self.init(headers: RFC822.parseHeaders(source).map { (name: $0.name, value: $0.value) })
    }

    /// `d=`, `s=` and `h=` of a DKIM-Signature (RFC 6376 §3.5), or nil without a `d=`.
    static func signatureSummary(_ value: String) -> String? {
        let tags = DKIMTags(value)
        guard let domain = tags["d"], !domain.isEmpty else { return nil }
        return "d=\(domain); s=\(tags["s"] ?? ""); h=\(tags["h"] ?? "")"
    }

    /// Unfolds (RFC 5322 §2.2.3) and trims; a value with a control character other than a
    /// tab loses it, so no stored header can carry a line break into a later reader.
    static func unfolded(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            if scalar == "\r" || scalar == "\n" { continue }
            if scalar.value < 0x20 && scalar != "\t" { continue }
            if scalar.value == 0x7F { continue }
            out.unicodeScalars.append(scalar)
        }
        return String(out.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// A verdict or signature summary kept only whole: cut, `header.i=@news.example.org.attacker.example`
    /// would read as a pass for news.example.org. Over the bound, nothing is kept: the
    /// verdict is then unknown, and no one-click or mailto is offered (RFC 8058 §4).
    static func whole(_ value: String) -> String? {
        value.utf8.count <= maximumValueBytes ? value : nil
    }

    static func bounded(_ value: String) -> String {
        value.utf8.count <= maximumValueBytes ? value : String(decoding: value.utf8.prefix(maximumValueBytes), as: UTF8.self)
    }
}

/// The `tag=value` list of a DKIM-Signature or similar header (RFC 6376 §3.2): names
/// lowercased, folding whitespace removed from values.
struct DKIMTags {
    private var tags: [String: String] = [:]

    init(_ text: String) {
        for item in text.split(separator: ";") {
            guard let equals = item.firstIndex(of: "=") else { continue }
            let name = item[..<equals].filter { !$0.isWhitespace }.lowercased()
            let value = item[item.index(after: equals)...].filter { !$0.isWhitespace }
            if tags[name] == nil { tags[name] = String(value) }
        }
    }

    subscript(_ name: String) -> String? { tags[name] }
}
