/*!
 The two random values of the installed-app flow: the PKCE verifier/challenge pair (RFC 7636) and the
 `state` parameter (RFC 6749 §10.12) that ties the loopback redirect to the consent request we opened
 (gmail-api.md §7 steps 2 and 4). Both come from `SystemRandomNumberGenerator`, which on Linux reads
 `getrandom(2)`, so they are unpredictable. The challenge is BASE64URL-NOPAD(SHA256(ASCII(verifier))),
 the S256 method (RFC 7636 §4.2); "plain" is never offered.
 */
import Foundation

/// A PKCE code verifier and its S256 challenge (RFC 7636 §4.1–4.2).
public struct PKCE: Sendable, Equatable {
    /// 43 to 128 characters from `[A-Za-z0-9-._~]` (RFC 7636 §4.1); sent only to the token endpoint.
    public let verifier: String
    /// BASE64URL-NOPAD(SHA256(ASCII(verifier))); sent in the consent URL.
    public let challenge: String
    /// Always `S256`.
    public let method = "S256"

    /// A fresh pair from 32 random bytes, giving a 43-character verifier (RFC 7636 §4.1, "RECOMMENDED").
    public static func generate() -> PKCE {
        // Force-unwrap is sound: base64url of 32 bytes is 43 characters of the allowed alphabet.
        try! PKCE(verifier: pkceBase64URL(pkceRandomBytes(32)))
    }

    /// The pair for a given verifier; throws when it is not 43–128 unreserved characters (RFC 7636 §4.1).
    public init(verifier: String) throws {
        guard PKCE.isValidVerifier(verifier) else { throw PKCEError.invalidVerifier(length: verifier.utf8.count) }
        self.verifier = verifier
        self.challenge = PKCE.challenge(for: verifier)
    }

    /// BASE64URL-NOPAD(SHA256(ASCII(verifier))) (RFC 7636 §4.2).
    public static func challenge(for verifier: String) -> String {
        pkceBase64URL(SHA256.hash(Array(verifier.utf8)))
    }

    /// Whether `verifier` is 43 to 128 characters from `[A-Za-z0-9-._~]` (RFC 7636 §4.1 `code-verifier`).
    public static func isValidVerifier(_ verifier: String) -> Bool {
        let bytes = Array(verifier.utf8)
        return (43...128).contains(bytes.count) && bytes.allSatisfy(pkceIsUnreserved)
    }
}

/// A verifier that does not satisfy RFC 7636 §4.1.
public enum PKCEError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidVerifier(length: Int)

    public var description: String {
        switch self {
        case .invalidVerifier(let length):
            return "PKCE code verifier must be 43 to 128 characters from [A-Za-z0-9-._~] (got \(length) bytes)"
        }
    }
}

/// The `state` value of the consent request (RFC 6749 §10.12, gmail-api.md §7 step 4).
public enum OAuthState {
    /// 32 random bytes (256 bits) as 43 base64url characters: unguessable, and URL-safe without encoding.
    public static func generate() -> String { pkceBase64URL(pkceRandomBytes(32)) }
}

/// `count` bytes from the system CSPRNG (getrandom on Linux).
private func pkceRandomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}

/// Base64url without padding (RFC 4648 §5; RFC 7636 Appendix A).
private func pkceBase64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// RFC 3986 unreserved characters, the verifier's alphabet.
private func pkceIsUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
         UInt8(ascii: "0")...UInt8(ascii: "9"),
         UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}
