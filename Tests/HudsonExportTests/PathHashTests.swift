// What a two-way read-back keeps of each file it lists (issue 43 §3): a 128-bit hash of
// its path, the same whether computed from the directory listing's bytes or from the
// state's path, and different for different paths.
@testable import HudsonExport
import Testing

@Suite("A read-back's path hashes")
struct PathHashTests {
    func hash(_ directory: String, _ name: String) -> PathHash {
        Array(name.utf8).withUnsafeBufferPointer { PathHash(directory, $0) }
    }

    @Test("a listed name and the state's path of the same file hash alike; a change of one byte, or of directory, does not")
    func listingAndStateAgree() {
        let names = ["1700000000.hudson-18a0000000000001:2,S", "1733500000.M1P2.host,U=7:2,FS", "é名前:2,", "x"]
        for name in names {
            #expect(hash("cur", name) == PathHash("cur/" + name))
            #expect(hash("new", name) == PathHash("new/" + name))
            #expect(hash("cur", name) != hash("new", name))
            #expect(hash("cur", name) != PathHash("cur/" + name + "S"))
        }
    }

    @Test("300,000 Maildir names as an export and its clients write them: no two hash alike")
    func noCollisions() {
        var seen = Set<PathHash>()
        var count = 0
        for number in 0..<100_000 {
            let id = String(0x18a0_0000_0000_0000 + number, radix: 16)
            for name in ["1700000000.hudson-\(id):2,S", "1700000000.hudson-\(id):2,", "\(1_700_000_000 + number).M\(number)P7.host:2,FS"] {
                seen.insert(PathHash("cur/" + name))
                count += 1
            }
        }
        #expect(seen.count == count)
    }
}
