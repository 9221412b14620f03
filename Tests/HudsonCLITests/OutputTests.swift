import HudsonCLI
import HudsonOutput
import Testing

@Suite("Output: JSON, terminal safety, dates, input lines")
struct OutputTests {
    @Test("JSON keeps member order, escapes controls and bidi overrides, and round-trips")
    func json() throws {
        let value = JSONValue.object([
            ("type", .string("thread")), ("id", .string("thread:1")),
            ("subject", .string("a\u{1B}[31mred\u{202E}evil\"q\\\n")), ("n", .int(-3)), ("ok", .bool(true)),
            ("list", .array([.null, .double(1.5)])),
        ])
        let text = value.encoded
        #expect(text == #"{"type":"thread","id":"thread:1","subject":"a\u001b[31mred\u202eevil\"q\\\n","n":-3,"ok":true,"list":[null,1.5]}"#)
        #expect(try JSONValue.parse(text) == value)
    }

    @Test("the JSON parser refuses malformed input with an offset, and bounds nesting")
    func jsonErrors() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse("{\"id\": }") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("[1,]") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(String(repeating: "[", count: 10_000)) }
        #expect(try JSONValue.parse(#"{"id":"\ud83d\ude00"}"#)["id"]?.stringValue == "😀")
    }

    @Test("text fields lose escape sequences, controls and bidi overrides, and stay one line")
    func terminalSafety() {
        #expect(TerminalSafety.field("Hi\u{1B}]52;c;ZXZpbA==\u{07} there") == "Hi there")
        #expect(TerminalSafety.field("\u{1B}[2J\u{1B}[Hcleared") == "cleared")
        #expect(TerminalSafety.field("bell\u{07}\u{9B}31mx") == "bellx")
        #expect(TerminalSafety.field("abc\u{202E}fdp.exe") == "abcfdp.exe")
        #expect(TerminalSafety.field("two\tfields\nand lines") == "two fields and lines")
        #expect(TerminalSafety.field("Zürich 東京 🎉") == "Zürich 東京 🎉")
    }

    @Test("display widths count wide characters as two cells and truncation adds an ellipsis")
    func widths() {
        #expect(DisplayWidth.of("東京") == 4)
        #expect(DisplayWidth.truncate("東京都庁", to: 5) == "東京…")
        #expect(DisplayWidth.truncate("short", to: 10) == "short")
    }

    @Test("dates print as RFC 3339 UTC and short local forms")
    func dates() {
        #expect(DateText.rfc3339UTC(milliseconds: 1_767_225_600_000) == "2026-01-01T00:00:00Z")
        #expect(DateText.rfc3339UTC(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00Z")
        #expect(DateText.rfc3339UTC(milliseconds: -1000) == "1969-12-31T23:59:59Z")
        #expect(DateText.short(milliseconds: 1_767_225_600_000, offsetSeconds: 3600) == "2026-01-01 01:00")
    }

    @Test("input lines give the first field, or an NDJSON object's id")
    func inputLines() throws {
        #expect(try Input.referenceText(line: "thread:abc\t2026-01-01\tsubject") == "thread:abc")
        #expect(try Input.referenceText(line: "  message:x rest") == "message:x")
        #expect(try Input.referenceText(line: #"{"type":"thread","id":"thread:t1"}"#) == "thread:t1")
        #expect(try Input.referenceText(line: "   ") == nil)
        #expect(throws: JSONParseError.self) { try Input.referenceText(line: #"{"type":"thread"}"#) }
    }
}
