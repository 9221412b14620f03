/*!
 What a message offers for unsubscribing, and which of it is safe to act on (issue 42):
 the one rule `hd-senders` shows and `hd-unsubscribe` follows.

 - one-click (RFC 8058 §3, §4): both headers, once each, `List-Unsubscribe-Post` exactly
   `List-Unsubscribe=One-Click`, an https URI in `List-Unsubscribe` that is safe to
   request (below), and a DKIM signature that Gmail's `Authentication-Results` says passed,
   for a domain aligned with the From address (the same, or one a subdomain of the other,
   as DMARC's relaxed alignment, which Gmail asks of bulk senders), where every signature
   of that domain and selector has an `h=` covering both `List-Unsubscribe` and
   `List-Unsubscribe-Post`. Anyone can write the two headers into unsigned mail, or mail
   signed by a domain of their own: the aligned signature is what says the sender did.
 - mailto (RFC 2369, RFC 6068): a `mailto:` URI with exactly one address, in a domain
   aligned with the From address, of a message with such an aligned passing signature:
   the message Hudson sends from the user's account goes only where the authenticated
   sender asked.
 - https: an https URI without one-click: a web page for a person, printed, never fetched.

 A URI is safe to request only when it is `https:` on port 443, names a host by a public
 DNS name (no IP literal, no userinfo, no `localhost`, `.local`, `.internal` or other
 name only a private network resolves), and is at most 2,048 bytes of printable ASCII;
 anything else (`javascript:`, `file:`, `http:`) is no method. hd-unsubscribe also
 refuses a name that resolves to a private, loopback or link-local address.
 */
import HudsonMail

public enum UnsubscribeMethod: String, Sendable, CaseIterable {
    case oneClick = "one-click"
    case https
    case mailto
}

/// A parsed `mailto:` URI (RFC 6068): one address, and the subject and body it asks for.
public struct MailtoRequest: Equatable, Sendable {
    public var address: String
    public var subject: String?
    public var body: String?

    public init(address: String, subject: String? = nil, body: String? = nil) {
        self.address = address
        self.subject = subject
        self.body = body
    }
}

public struct UnsubscribeOffer: Equatable, Sendable {
    /// The https URI a one-click POST goes to, when every RFC 8058 condition holds.
    public var oneClick: String?
    /// The first https URI that is safe to show (printed, not fetched).
    public var https: String?
    public var mailto: MailtoRequest?
    /// Why one-click is not offered when the message has List-Unsubscribe-Post.
    public var oneClickRefusal: String?

    public var methods: [UnsubscribeMethod] {
        (oneClick != nil ? [.oneClick] : []) + (https != nil ? [.https] : []) + (mailto != nil ? [.mailto] : [])
    }

    /// The longest URI acted on or shown.
    public static let maximumURIBytes = 2048
    /// Gmail's receiving servers' authserv-id (RFC 8601 §2.5): only its verdict counts.
    public static let gmailAuthServID = "mx.google.com"

    /// `allowLoopbackHTTP` is the tests' seam (HudsonCLI's TestHooks): it lets
    /// `http://127.0.0.1:PORT/...` stand for an https URI. Never set for users.
    /// `from`: the From address of the message the headers are from (nil when unknown:
    /// then neither one-click nor mailto is offered).
    public init(_ headers: ListHeaders, from: String?, allowLoopbackHTTP: Bool = false) {
        guard let field = headers.unsubscribe else { return }
        let uris = Self.uris(field)
        let safeHTTPS = uris.first { Self.isSafeHTTPS($0, allowLoopbackHTTP: allowLoopbackHTTP) }
        https = safeHTTPS
        let fromDomain = from.flatMap { $0.split(separator: "@").last.map { $0.lowercased() } }
        let authenticated = fromDomain.map { domain in Self.passingDKIM(headers.authenticationResults ?? "").contains {
            Self.aligned($0.domain, domain)
        } } ?? false
        if authenticated, let fromDomain {
            mailto = uris.lazy.compactMap(Self.mailto).first {
                Self.aligned($0.address.split(separator: "@").last.map { $0.lowercased() } ?? "", fromDomain)
            }
        }
        guard let post = headers.unsubscribePost else { return }
        guard post.trimmingSpaces == "List-Unsubscribe=One-Click" else {
            oneClickRefusal = "List-Unsubscribe-Post is not List-Unsubscribe=One-Click"
            return
        }
        guard let target = safeHTTPS else {
            oneClickRefusal = "List-Unsubscribe has no https URI that is safe to request"
            return
        }
        guard let fromDomain, Self.signatureCoversListHeaders(headers, alignedWith: fromDomain) else {
            oneClickRefusal = "no DKIM signature that passed, aligned with the From address, covers List-Unsubscribe and List-Unsubscribe-Post"
            return
        }
        oneClick = target
    }

    public init() {}

    /// Whether the signer of a message vouches for it as mail of `identity` (a List-Id or
    /// an address's domain): Gmail's Authentication-Results has `dkim=pass` for a domain
    /// aligned with both the From address's domain and `identity`. The offer of a message
    /// another domain signed, or no one, is not the group's (RFC 8058 §4: the signature
    /// is what says the sender made the offer).
    public static func vouched(_ headers: ListHeaders, from: String, identity: String) -> Bool {
        guard let fromDomain = from.split(separator: "@").last.map({ $0.lowercased() }) else { return false }
        let identity = identity.lowercased()
        return passingDKIM(headers.authenticationResults ?? "").contains {
            aligned($0.domain, fromDomain) && aligned($0.domain, identity)
        }
    }

    /// The URIs of a List-Unsubscribe field, in order: each in angle brackets (RFC 2369 §2),
    /// whitespace inside removed (§2: folding may break a URI), comments outside ignored.
    static func uris(_ field: String) -> [String] {
        var result: [String] = []
        var current: String?
        for character in field {
            if character == "<" { current = ""; continue }
            if character == ">" {
                if let uri = current, !uri.isEmpty { result.append(uri) }
                current = nil
                continue
            }
            if current != nil && !character.isWhitespace { current!.append(character) }
        }
        return result
    }

    /// Whether `uri` may be requested: https, a DNS host name, no userinfo, printable ASCII, bounded.
    public static func isSafeHTTPS(_ uri: String, allowLoopbackHTTP: Bool = false) -> Bool {
        guard uri.utf8.count <= maximumURIBytes, uri.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        let lower = uri.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = uri.dropFirst(8)
        } else if allowLoopbackHTTP && lower.hasPrefix("http://127.0.0.1:") {
            return !uri.dropFirst(7).prefix { $0 != "/" && $0 != "?" && $0 != "#" }.contains("@")
        } else {
            return false
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@"), !authority.contains("\\") else { return false }
        var host = Substring(authority)
        if let colon = authority.lastIndex(of: ":") {
            // Only https's own port: another is a service the sender has no business
            // making the user's machine post to (an intranet's admin port).
            guard authority[authority.index(after: colon)...] == "443" else { return false }
            host = authority[..<colon]
        }
        return isDNSHostName(host) && !isPrivateName(host)
    }

    /// Names only a local or private network resolves (RFC 6761, RFC 6762, RFC 8375, and
    /// the suffixes in common private use): a sender's URI naming one points inside the
    /// user's network.
    static func isPrivateName(_ host: Substring) -> Bool {
        let name = host.lowercased().hasSuffix(".") ? String(host.lowercased().dropLast()) : host.lowercased()
        return ["localhost", "local", "internal", "intranet", "lan", "home", "corp", "private", "home.arpa", "invalid",
                "onion"].contains { name == $0 || name.hasSuffix("." + $0) }
    }

    /// Why a host whose name resolved to `addresses` (4 bytes each for IPv4, 16 for IPv6,
    /// in network order) must not be requested, or nil: none at all, or one of them this
    /// machine's or a private network's. One such address is enough: the connection may
    /// go to any of them. hd-unsubscribe's OneClickPost resolves the name and asks this.
    public static func privateAddressRefusal(_ addresses: [[UInt8]]) -> String? {
        if addresses.isEmpty { return "the name does not resolve" }
        let inside = addresses.contains { $0.count == 4 ? isPrivate(v4: $0) : isPrivate(v6: $0) }
        return inside ? "the name resolves to an address of this machine or a private network" : nil
    }

    /// 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16, 192.0.0/24,
    /// 198.18/15, 224/4 and above (RFC 6890's special-purpose registry, in short).
    public static func isPrivate(v4 b: [UInt8]) -> Bool {
        guard b.count == 4 else { return true }
        return b[0] == 0 || b[0] == 10 || b[0] == 127 || b[0] >= 224
            || (b[0] == 100 && (64...127).contains(b[1])) || (b[0] == 169 && b[1] == 254)
            || (b[0] == 172 && (16...31).contains(b[1])) || (b[0] == 192 && b[1] == 168)
            || (b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && (18...19).contains(b[1]))
    }

    /// ::, ::1, fc00::/7, fe80::/10, ff00::/8, and IPv4-mapped addresses by their IPv4 rule.
    public static func isPrivate(v6 b: [UInt8]) -> Bool {
        guard b.count == 16 else { return true }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return isPrivate(v4: Array(b[12..<16])) }
        if b[0..<15].allSatisfy({ $0 == 0 }) && (b[15] == 0 || b[15] == 1) { return true }
        return (b[0] & 0xFE) == 0xFC || (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) || b[0] == 0xFF
    }

    /// DMARC's relaxed alignment without a public-suffix list: the same domain, or one a
    /// subdomain of the other.
    static func aligned(_ first: String, _ second: String) -> Bool {
        !first.isEmpty && !second.isEmpty && (first == second || first.hasSuffix("." + second) || second.hasSuffix("." + first))
    }

    /// Letters, digits, hyphens and dots, at least one dot, a last label that is not all
    /// digits: so no IPv4 literal (`1.2.3.4`, `0x7f.1`), no IPv6 literal (`[::1]`), no bare name.
    static func isDNSHostName(_ host: Substring) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCIILetterOrDigit || $0 == "-" }
        }) else { return false }
        let last = labels.last!
        return !last.allSatisfy(\.isASCIIDigit) && !(last.lowercased().hasPrefix("0x"))
            && !labels.allSatisfy { $0.allSatisfy(\.isASCIIDigit) || $0.lowercased().hasPrefix("0x") }
    }

    /// A `mailto:` URI with one address and optional subject and body (RFC 6068 §2), or nil.
    public static func mailto(_ uri: String) -> MailtoRequest? {
        guard uri.utf8.count <= maximumURIBytes, uri.lowercased().hasPrefix("mailto:") else { return nil }
        let rest = uri.dropFirst(7)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = percentDecoded(parts[0]), !address.contains(","), isPlainAddress(address) else { return nil }
        var request = MailtoRequest(address: address)
        if parts.count == 2 {
            for field in parts[1].split(separator: "&") {
                let pair = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2 else { continue }
                let value = percentDecoded(pair[1])
                switch pair[0].lowercased() {
                case "subject": if let value { request.subject = value }
                // RFC 6068 §5: line breaks in a body are written %0D%0A; only there are they
                // allowed, as CRLF. In the subject they stay refused (a header's line break).
                case "body": request.body = percentDecoded(pair[1], lineBreaks: true)
                default: continue  // RFC 6068 §6: other header fields are not set from a URI we did not write
                }
            }
        }
        return request
    }

    /// local@domain of printable ASCII, nothing a header could break on.
    static func isPlainAddress(_ text: String) -> Bool {
        let pieces = text.split(separator: "@", omittingEmptySubsequences: false)
        guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty, text.utf8.count <= 254 else { return false }
        return text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">")
            && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "(") && $0 != UInt8(ascii: ")") && $0 != UInt8(ascii: ";") }
            && isDNSHostName(pieces[1])
    }

    /// Percent-decoding (RFC 3986 §2.1) into UTF-8 text; nil for a bad escape, invalid
    /// UTF-8 or a control character (a subject must not carry a line break into a header).
    /// With `lineBreaks` (a body), CR and LF are allowed and each break becomes CRLF.
    static func percentDecoded(_ text: Substring, lineBreaks: Bool = false) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                      let high = QuotedPrintable.hexValue(utf8[first]), let low = QuotedPrintable.hexValue(utf8[utf8.index(after: first)]) else { return nil }
                bytes.append(high << 4 | low)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self),
              !decoded.unicodeScalars.contains(where: {
                  ($0.value < 0x20 && $0 != "\t" && !(lineBreaks && ($0 == "\r" || $0 == "\n"))) || $0.value == 0x7F
              }) else { return nil }
        guard lineBreaks else { return decoded }
        var scalars = String.UnicodeScalarView()
        var afterCR = false
        for scalar in decoded.unicodeScalars {
            if scalar == "\n" && afterCR { afterCR = false; continue }  // the LF of a CRLF, written already
            afterCR = scalar == "\r"
            if scalar == "\r" || scalar == "\n" { scalars.append(contentsOf: "\r\n".unicodeScalars) } else { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// RFC 8058 §4 through Gmail's verdict: Gmail's Authentication-Results (authserv-id
    /// mx.google.com) has `dkim=pass` for a domain aligned with `fromDomain`, and every
    /// signature of that domain and selector (`header.d`/`header.i`, `header.s`) has an
    /// `h=` naming both list headers: a forged second signature with the same `d=` and
    /// `s=` beside the one that passed cannot lend its `h=` to it.
    static func signatureCoversListHeaders(_ headers: ListHeaders, alignedWith fromDomain: String) -> Bool {
        guard let results = headers.authenticationResults, let signatures = headers.dkimSignatures else { return false }
        let summaries = signatures.split(separator: "\n").map { DKIMTags(String($0)) }
        for pass in passingDKIM(results) where aligned(pass.domain, fromDomain) {
            let matching = summaries.filter { signature in
                guard let domain = signature["d"]?.lowercased(), !domain.isEmpty else { return false }
                return (pass.domain == domain || pass.domain.hasSuffix("." + domain))
                    && (pass.selector == nil || pass.selector == signature["s"]?.lowercased())
            }
            let covering = matching.filter { signature in
                let signed = Set((signature["h"] ?? "").lowercased().split(separator: ":").map(String.init))
                return signed.contains("list-unsubscribe") && signed.contains("list-unsubscribe-post")
            }
            if !matching.isEmpty && covering.count == matching.count { return true }
        }
        return false
    }

    /// The `dkim=pass` results of Gmail's own Authentication-Results (RFC 8601 §2.2): the
    /// domain (`header.d`, else the domain of `header.i`) and selector, lowercased.
    static func passingDKIM(_ field: String) -> [(domain: String, selector: String?)] {
        let clauses = withoutComments(field).split(separator: ";").map { $0.trimmingSpaces }
        guard let serverID = clauses.first?.split(whereSeparator: \.isWhitespace).first,
              serverID.lowercased() == gmailAuthServID else { return [] }
        var result: [(String, String?)] = []
        for clause in clauses.dropFirst() {
            let words = clause.split(whereSeparator: \.isWhitespace)
            guard words.first?.lowercased() == "dkim=pass" else { continue }
            var domain: String?
            var selector: String?
            for word in words.dropFirst() {
                let pair = word.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "header.d": domain = pair[1].lowercased()
                case "header.i" where domain == nil:
                    domain = pair[1].split(separator: "@").last.map { $0.lowercased() }
                case "header.s": selector = pair[1].lowercased()
                default: continue
                }
            }
            if let domain, !domain.isEmpty { result.append((domain, selector)) }
        }
        return result
    }

    /// The text without RFC 5322 comments (parenthesised, nested).
    static func withoutComments(_ text: String) -> String {
        var depth = 0
        var out = ""
        for character in text {
            if character == "(" { depth += 1; continue }
            if character == ")" { depth = max(0, depth - 1); continue }
            if depth == 0 { out.append(character) }
        }
        return out
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
    var isASCIILetterOrDigit: Bool { isASCII && (isLetter || isNumber) }
}
