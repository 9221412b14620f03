// The rules behind the old commands' refusals (issue 37), one by one: an argument that is
// not UTF-8, an environment path that is not UTF-8, bytes quoted in a diagnostic, and a
// --save-attachments directory checked before anything is fetched or made. The built
// commands are tried against them in ReliabilityTests/OldDoorsTests.
import Foundation
import Glibc
import HudsonCLI
import HudsonCommands
import HudsonOutput
import Testing

@Suite("The old doors' rules: UTF-8 arguments and paths, quoted bytes, attachment directories")
struct OldDoorsUnitTests {
    @Test("an argument that is not UTF-8 is a usage error naming its position and bytes; valid ones pass as they are")
    func argumentsMustBeUTF8() throws {
        #expect(try ArgumentParser.commandLine([Array("café".utf8), Array("--db".utf8), []]) == ["café", "--db", ""])
        for (bytes, shown) in [([0x63, 0x61, 0x66, 0xE9] as [UInt8], #"caf\xE9"#), ([0xFF, 0xFE], #"\xFF\xFE"#),
                               ([0xC0, 0x80], #"\xC0\x80"#), ([0xED, 0xA0, 0x80], #"\xED\xA0\x80"#), ([0x1B, 0x5B, 0x32, 0x4A, 0xFF], #"\e[2J\xFF"#)] {
            #expect(throws: UsageError("argument 2, \(shown): not valid UTF-8")) {
                try ArgumentParser.commandLine([Array("ok".utf8), bytes])
            }
        }
    }

    @Test("bytes quoted in a diagnostic: invalid ones as \\xNN, controls and bidi as escapes, cut after the limit")
    func quotedBytes() {
        #expect(TerminalSafety.quoted(bytes: Array("plain/path".utf8)) == "plain/path")
        #expect(TerminalSafety.quoted(bytes: [0x61, 0xFF, 0x62]) == #"a\xFFb"#)
        #expect(TerminalSafety.quoted(bytes: Array("\u{202E}x".utf8) + [0x80]) == #"\u{202E}x\x80"#)
        #expect(TerminalSafety.quoted(bytes: Array("資料".utf8) + [0xE8, 0xB3]) == #"資料\xE8\xB3"#)
        let long = TerminalSafety.quoted(bytes: [UInt8](repeating: 0xFF, count: 10_000), limit: 80)
        #expect(long.hasPrefix(#"\xFF"#) && long.hasSuffix("more bytes)") && long.unicodeScalars.count < 120, "\(long)")
    }

    @Test("a path variable that is not UTF-8 is refused where it is read, not repaired into another name")
    func pathVariablesMustBeUTF8() throws {
        let environment = ["HUDSON_DB": "/data/x\u{FFFD}.sqlite3", "HOME": "/home/ann", "HUDSON_CONFIG_DIR": "/c\u{FFFD}"]
        #expect(throws: CommandFailure.self) { try Paths.store(option: nil, environment: environment, undecodable: ["HUDSON_DB"]) }
        // --db names the store: the variable is not read.
        #expect(try Paths.store(option: "/s.sqlite3", environment: environment, undecodable: ["HUDSON_DB"]) == "/s.sqlite3")
        #expect(throws: CommandFailure.self) { try Paths.configDirectory(environment: environment, undecodable: ["HUDSON_CONFIG_DIR"]) }
        #expect(throws: CommandFailure.self) { try Paths.store(option: nil, environment: ["HOME": "/\u{FFFD}"], undecodable: ["HOME"]) }
        #expect(try Paths.store(option: nil, environment: environment, undecodable: ["HOME"]) == "/data/x\u{FFFD}.sqlite3")
        do {
            _ = try Paths.store(option: nil, environment: environment, undecodable: ["HUDSON_DB"])
        } catch let failure as CommandFailure {
            #expect(failure.status == .configuration && failure.message.hasPrefix("HUDSON_DB is not valid UTF-8"))
        }
    }

    @Test("NDJSON lines of standard input, generated and mutated: parsed or refused with JSONParseError, never a crash")
    func ndjsonLines() {
        var state: UInt64 = ProcessInfo.processInfo.environment["HUDSON_TEST_SEED"].flatMap { UInt64($0) } ?? 0x4E44_4A53_4F4E
        func next() -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
        }
        let seeds = [#"{"id":"thread:1a2b"}"#, #"{"id":"message:x","labels":["INBOX",1,null,true,{"a":[1e999,-0.0,1E-400]}]}"#,
                     #"{"id":"\ud83d\ude00\u0000\ud800\udc00\"\\\/\b\f\n\r\t"}"#, #"[1,2,{"id":5}]"#, #"{"a":{"b":{"c":{}}}}"#]
        let pieces = ["{", "}", "[", "]", "\"", "\\", #"\u"#, #"\ud800"#, #"\uZZZZ"#, ":", ",", "1e999999999", "-", "0.", "tru", "null",
                      "\u{0}", "\u{1B}", "\u{202E}", "資", " ", "\n", "9223372036854775808", String(repeating: "[", count: 300),
                      String(repeating: "{\"a\":", count: 300)]
        for iteration in 0..<20_000 {
            var text = Array(seeds[next() % seeds.count].unicodeScalars)
            for _ in 0..<(1 + next() % 4) {
                let at = text.isEmpty ? 0 : next() % (text.count + 1)
                switch next() % 3 {
                case 0 where !text.isEmpty: text.remove(at: min(at, text.count - 1))
                case 1: text.insert(contentsOf: pieces[next() % pieces.count].unicodeScalars, at: at)
                default: text = Array(text.prefix(at))
                }
            }
            let line = String(String.UnicodeScalarView(text))
            do {
                _ = try JSONValue.parse(line)
                _ = try Input.referenceText(line: line)
            } catch is JSONParseError {
            } catch {
                Issue.record("iteration \(iteration): \(line.debugDescription): \(error)")
            }
        }
    }

    @Test("--save-attachments DIR: refused when empty, when a part is not a directory or loops, when it cannot be written; a missing one is fine")
    func attachmentDirectories() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-doors-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base + "/dir", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        try "x".write(toFile: base + "/file", atomically: false, encoding: .utf8)
        #expect(mkfifo(base + "/fifo", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: base + "/loop", withDestinationPath: "loop")
        #expect(throws: UsageError.self) { try AttachmentSaver.checkDirectory("") }
        for refused in [base + "/file", base + "/fifo", "/dev/null", base + "/file/x/y", base + "/loop", base + "/loop/x"] {
            #expect(throws: CommandFailure.self, "\(refused)") { try AttachmentSaver.checkDirectory(refused) }
        }
        for accepted in [base + "/dir", base + "/dir/new/deeper", base + "/missing", "relative/missing"] {
            #expect(throws: Never.self, "\(accepted)") { try AttachmentSaver.checkDirectory(accepted) }
        }
        // Checking makes nothing.
        #expect(!FileManager.default.fileExists(atPath: base + "/dir/new") && !FileManager.default.fileExists(atPath: base + "/missing"))
        // Saving makes what is missing, 0700.
        let path = try AttachmentSaver.save(Array("data".utf8), name: "a.txt", in: base + "/dir/new/deeper")
        #expect(path == base + "/dir/new/deeper/a.txt")
        var info = stat()
        #expect(stat(base + "/dir/new", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}
