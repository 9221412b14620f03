import HudsonMail
import Testing

@Suite("UnixLines: CR LF becomes LF, nothing else changes")
struct UnixLinesTests {
    @Test("pairs, runs of CR before LF, lone CRs, a CR at the end, no CR at all, 8-bit bytes; converting twice is once")
    func lineEnds() {
        #expect(UnixLines.from(Array("a\r\nb\r\n".utf8)) == Array("a\nb\n".utf8))
        #expect(UnixLines.from(Array("a\rb\r\r\nc\r".utf8)) == Array("a\rb\nc\r".utf8))
        // Twice is once: a relabel rewrites a file from the one there.
        for text in ["a\r\r\r\nb", "\r\n\r", "x\ry\r\r", "\r\r\n\n\r\n"] {
            let once = UnixLines.from(Array(text.utf8))
            #expect(UnixLines.from(once) == once, "\(text.debugDescription)")
        }
        #expect(UnixLines.from(Array("plain\n".utf8)) == Array("plain\n".utf8))
        #expect(UnixLines.from([0xFF, 13, 10, 0x80, 13]) == [0xFF, 10, 0x80, 13])
        #expect(UnixLines.from([]) == [])
    }
}
