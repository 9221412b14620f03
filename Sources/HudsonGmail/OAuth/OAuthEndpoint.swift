/*!
 The fixed facts about Google's OAuth endpoints that every other OAuth file relies on: the default
 authorisation and token URLs (CONTRACT.md "Endpoints"), the scope Hudson asks for (gmail-api.md §7,
 "gmail.modify ... enough for every Hudson command"), the rule that plain http is accepted only for
 loopback hosts (CONTRACT.md "Endpoints"), and the one percent-encoder used for both the consent URL
 query and the token request body (application/x-www-form-urlencoded), so the two can never disagree.
 */
import Foundation

/// Default endpoints and the transport rule for OAuth URLs.
public enum OAuthEndpoint {
    /// Google's token endpoint (gmail-api.md §7 steps 6–7).
    public static let defaultTokenURL = URL(string: "https://oauth2.googleapis.com/token")!
    /// Google's consent page (gmail-api.md §7 step 4).
    public static let defaultAuthURL = URL(string: "https://accounts.google.com/o/oauth2/v2/auth")!

    /// Throws unless `url` is https, or plain http to a loopback host (127.0.0.0/8, `localhost`, `[::1]`),
    /// as CONTRACT.md "Endpoints" requires: tokens and client secrets never cross a network in clear text.
    public static func validate(_ url: URL) throws {
        let scheme = url.scheme?.lowercased()
        let host = url.host ?? ""
        switch scheme {
        case "https" where !host.isEmpty:
            return
        case "http" where isLoopback(host: host):
            return
        default:
            throw OAuthTokenError.insecureEndpoint(redactedForMessages(url))
        }
    }

    /// `url` without user info, query or fragment, which could carry credentials, for error messages.
    static func redactedForMessages(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<invalid URL>" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "<invalid URL>"
    }

    /// Whether `host` names the loopback interface: `localhost`, an IPv4 literal in 127.0.0.0/8, or `::1`.
    public static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        // Strictly four decimal octets, so "127.0.0.1.example.com" is not loopback.
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        let values = octets.map { part -> Int? in
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(part)
        }
        guard values.allSatisfy({ $0 != nil && $0! <= 255 }) else { return false }
        return values[0] == 127
    }
}

/// OAuth scopes Hudson uses (gmail-api.md §7, "Scopes").
public enum OAuthScope {
    /// Read, label, trash and send; no permanent delete. Enough for every Hudson command.
    public static let gmailModify = "https://www.googleapis.com/auth/gmail.modify"
    /// Full access, which implies every other Gmail scope.
    public static let fullMail = "https://mail.google.com/"

    /// The scopes of `requested` that `granted` does not cover. Granular consent lets the user untick
    /// scopes, so a token response may carry fewer than were asked for (gmail-api.md §7 step 6).
    public static func missing(requested: [String], granted: [String]) -> [String] {
        let grantedSet = Set(granted)
        if grantedSet.contains(fullMail) { return [] }
        return requested.filter { !grantedSet.contains($0) }
    }

    /// Splits a space-separated `scope` value (RFC 6749 §3.3).
    static func split(_ value: String) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
    }
}

/// Percent-encoding for query strings and form bodies: everything but RFC 3986 unreserved characters is
/// escaped (so `+`, `/`, `:` and space are always encoded and decode the same under either convention).
enum OAuthFormEncoding {
    static func encode(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// `k=v&k=v` with both sides encoded, in the given order.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// Decodes one form component: `+` is a space, then percent-escapes; nil for bad escapes or non-UTF-8.
    static func decode(_ component: Substring) -> String? {
        String(component).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// Parses `a=1&b=2`; for a repeated key the first value wins (a stray duplicate cannot override it).
    static func parseQuery(_ query: Substring) -> [String: String]? {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = decode(parts[0]) else { return nil }
            guard let value = parts.count > 1 ? decode(parts[1]) : "" else { return nil }
            if result[key] == nil { result[key] = value }
        }
        return result
    }
}
