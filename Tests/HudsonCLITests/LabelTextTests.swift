// One label one field in text output (issue 37 §3, Records.labelText): a comma, a quote, a
// backslash, a space at an end or a character text cannot show puts the name in quotes.
import HudsonCLI
import HudsonStore
import Testing

@Suite("Records.labelText: one label, one field")
struct LabelTextTests {
    @Test("plain names as they are; the others quoted and escaped, so a list splits back into its names")
    func quoting() {
        #expect(Records.labelText("Work") == "Work")
        #expect(Records.labelText("Travel/2026") == "Travel/2026")
        #expect(Records.labelText("Travel 2026") == "Travel 2026")
        #expect(Records.labelText("Travel 2026", quotingSpaces: true) == "\"Travel 2026\"")
        #expect(Records.labelText("Work, Projects") == "\"Work, Projects\"")
        #expect(Records.labelText("Say \"hi\"") == "\"Say \\\"hi\\\"\"")
        #expect(Records.labelText("a\\b") == "\"a\\\\b\"")
        #expect(Records.labelText(" padded ") == "\" padded \"")
        #expect(Records.labelText("") == "\"\"")
        #expect(Records.labelText("Evil\u{1B}[2J\u{202E}") == "\"Evil\\e[2J\\u{202E}\"")
        #expect(Records.labelList(["INBOX", "Work, Projects", "Trips"]) == "INBOX,\"Work, Projects\",Trips")
        #expect(Records.labelList(["a", "b, c"], separator: ", ") == "a, \"b, c\"")
        #expect(TriageAction.addLabel("Travel 2026").description == "+\"Travel 2026\"" && TriageAction.archive.description == "archive")
        #expect(Records.labelTerm("Evil\u{1B}[2J") == "label:\"Evil\\e[2J\"")
    }

    @Test("generated names: the text is one field with nothing a terminal acts on, and the quoted ones split back", arguments: [7, 99, 2026])
    func generated(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let alphabet: [Unicode.Scalar] = ["a", "Z", " ", ",", "\"", "\\", "/", "-", "\u{1B}", "\u{07}", "\u{7F}", "\u{202E}", "\t", "\n",
                                          "\r", "é", "文", "\u{85}", "\u{2066}"]
        for _ in 0..<500 {
            let length = Int.random(in: 0...8, using: &generator)
            var name = String.UnicodeScalarView()
            for _ in 0..<length { name.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]) }
            let text = Records.labelText(String(name))
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" || $0 == "\u{2066}" },
                    "seed \(seed): \(String(name).debugDescription) → \(text.debugDescription)")
            if text.hasPrefix("\"") {
                // Unquoted by the rule's inverse: the escaped spelling, which names the label.
                var inner = Substring(text.dropFirst().dropLast())
                var unescaped = ""
                while let character = inner.popFirst() {
                    if character == "\\", inner.first == "\"" { unescaped.append("\""); inner.removeFirst() } else { unescaped.append(character) }
                }
                #expect(unescaped == LabelNameRule.escaped(String(name)), "seed \(seed): \(text.debugDescription)")
            } else {
                #expect(text == String(name) && !text.contains(",") && !text.isEmpty, "seed \(seed)")
            }
        }
    }
}

/// splitmix64: the same names for a seed on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
