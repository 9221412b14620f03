// PKCE (RFC 7636) and the state parameter (RFC 6749 §10.12), gmail-api.md §7 steps 2 and 4.
@testable import HudsonGmail
import Testing

@Suite("PKCE and state")
struct PKCETests {
    // RFC 7636 Appendix B prints the challenge "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" and the
    // SHA-256 octets [19, 211, 30, 150, ...]; both are checked (Python's hashlib agrees).
    @Test("RFC 7636 Appendix B: the example verifier gives the example S256 challenge")
    func rfcExample() throws {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(SHA256.hash(verifier.utf8) == [19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8,
                                               118, 168, 120, 173, 109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195])
        let pkce = try PKCE(verifier: verifier)
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test("a generated verifier is 43 characters of [A-Za-z0-9-._~] and its challenge is S256 of it")
    func generatedVerifier() throws {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        for _ in 0..<50 {
            let pkce = PKCE.generate()
            #expect(pkce.verifier.count == 43)
            #expect(pkce.verifier.allSatisfy { allowed.contains($0) })
            #expect(pkce.challenge == PKCE.challenge(for: pkce.verifier))
            #expect(pkce.challenge.count == 43)  // 32-byte digest, base64url without padding
            #expect(!pkce.challenge.contains("="))
        }
    }

    @Test("verifiers shorter than 43, longer than 128, or outside the alphabet are refused (RFC 7636 §4.1)")
    func invalidVerifiers() {
        #expect(throws: PKCEError.invalidVerifier(length: 42)) { try PKCE(verifier: String(repeating: "a", count: 42)) }
        #expect(throws: PKCEError.self) { try PKCE(verifier: String(repeating: "a", count: 129)) }
        #expect(throws: PKCEError.self) { try PKCE(verifier: String(repeating: "a", count: 42) + "+") }
        #expect(throws: PKCEError.self) { try PKCE(verifier: String(repeating: "a", count: 42) + "é") }
        #expect((try? PKCE(verifier: String(repeating: "~", count: 128))) != nil)
    }

    @Test("verifiers and states are fresh each time (random, not a counter)")
    func randomness() {
        let verifiers = Set((0..<200).map { _ in PKCE.generate().verifier })
        #expect(verifiers.count == 200)
        let states = (0..<200).map { _ in OAuthState.generate() }
        #expect(Set(states).count == 200)
    }

    @Test("a state carries at least 128 bits: 43 URL-safe characters from 32 random bytes")
    func stateLength() {
        let state = OAuthState.generate()
        #expect(state.count == 43)  // 256 bits
        #expect(state.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    }
}
