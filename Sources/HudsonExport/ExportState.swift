/*!
 The state of an export, `.hudson-export` in its directory (beside the mbox file for
 `--format mbox`): what was exported, up to which point of the store's change sequence,
 so the next run writes only what changed since (issue 24 §2). Text, one record a line:

     hudson-export 1
     format maildir|mbox|eml
     account EMAIL
     seq N                    every change up to N is exported
     mbox-size N              the mbox file's length after the last complete run (mbox)
     M GMAIL-ID PATH          exported, still at Gmail (PATH relative; "-" in an mbox)
     K GMAIL-ID PATH          exported, since deleted at Gmail, kept (no --mirror)
     F GMAIL-ID               its source could not be fetched: tried again next run

 It is replaced whole (temporary file, rename) after each batch, once what the batch
 wrote is on disk.
 */

struct ExportState: Equatable {
    enum Status: String { case live = "M", kept = "K" }

    struct Entry: Equatable {
        var status: Status
        var path: String
    }

    var format: ExportFormat
    var email: String
    var seq: Int64 = 0
    var mboxSize: Int64 = 0
    var entries: [String: Entry] = [:]
    var failed: Set<String> = []

    init(format: ExportFormat, email: String) {
        self.format = format
        self.email = email
    }

    static let magic = "hudson-export 1"

    /// Parses a state file; nil when it is not one.
    init?(parsing bytes: [UInt8]) {
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard lines.first == Self.magic else { return nil }
        var format: ExportFormat?
        var email: String?
        var state = ExportState(format: .maildir, email: "")
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 2 else { return nil }
            switch fields[0] {
            case "format": format = ExportFormat(rawValue: fields[1])
            case "account": email = fields.dropFirst().joined(separator: " ")
            case "seq": guard let value = Int64(fields[1]) else { return nil }; state.seq = value
            case "mbox-size": guard let value = Int64(fields[1]) else { return nil }; state.mboxSize = value
            case "M", "K":
                guard fields.count == 3 else { return nil }
                state.entries[fields[1]] = Entry(status: Status(rawValue: fields[0])!, path: fields[2])
            case "F": state.failed.insert(fields[1])
            default: return nil
            }
        }
        guard let format, let email else { return nil }
        state.format = format
        state.email = email
        self = state
    }

    var bytes: [UInt8] {
        var text = "\(Self.magic)\nformat \(format.rawValue)\naccount \(email)\nseq \(seq)\nmbox-size \(mboxSize)\n"
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) { text += "\(entry.status.rawValue) \(id) \(entry.path)\n" }
        for id in failed.sorted() { text += "F \(id)\n" }
        return Array(text.utf8)
    }
}
