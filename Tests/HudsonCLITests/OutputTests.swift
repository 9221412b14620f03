import Foundation
import HudsonCLI
@testable import HudsonOutput
@testable import HudsonText
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
        #expect(DateText.short(milliseconds: 1_767_225_599_999, offsetSeconds: 0) == "2025-12-31 23:59")
        #expect(DateText.rfc3339UTC(milliseconds: 1_709_251_199_000) == "2024-02-29T23:59:59Z")
        // Years outside four digits keep every digit and their sign; year 1 is padded.
        #expect(DateText.rfc3339UTC(milliseconds: -62_135_596_800_000) == "0001-01-01T00:00:00Z")
        #expect(DateText.rfc3339UTC(milliseconds: -62_198_755_200_000) == "-1-01-01T00:00:00Z")
        #expect(DateText.rfc3339UTC(milliseconds: 253_402_300_800_000) == "10000-01-01T00:00:00Z")
        #expect(DateText.short(milliseconds: 253_402_300_800_000, offsetSeconds: -60) == "9999-12-31 23:59")
        // Any Int64 a server sends as a date prints, at both ends, without trapping.
        #expect(DateText.rfc3339UTC(milliseconds: Int64.min).hasPrefix("-292275055-"))
        #expect(DateText.rfc3339UTC(milliseconds: Int64.max).hasPrefix("292278994-"))
        var extremes = TextLine()
        extremes.field(shortDateOf: Int64.min, offsetSeconds: 0)
        extremes.field(shortDateOf: Int64.max, offsetSeconds: 14 * 3600)
        #expect(extremes.bytes.count > 30)
    }

    @Test("JSON strings escape quotes, backslashes, controls, C1, bidi and annotation characters, byte for byte as scalar by scalar")
    func jsonEscapes() throws {
        // The rule scalar by scalar, as it was written before strings were encoded as bytes.
        func reference(_ string: String) -> String {
            var output = "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                default:
                    if TerminalSafety.isUnsafe(scalar) {
                        let hex = String(scalar.value, radix: 16)
                        output += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                    } else {
                        output.unicodeScalars.append(scalar)
                    }
                }
            }
            return output + "\""
        }
        var samples = ["", "plain", "say \"hi\" \\ back", "tab\there\r\nline", "Zoë — “quotes” 東京 😀 ﻿bom \u{A0}",
                       "\u{1B}[31mred\u{07}", "a\u{7F}b\u{80}c\u{85}d\u{9F}e\u{A0}", "\u{061C}\u{200E}\u{200F}\u{202A}\u{202E}",
                       "\u{2066}\u{2069}\u{FFF9}\u{FFFB}\u{FFFC}\u{FFFD}", "\u{10FFFF}\u{E0001}x"]
        samples += (0...0x7F).map { String(UnicodeScalar(UInt8($0))) + "x" }
        for sample in samples {
            #expect(JSONValue.string(sample).encoded == reference(sample), "\(Array(sample.unicodeScalars.map(\.value)))")
            #expect(try JSONValue.parse(JSONValue.string(sample).encoded) == .string(sample))
        }
        for value: Int64 in [0, 7, -7, 1_767_225_600, .max, .min] {
            #expect(JSONValue.int(value).encoded == String(value))
        }
    }

    @Test("input lines give the first field, or an NDJSON object's id")
    func inputLines() throws {
        #expect(try Input.referenceText(line: "thread:abc\t2026-01-01\tsubject") == "thread:abc")
        #expect(try Input.referenceText(line: "  message:x rest") == "message:x")
        #expect(try Input.referenceText(line: #"{"type":"thread","id":"thread:t1"}"#) == "thread:t1")
        #expect(try Input.referenceText(line: "   ") == nil)
        #expect(throws: JSONParseError.self) { try Input.referenceText(line: #"{"type":"thread"}"#) }
    }

    @Test("quoted input shows every unsafe character as a visible escape and is cut to its limit, escapes included")
    func quotedInput() {
        #expect(TerminalSafety.quoted("thread:a\u{1B}[31mb") == #"thread:a\e[31mb"#)
        #expect(TerminalSafety.quoted("x\u{07}\u{0}\t\n\r\u{202E}\u{9B}y") == #"x\a\0\t\n\r\u{202E}\u{9B}y"#)
        #expect(TerminalSafety.quoted("plain café 資料") == "plain café 資料")
        let long = TerminalSafety.quoted(String(repeating: "\u{202E}", count: 1_000_000), limit: 80)
        #expect(long.unicodeScalars.count < 120 && long.hasSuffix("more characters)"), "\(long)")
        #expect(!long.unicodeScalars.contains { TerminalSafety.isUnsafe($0) })
        #expect(TerminalSafety.quoted(String(repeating: "a", count: 81), limit: 80).hasSuffix("…(1 more characters)"))
    }

    @Test("a diagnostic keeps its lines, loses every unsafe character, and no line passes the limit")
    func diagnostics() {
        let text = "hd-x: \u{1B}]52;c;ZXZpbA==\u{07}bad\u{202E}\nusage: hd-x\n" + String(repeating: "y", count: 10_000)
        let lines = TerminalSafety.diagnostic(text).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "hd-x: bad" && lines[1] == "usage: hd-x")
        #expect(lines[2].count == TerminalSafety.diagnosticLineLimit + 1 && lines[2].hasSuffix("…"))
    }

    @Test("text as shown: escape sequences and bidi controls gone, line breaks and tabs kept, plain text returned as is")
    func shownText() {
        #expect(TerminalSafety.shown("Invoice \u{1B}[5mURGENT") == "Invoice URGENT")
        #expect(TerminalSafety.shown("\u{2066}word\u{2069} \u{1B}]0;title\u{07}x") == "word x")
        #expect(TerminalSafety.shown("a\tb\r\nc") == "a\tb\r\nc")
        #expect(TerminalSafety.shown("smart “quotes” — and… \u{A0}nbsp ﻿bom") == "smart “quotes” — and… \u{A0}nbsp ﻿bom")
        #expect(TerminalSafety.shown("c1\u{85}\u{9B}2Jx") == "c1x")
        // The fast paths agree with the slow ones: dashes and quotes pass untouched.
        #expect(TerminalSafety.text("a — “b”…\nc ’d’") == "a — “b”…\nc ’d’")
        #expect(TerminalSafety.text("a\r\nb\tc\u{202E}d") == "a\nb    cd")
        #expect(TerminalSafety.field("a — “b”") == "a — “b”" && TerminalSafety.field("a\u{200F}b\nc") == "ab c")
        #expect(!TerminalSafety.containsUnsafeBeyondWhitespace("“—…’ ا ‎x".replacingOccurrences(of: "\u{200E}", with: "")))
        #expect(TerminalSafety.containsUnsafeBeyondWhitespace("\u{061C}") && TerminalSafety.containsUnsafeBeyondWhitespace("\u{FFFA}"))
    }

    @Test("the byte scan finds every unsafe character at every place in a line, eight bytes at a time or one")
    func unsafeAtEveryOffset() {
        let unsafe = ["\u{00}", "\u{01}", "\u{1B}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9B}", "\u{200E}", "\u{202E}",
                      "\u{2066}", "\u{061C}", "\u{FFFA}"]
        let padding = String(repeating: "abcdefgh ~", count: 3)  // printable ASCII, from space to tilde
        for character in unsafe {
            for offset in 0...20 {
                let line = String(padding.prefix(offset)) + character + padding
                #expect(TerminalSafety.containsUnsafe(line, countingWhitespace: false), "\(character.unicodeScalars.first!.value) at \(offset)")
                if character != "\u{1B}" && character != "\u{9B}" {  // these take the sequence after them too
                    #expect(TerminalSafety.field(line) == String(padding.prefix(offset)) + padding)
                }
            }
        }
        for offset in 0...20 {
            let line = String(padding.prefix(offset)) + "\t" + padding
            #expect(TerminalSafety.containsUnsafe(line, countingWhitespace: true))
            #expect(!TerminalSafety.containsUnsafe(line, countingWhitespace: false))
        }
        // Bytes 0x20 and 0x7E and every printable byte between them pass, in any word.
        let printable = String(decoding: (0x20...0x7E).map { UInt8($0) }, as: UTF8.self)
        #expect(!TerminalSafety.containsUnsafe(printable + printable, countingWhitespace: true))
        #expect(!TerminalSafety.containsUnsafe("Zoë Łukasz 東京 " + printable, countingWhitespace: true))
    }

    @Test("HTML for a pipe loses controls and keeps bidi characters; plain HTML is returned as is")
    func htmlForPipe() {
        #expect(TerminalSafety.htmlForPipe("<p>\u{1B}]52;c;eA==\u{07}Pay\u{85} \u{202E}now</p>\r\n\t") == "<p>Pay \u{202E}now</p>\r\n\t")
        #expect(TerminalSafety.htmlForPipe("<p>ok</p>\n") == "<p>ok</p>\n")
    }

    @Test("an aligned line never passes the terminal's width, whatever its cells hold")
    func alignedLinesFit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-sink-\(UUID().uuidString)").path
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let subjects = [String(repeating: "会議", count: 80), String(repeating: "⌚😀", count: 50), String(repeating: "e\u{301}", count: 300),
                        String(repeating: "x", count: 500)]
        for width in [20, 40, 80, 120] {
            let sink = AlignedTextSink(output: OutputStream(fd: fd), terminal: TerminalInfo(isTerminal: true, width: width, color: false))
            for subject in subjects {
                try sink.emit(Record(type: "thread", id: "thread:0123456789abcdef", fields: [],
                                     columns: ["2026-12-04 10:00", "[3]", String(repeating: "名前", count: 30), subject, "INBOX"]))
            }
            try sink.finish()
        }
        close(fd)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let widths = [20, 40, 80, 120].flatMap { Array(repeating: $0, count: subjects.count) }
        #expect(lines.count == widths.count)
        for (line, width) in zip(lines, widths) {
            #expect(DisplayWidth.of(String(line)) <= width, "\(DisplayWidth.of(String(line))) cells on \(width): \(line)")
        }
        #expect(DisplayWidth.of("⌚") == 2 && DisplayWidth.of("\u{200B}\u{FEFF}") == 0 && DisplayWidth.of("e\u{301}") == 1)
    }

    @Test("a heading is printed above aligned rows on a terminal, aligned with them, once; never in a pipe, as JSON, as ids, or for no rows")
    func headingOnTerminalOnly() throws {
        func printed(_ format: OutputFormat, terminal: TerminalInfo, rows: Int) throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("heading-\(UUID().uuidString)").path
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer { unlink(path) }
            let sink = makeSink(format, output: OutputStream(fd: fd), terminal: terminal)
            sink.heading(["LABEL", "MESSAGES", "THREADS"])
            for index in 0..<rows {
                try sink.emit(Record(type: "label", id: "label:Work\(index)", fields: [("messages", .int(12))], columns: ["12", "3"]))
            }
            try sink.finish()
            close(fd)
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        let terminal = TerminalInfo(isTerminal: true, width: 80, color: false)
        let aligned = try printed(.text, terminal: terminal, rows: 250).split(separator: "\n").map(String.init)
        #expect(aligned.count == 251 && aligned[0].hasPrefix("LABEL") && aligned.filter { $0.hasPrefix("LABEL") }.count == 1, "\(aligned.prefix(3))")
        #expect(aligned[0].firstRange(of: "MESSAGES")?.lowerBound.utf16Offset(in: aligned[0])
                == aligned[1].firstRange(of: "12")?.lowerBound.utf16Offset(in: aligned[1]), "\(aligned.prefix(2))")
        #expect(try printed(.text, terminal: terminal, rows: 0).isEmpty)
        #expect(try printed(.text, terminal: .pipe, rows: 2) == "label:Work0\t12\t3\nlabel:Work1\t12\t3\n")
        #expect(try printed(.ids(nulTerminated: false), terminal: terminal, rows: 1) == "label:Work0\n")
        #expect(try !printed(.json, terminal: terminal, rows: 1).contains("LABEL"))
    }

    @Test("a line record's text is byte for byte what a text sink makes of its record, for hostile and plain fields")
    func textLinesMatchRecords() throws {
        let texts = ["", "plain", "181b768933fbd387", " leading space", "\tleading tab", "trailing\n", "a\u{1B}[31mred",
                     "\u{1B}]52;c;ZXZpbA==\u{07}x", "bidi\u{202E}fdp.exe", "C1\u{85}NEL", "Zürich 東京 🎉", "\u{9B}31mx",
                     "two\tfields\nand lines", "nul\u{0}byte", String(repeating: "long ", count: 50)]
        let numbers: [Int64] = [0, 7, -1, 10, 1_099_211, Int64.max, Int64.min]
        let dates: [(Int64, Int64)] = [(1_767_225_600_000, 3600), (-1000, 0), (253_402_300_800_000, -60), (0, -18_000)]
        let lines = texts.map { text in
            TestLine(texts: [("message:", text), (nil, text), ("thread:", text)], number: numbers[text.count % numbers.count],
                     date: dates[text.count % dates.count])
        }
        var viaRecord = TextLine(), viaLine = TextLine()
        for line in lines {
            viaRecord = TextLine()
            viaRecord.field(line.record.id)
            for column in line.record.columns { viaRecord.field(column) }
            viaLine = TextLine()
            line.writeLine(&viaLine)
            #expect(viaLine.bytes == viaRecord.bytes, "\(String(decoding: viaLine.bytes, as: UTF8.self).debugDescription)")
        }
        for number in numbers {
            var line = TextLine()
            line.field(number)
            #expect(line.bytes == Array(String(number).utf8))
        }
        // Through both sinks' entry points, to a file: the same bytes.
        func written(_ emit: (TextSink) throws -> Void) throws -> [UInt8] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-line-\(UUID().uuidString)").path
            defer { unlink(path) }
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let sink = TextSink(output: OutputStream(fd: fd))
            try emit(sink)
            try sink.finish()
            close(fd)
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let records = try written { sink in for line in lines { try sink.emit(line.record) } }
        let direct = try written { sink in for line in lines { try sink.emit(line) } }
        #expect(direct == records && records.filter { $0 == 0x0A }.count == lines.count)
    }

    @Test("a line record's NDJSON written straight into bytes is byte for byte its record's JSON, for hostile and plain members")
    func jsonLinesMatchRecords() throws {
        let texts = ["", "plain", "q\"uote\\back", "a\u{1B}[31mred", "bidi\u{202E}fdp.exe", "C1\u{85}NEL", "nul\u{0}byte",
                     "Zürich 東京 🎉", "two\tfields\nand\r lines", "\u{7F}del", String(repeating: "long ", count: 50)]
        let lines = texts.enumerated().map { index, text in
            TestJSONLine(id: "message:" + text, text: text, optional: index % 3 == 0 ? nil : text,
                         number: [0, -1, Int64.max, Int64.min, 1_767_225_599][index % 5], flag: index % 2 == 0,
                         list: Array(texts.prefix(index)))
        }
        for line in lines {
            var direct: [UInt8] = [0x41]  // what the buffer already held stays in front
            line.writeJSON(into: &direct)
            #expect(direct == [0x41] + Array(line.record.json.encoded.utf8),
                    "\(String(decoding: direct, as: UTF8.self).debugDescription)")
            #expect(try JSONValue.parse(String(decoding: direct.dropFirst(), as: UTF8.self)) == line.record.json)
        }
        // Through the NDJSON sink's two entry points, to a file: the same bytes.
        func written(_ emit: (NDJSONSink) throws -> Void) throws -> [UInt8] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-json-\(UUID().uuidString)").path
            defer { unlink(path) }
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let sink = NDJSONSink(output: OutputStream(fd: fd))
            try emit(sink)
            try sink.finish()
            close(fd)
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let records = try written { sink in for line in lines { try sink.emit(line.record) } }
        let direct = try written { sink in for line in lines { try sink.emit(line) } }
        #expect(direct == records && records.filter { $0 == 0x0A }.count == lines.count)
    }
}

/// A line record whose JSON members are written once, through `JSONMemberWriter`, as
/// `Records.message` writes a message's.
private struct TestJSONLine: LineRecord {
    var id: String
    var text: String
    var optional: String?
    var number: Int64
    var flag: Bool
    var list: [String]

    func members<Writer: JSONMemberWriter>(into writer: inout Writer) {
        writer.member("text", text)
        writer.member("optional", optional)
        writer.member("number", number)
        writer.member("flag", flag)
        writer.member("list", strings: list)
        writer.member("empty_list", strings: [])
    }

    var record: Record {
        Record(type: "message", id: id, fields: JSONMemberList.build { members(into: &$0) }, columns: [text])
    }

    func writeLine(_ line: inout TextLine) {
        line.field(id)
        line.field(text)
    }

    func writeJSON(into bytes: inout [UInt8]) {
        JSONObjectWriter.write(type: "message", id: id, into: &bytes) { members(into: &$0) }
    }
}

/// A record made of the pieces a line record writes: prefixed and plain text, a number, a
/// short date and a literal.
private struct TestLine: LineRecord {
    var texts: [(prefix: StaticString?, text: String)]
    var number: Int64
    var date: (milliseconds: Int64, offset: Int64)

    var record: Record {
        let columns = texts.dropFirst().map { ($0.prefix.map(\.description) ?? "") + $0.text }
            + [String(number), DateText.short(milliseconds: date.milliseconds, offsetSeconds: date.offset), "changed"]
        return Record(type: "test", id: (texts[0].prefix.map(\.description) ?? "") + texts[0].text, fields: [], columns: columns)
    }

    func writeLine(_ line: inout TextLine) {
        for (prefix, text) in texts {
            if let prefix { line.field(prefix, text) } else { line.field(text) }
        }
        line.field(number)
        line.field(shortDateOf: date.milliseconds, offsetSeconds: date.offset)
        line.field(literal: "changed")
    }
}
