/*!
 The client of Google's token endpoint: the authorisation-code exchange (gmail-api.md §7 step 6, with the
 PKCE verifier and the same redirect_uri as the consent URL) and the refresh-token grant (§7 step 7), both
 form-encoded POSTs with client_id and client_secret in the body. It decodes the token response, checks
 that the granted `scope` still covers what Hudson asked for (granular consent can narrow it), and turns
 the OAuth error shape `{"error", "error_description"}` into `OAuthTokenError`: `invalid_grant` says
 how to recover (including the 7-day expiry of "Testing" apps), `invalid_client` is configuration, and
 network failures, 429 and 5xx become `OAuthTransientError`. Server text is scrubbed of every secret the
 request carried before it reaches an error, so no token, code, verifier or client secret is ever in one.
 What an endpoint can make it do is bounded (docs/reliability.md, "What servers are allowed to make Hudson
 do"): one request lasts at most `requestTimeout`, connection to last byte; at most `maximumAnswerBytes`
 of an answer is read; a token longer than `maximumTokenLength` is refused, so it never reaches the
 credentials file. An answer outside the protocol is `malformedResponse` or `oversized`: the endpoint is
 broken, not the grant.
 */
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A short-lived access token (about one hour, gmail-api.md §7 step 7).
public struct OAuthAccessToken: Sendable, Equatable {
    /// The bearer token. Never print or log it (CONTRACT.md "Files").
    public let value: String
    public let expiresAt: Date
    /// The granted scopes, as the endpoint reported them.
    public let scopes: [String]

    public init(value: String, expiresAt: Date, scopes: [String]) {
        self.value = value
        self.expiresAt = expiresAt
        self.scopes = scopes
    }

    /// Whether the token is expired, or expires within `margin` seconds of `now`.
    public func expires(within margin: TimeInterval, of now: Date) -> Bool {
        expiresAt.timeIntervalSince(now) <= margin
    }
}

/// The result of a code exchange: an access token and the long-lived refresh token.
public struct OAuthTokens: Sendable, Equatable {
    public let accessToken: OAuthAccessToken
    /// The refresh token. Stored only in the credentials file (CONTRACT.md "Files").
    public let refreshToken: String

    public init(accessToken: OAuthAccessToken, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    public var scopes: [String] { accessToken.scopes }
}

extension OAuthAccessToken: CustomStringConvertible, CustomDebugStringConvertible {
    /// Redacted, so that interpolating a token by mistake cannot leak it.
    public var description: String { "OAuthAccessToken(<redacted>, expires_at: \(expiresAt))" }
    public var debugDescription: String { description }
}

extension OAuthTokens: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "OAuthTokens(\(accessToken), refresh_token: <redacted>)" }
    public var debugDescription: String { description }
}

/// Talks to the token endpoint for one OAuth client.
public struct OAuthTokenClient: Sendable {
    /// The most of a token endpoint's answer that is read. Google's answers are a few hundred bytes.
    public static let maximumAnswerBytes = 64 * 1024
    /// The longest access or refresh token accepted. Google's are well under 2 KB.
    public static let maximumTokenLength = 8 * 1024

    public let clientID: String
    private let clientSecret: String
    public let tokenEndpoint: URL
    /// The scopes a token must cover; a narrower grant is `OAuthTokenError.scopeNotGranted`.
    public let requiredScopes: [String]
    private let session: URLSession
    /// The longest one token request may take, connection to last byte.
    public let requestTimeout: TimeInterval
    private let now: @Sendable () -> Date

    /// - Throws: `OAuthTokenError.insecureEndpoint` for plain http to a non-loopback host.
    public init(clientID: String, clientSecret: String, tokenEndpoint: URL = OAuthEndpoint.defaultTokenURL,
                requiredScopes: [String] = [OAuthScope.gmailModify], session: URLSession = .shared,
                requestTimeout: TimeInterval = 30, now: @escaping @Sendable () -> Date = { Date() }) throws {
        try OAuthEndpoint.validate(tokenEndpoint)
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.tokenEndpoint = tokenEndpoint
        self.requiredScopes = requiredScopes
        self.session = session
        self.requestTimeout = requestTimeout
        self.now = now
    }

    /// A client for `clientSecret`'s credentials and its token endpoint (or `tokenEndpointOverride`).
    public init(clientSecret: ClientSecret, tokenEndpointOverride: URL? = nil,
                requiredScopes: [String] = [OAuthScope.gmailModify], session: URLSession = .shared,
                requestTimeout: TimeInterval = 30, now: @escaping @Sendable () -> Date = { Date() }) throws {
        try self.init(clientID: clientSecret.clientID, clientSecret: clientSecret.clientSecret,
                      tokenEndpoint: clientSecret.tokenEndpoint(override: tokenEndpointOverride),
                      requiredScopes: requiredScopes, session: session, requestTimeout: requestTimeout, now: now)
    }

    /// Exchanges an authorisation code (gmail-api.md §7 step 6). `redirectURI` must be the consent URL's.
    public func exchange(code: String, verifier: String, redirectURI: String) async throws -> OAuthTokens {
        let form = [("code", code), ("client_id", clientID), ("client_secret", clientSecret),
                    ("redirect_uri", redirectURI), ("grant_type", OAuthGrant.authorizationCode.rawValue),
                    ("code_verifier", verifier)]
        let response = try await post(form, grant: .authorizationCode, secrets: [code, verifier, clientSecret])
        guard let refreshToken = response.refreshToken, !refreshToken.isEmpty else {
            throw OAuthTokenError.missingRefreshToken
        }
        return OAuthTokens(accessToken: response.accessToken, refreshToken: refreshToken)
    }

    /// Gets a new access token with a refresh token (gmail-api.md §7 step 7). The refresh token stays valid.
    public func refresh(refreshToken: String) async throws -> OAuthAccessToken {
        let form = [("client_id", clientID), ("client_secret", clientSecret), ("refresh_token", refreshToken),
                    ("grant_type", OAuthGrant.refreshToken.rawValue)]
        return try await post(form, grant: .refreshToken, secrets: [refreshToken, clientSecret]).accessToken
    }

    private struct Decoded {
        var accessToken: OAuthAccessToken
        var refreshToken: String?
    }

    private func post(_ form: [(String, String)], grant: OAuthGrant, secrets: [String]) async throws -> Decoded {
        var request = URLRequest(url: tokenEndpoint, cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: requestTimeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(OAuthFormEncoding.encode(form).utf8)
        let sentAt = now()
        let data: Data
        let status: Int
        do {
            let (body, response) = try await TokenEndpointFetch.send(
                request, configuration: session.configuration, limit: Self.maximumAnswerBytes, deadline: requestTimeout)
            guard let http = response as? HTTPURLResponse else {
                throw OAuthTransientError(status: nil, reason: "no HTTP response")
            }
            data = body
            status = http.statusCode
        } catch let error as OAuthTransientError {
            throw error
        } catch TokenEndpointFetchLimit.tooLarge(let limit) {
            throw OAuthTokenError.oversized("an answer longer than \(limit) bytes")
        } catch TokenEndpointFetchLimit.deadline {
            throw OAuthTransientError(status: nil, reason: "no answer within \(Int(requestTimeout)) s")
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch let error as URLError {
            throw OAuthTransientError(status: nil, reason: tokenClientNetworkReason(error.code))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw OAuthTransientError(status: nil, reason: "network error")
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        switch status {
        case 200..<300:
            guard let object else { throw OAuthTokenError.malformedResponse(status: status, detail: "not a JSON object") }
            return try decodeSuccess(object, status: status, sentAt: sentAt)
        case 429, 500...599:
            throw OAuthTransientError(status: status, reason: "HTTP \(status)")
        default:
            guard let object, let code = object["error"] as? String else {
                throw OAuthTokenError.malformedResponse(status: status, detail: "not an OAuth error response")
            }
            let detail = tokenClientScrub(object["error_description"] as? String, secrets: secrets)
            switch code {
            case "invalid_grant": throw OAuthTokenError.invalidGrant(grant: grant, serverDescription: detail)
            case "invalid_client", "unauthorized_client":
                throw OAuthTokenError.invalidClient(error: code, serverDescription: detail)
            default:
                let shown = tokenClientErrorCode(tokenClientScrub(code, secrets: secrets) ?? "")
                throw OAuthTokenError.rejected(status: status, error: shown, serverDescription: detail)
            }
        }
    }

    /// Reads `{access_token, expires_in, refresh_token?, scope, token_type}` (RFC 6749 §5.1).
    private func decodeSuccess(_ object: [String: Any], status: Int, sentAt: Date) throws -> Decoded {
        guard let value = object["access_token"] as? String, !value.isEmpty else {
            throw OAuthTokenError.malformedResponse(status: status, detail: "no access_token string")
        }
        let refreshToken = object["refresh_token"] as? String
        // Every command reads the credentials file these go into; an endless token would wedge them all.
        for (name, token) in [("access_token", value), ("refresh_token", refreshToken ?? "")]
        where token.utf8.count > Self.maximumTokenLength {
            throw OAuthTokenError.oversized("a \(name) of \(token.utf8.count) bytes (at most \(Self.maximumTokenLength) are accepted)")
        }
        if let type = object["token_type"] as? String, type.lowercased() != "bearer" {
            throw OAuthTokenError.malformedResponse(status: status, detail: "token_type is not Bearer")
        }
        // RFC 6749 §5.1 only recommends expires_in; Google always sends it. Without it, assume Google's
        // usual hour. The clock starts when the request was sent, so the expiry errs on the early side.
        let stated = (object["expires_in"] as? NSNumber)?.doubleValue
            ?? (object["expires_in"] as? String).flatMap(Double.init) ?? 3600
        let lifetime = min(max(stated.isFinite ? stated : 0, 0), 86_400)  // a bad value must not mean "forever"
        // RFC 6749 §5.1: scope may be left out when it is what was requested.
        let granted = (object["scope"] as? String).map(OAuthScope.split) ?? requiredScopes
        let missing = OAuthScope.missing(requested: requiredScopes, granted: granted)
        guard missing.isEmpty else { throw OAuthTokenError.scopeNotGranted(missing: missing) }
        let token = OAuthAccessToken(value: value, expiresAt: sentAt.addingTimeInterval(lifetime), scopes: granted)
        return Decoded(accessToken: token, refreshToken: refreshToken)
    }
}

/// A URLError code as words, without the URL (which could carry a query) or any request content.
private func tokenClientNetworkReason(_ code: URLError.Code) -> String {
    switch code {
    case .cannotConnectToHost: return "connection refused"
    case .timedOut: return "timed out"
    case .notConnectedToInternet: return "not connected to the network"
    case .cannotFindHost, .dnsLookupFailed: return "host not found"
    case .networkConnectionLost: return "connection lost"
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
         .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
        return "TLS connection failed"
    default: return "network error \(code.rawValue)"
    }
}

/// An OAuth `error` value kept to the RFC 6749 §5.2 character set (%x20-21 / %x23-5B / %x5D-7E), 64 max.
private func tokenClientErrorCode(_ value: String) -> String {
    let kept = value.unicodeScalars.filter { (0x21...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" }
    let text = String(String.UnicodeScalarView(kept.prefix(64)))
    return text.isEmpty ? "unknown_error" : text
}

/// Server-supplied text made safe for a one-line error: every secret of the request replaced, control
/// characters dropped, at most 200 characters.
private func tokenClientScrub(_ text: String?, secrets: [String]) -> String? {
    guard var text, !text.isEmpty else { return nil }
    // Servers may echo the form body, so the percent-encoded spellings are replaced too. Real secrets are
    // long (a verifier has at least 43 characters); replacing a 1-character test value would only garble.
    for secret in secrets where secret.count >= 8 {
        let encoded = OAuthFormEncoding.encode(secret)
        for spelling in [secret, encoded, encoded.lowercased()] {
            text = text.replacingOccurrences(of: spelling, with: "<redacted>")
        }
    }
    let printable = text.unicodeScalars.filter { ![.control, .format].contains($0.properties.generalCategory) }
    let result = String(String.UnicodeScalarView(printable.prefix(200)))
    return result.isEmpty ? nil : result
}
