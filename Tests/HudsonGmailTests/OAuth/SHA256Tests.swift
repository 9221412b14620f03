// SHA-256 against the NIST FIPS 180-4 example vectors (csrc.nist.gov "Example Values": SHA256.pdf),
// since PKCE's S256 challenge depends on it (RFC 7636 §4.2).
@testable import HudsonGmail
import Testing

@Suite("SHA-256 (FIPS 180-4)")
struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test("the empty message hashes to the NIST value")
    func empty() {
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("\"abc\" (one block) hashes to the NIST value")
    func abc() {
        #expect(hex(SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("the 448-bit message (padding spills into a second block) hashes to the NIST value")
    func twoBlocks() {
        let message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(hex(SHA256.hash(message.utf8)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("one million 'a' hashes to the NIST value")
    func millionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA256.hash(message)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("feeding the message in uneven pieces gives the same digest as one call")
    func streaming() {
        let message = Array((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for piece in [1, 3, 55, 63, 64, 65, 200] {
            var hasher = SHA256()
            var index = 0
            while index < message.count {
                let end = min(index + piece, message.count)
                hasher.update(Array(message[index..<end]))
                index = end
            }
            #expect(hasher.finalize() == SHA256.hash(message), "piece size \(piece)")
        }
    }
}
