/*!
 What an export's directory holds of its state (`.hudson-export`; `NAME.hudson-export`
 beside an mbox): a marker naming the state's database in the store's `STORE.exports/`
 (ExportStateDatabase), and how many times it was saved. Text, five lines:

     hudson-export 2
     format maildir|mbox|eml
     account EMAIL
     state HEX                32 hex digits: the file STORE.exports/HEX
     generation N             the state's save it goes with

 The marker is written again before each save of the state (durably: the file and its
 directory synced), with the generation that save records: a marker one generation ahead
 is a save a kill interrupted; one behind is an export restored from an older copy, whose
 files the state no longer describes, and is refused.

 Untrusted as every file in the export (issue 37 §3): bounded, each line of this form.
 A file that starts `hudson-export 1` is a whole state in the earlier text form
 (ExportState), read as before and replaced by a marker at the run's first save.
 */

struct ExportMarker: Equatable {
    var format: ExportFormat
    var email: String
    var stateID: String
    var generation: Int64

    static let magic = "hudson-export 2"
    /// A marker's largest size: five short lines.
    static let limit: Int64 = 4_096

    init(format: ExportFormat, email: String, stateID: String, generation: Int64) {
        self.format = format
        self.email = email
        self.stateID = stateID
        self.generation = generation
    }

    /// Parses a marker; nil when the bytes are not one.
    init?(parsing bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.utf8.last == UInt8(ascii: "\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0] == Self.magic,
              lines[1].hasPrefix("format "), let format = ExportFormat(rawValue: String(lines[1].dropFirst(7))),
              lines[2].hasPrefix("account "), lines[3].hasPrefix("state "), lines[4].hasPrefix("generation ") else { return nil }
        let email = String(lines[2].dropFirst(8)), id = String(lines[3].dropFirst(6)), number = lines[4].dropFirst(11)
        guard !email.isEmpty, !email.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
              Self.isStateID(id), number.utf8.allSatisfy({ (0x30...0x39).contains($0) }), number.utf8.count <= 18,
              let generation = Int64(number) else { return nil }
        self.init(format: format, email: email, stateID: id, generation: generation)
    }

    var bytes: [UInt8] {
        Array("\(Self.magic)\nformat \(format.rawValue)\naccount \(email)\nstate \(stateID)\ngeneration \(generation)\n".utf8)
    }

    /// 32 lowercase hex digits: a file name in the states' directory, nothing else.
    static func isStateID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func newStateID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let hex = String(generator.next() as UInt32, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }
}
