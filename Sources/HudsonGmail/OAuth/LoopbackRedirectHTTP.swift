/*!
 The HTTP side of the loopback redirect, as pure functions over bytes so it can be tested without
 sockets: parsing the one request line a browser sends to `http://127.0.0.1:PORT/?state=...&code=...`
 (gmail-api.md §7 step 5), deciding what the redirect means (the code, a declined consent, a state
 mismatch, or a request to ignore such as `/favicon.ico`), and rendering the short page the browser shows.
 Every page is sent with `Referrer-Policy: no-referrer` and `Cache-Control: no-store`, because the page's
 own URL carries the authorisation code; anything echoed from the query is HTML-escaped and reduced to a
 short token, and the code and state are never echoed.
 */

/// A failure of the browser redirect.
public enum LoopbackRedirectError: OAuthFailure, Equatable {
    /// The user declined the consent screen (`error=access_denied`, gmail-api.md §7 step 5).
    case accessDenied
    /// Google redirected with another `error` value.
    case authorisationFailed(error: String)
    /// The `state` parameter differs from the one Hudson sent (RFC 6749 §10.12): a forged or stale redirect.
    case stateMismatch
    /// A redirect with the right state but no `code`.
    case missingCode
    /// No redirect arrived within the timeout.
    case timedOut(seconds: Int)
    /// `waitForRedirect` was called a second time; a listener serves one redirect.
    case alreadyUsed
    /// A socket call failed.
    case socket(operation: String, errno: Int32)

    public var kind: OAuthFailureKind {
        switch self {
        case .accessDenied, .authorisationFailed, .stateMismatch: return .notAuthorised
        case .timedOut, .socket: return .temporary
        case .missingCode, .alreadyUsed: return .unexpected
        }
    }

    public var description: String {
        switch self {
        case .accessDenied:
            return "access was declined on Google's consent screen; run 'hd-auth login' again and choose Allow"
        case .authorisationFailed(let error):
            return "Google's consent page reported an error (\(error)); run 'hd-auth login' again"
        case .stateMismatch:
            return "the browser redirect did not carry the state Hudson sent, so it was rejected (a stale tab "
                + "or a forged request); run 'hd-auth login' again"
        case .missingCode:
            return "the browser redirect carried no authorisation code; run 'hd-auth login' again"
        case .timedOut(let seconds):
            return "no answer from the browser within \(seconds) s; run 'hd-auth login' again and complete "
                + "the consent in the browser"
        case .alreadyUsed:
            return "this loopback listener has already served its redirect"
        case .socket(let operation, let code):
            return "loopback listener: \(operation) failed (errno \(code))"
        }
    }
}

/// Parsing and answering the redirect request.
enum LoopbackRedirectHTTP {
    /// What one request asks for.
    enum Request: Equatable {
        /// A request for the redirect path, with its decoded query.
        case redirect([String: String])
        /// Any other path or method (`/favicon.ico`, a HEAD ...): answered 404, then keep waiting.
        case other
        /// Not an HTTP request line.
        case malformed
    }

    /// What the redirect means, and the bytes to answer with.
    enum Outcome: Equatable {
        case code(String)
        case failure(LoopbackRedirectError)
        /// Not a redirect after all (no query at all): answer and keep waiting.
        case ignore
    }

    /// Whether `buffer` holds a complete request head (request line and headers).
    static func hasCompleteHead(_ buffer: [UInt8]) -> Bool {
        guard buffer.count >= 2 else { return false }
        for index in 1..<buffer.count where buffer[index] == 0x0A {
            if buffer[index - 1] == 0x0A { return true }
            if index >= 3, buffer[index - 1] == 0x0D, buffer[index - 2] == 0x0A { return true }
        }
        return false
    }

    /// Parses the request line of `head`; only `GET <path>?<query> HTTP/x` for `expectedPath` is a redirect.
    static func parse(head: [UInt8], expectedPath: String) -> Request {
        let lineEnd = head.firstIndex(of: 0x0A) ?? head.endIndex
        guard let line = String(validating: head[..<lineEnd], as: UTF8.self) else { return .malformed }
        let parts = line.loopbackTrimmingSuffix("\r").split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else { return .malformed }
        var target = parts[1]
        // Absolute-form targets (RFC 9112 §3.2.2) are legal; keep only the path and query.
        if target.hasPrefix("http://"), let slash = target.dropFirst(7).firstIndex(of: "/") { target = target[slash...] }
        let path: Substring
        let query: Substring
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = target
            query = ""
        }
        guard parts[0] == "GET", path == expectedPath else { return .other }
        guard let values = OAuthFormEncoding.parseQuery(query) else { return .malformed }
        return .redirect(values)
    }

    /// Decides what a redirect query means. The state is checked first, so a forged `error` is not believed.
    static func evaluate(_ query: [String: String], expectedState: String) -> Outcome {
        if query.isEmpty { return .ignore }
        guard let state = query["state"], constantTimeEqual(state, expectedState) else {
            return .failure(.stateMismatch)
        }
        if let error = query["error"] {
            return error == "access_denied" ? .failure(.accessDenied) : .failure(.authorisationFailed(error: token(error)))
        }
        guard let code = query["code"], !code.isEmpty else { return .failure(.missingCode) }
        return .code(code)
    }

    /// The complete HTTP response for an outcome.
    static func response(for outcome: Outcome) -> [UInt8] {
        switch outcome {
        case .code:
            return page(status: "200 OK", title: "Hudson is authorised",
                        message: "Hudson is authorised; you can close this tab.")
        case .ignore:
            return page(status: "400 Bad Request", title: "Hudson",
                        message: "This address waits for Google's redirect after you sign in.")
        case .failure(.stateMismatch):
            return page(status: "400 Bad Request", title: "Hudson: request rejected",
                        message: "This response does not match the request Hudson made (state mismatch), so it "
                            + "was rejected. Run hd-auth login again.")
        case .failure(.accessDenied):
            return page(status: "200 OK", title: "Hudson is not authorised",
                        message: "Access was declined, so Hudson is not authorised. You can close this tab.")
        case .failure(let error):
            return page(status: "400 Bad Request", title: "Hudson is not authorised",
                        message: "Hudson is not authorised: \(error.description). You can close this tab.")
        }
    }

    /// A 404 for anything that is not the redirect (`/favicon.ico`).
    static let notFound: [UInt8] = raw(status: "404 Not Found", type: "text/plain; charset=utf-8", body: "not found\n")

    /// A 400 for a request that is not HTTP, or whose head is too large.
    static let badRequest: [UInt8] = raw(status: "400 Bad Request", type: "text/plain; charset=utf-8", body: "bad request\n")

    private static func page(status: String, title: String, message: String) -> [UInt8] {
        let body = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>\(escape(title))</title></head>"
            + "<body style=\"font-family: sans-serif; margin: 3em\"><h1>\(escape(title))</h1>"
            + "<p>\(escape(message))</p></body></html>\n"
        return raw(status: status, type: "text/html; charset=utf-8", body: body)
    }

    private static func raw(status: String, type: String, body: String) -> [UInt8] {
        let bytes = Array(body.utf8)
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(bytes.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n"
            + "Connection: close\r\n\r\n"
        return Array(head.utf8) + bytes
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// An `error` value from the query reduced to an OAuth error-code shape, at most 64 characters.
    private static func token(_ value: String) -> String {
        let kept = value.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)) }
        let text = String(String.UnicodeScalarView(kept.prefix(64)))
        return text.isEmpty ? "unknown error" : text
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

private extension StringProtocol {
    func loopbackTrimmingSuffix(_ suffix: String) -> SubSequence {
        hasSuffix(suffix) ? self[..<index(endIndex, offsetBy: -suffix.count)] : self[...]
    }
}
