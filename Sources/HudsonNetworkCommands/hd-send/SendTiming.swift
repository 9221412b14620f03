/*!
 `hd-send --at WHEN`, `--if-late send|hold` and `--remind WHEN` (issue 41), and their
 header form for a complete message (`--raw`, sendmail mode): `X-Hudson-Send-At: WHEN`,
 read and removed before the message is queued, so it never reaches Gmail or a recipient.
 WHEN is the one reading of HudsonCLI's WhenText (hudson-query(7), "Times to wake").
 */
import HudsonCLI
import HudsonMail
import HudsonStore

struct SendTiming {
    /// Epoch ms to send at; nil: now.
    var sendAt: Int64?
    var ifLate: LateSendRule = .hold
    /// Epoch ms a reminder brings the sent thread back if nobody answered.
    var remindAt: Int64?

    /// The header a complete message may carry instead of `--at`.
    static let header = "X-Hudson-Send-At"

    /// Reads the options, and the header from `message` (removing it). A bad WHEN, or the
    /// option and the header both, is a usage error.
    init(_ cli: Invocation, message: inout PreparedMessage) throws {
        let now = TimerOperand.now(cli)
        let (headerValue, stripped) = try Self.takeHeader(from: message.raw)
        if let headerValue {
            guard cli.arguments.string("at") == nil else { throw UsageError("--at and an \(Self.header) header: give one") }
            message.raw = stripped
            sendAt = try WhenText.parse(headerValue, now: now) * 1000
        } else if let text = cli.arguments.string("at") {
            sendAt = try WhenText.parse(text, now: now) * 1000
        }
        if let text = cli.arguments.string("if-late") {
            guard let rule = LateSendRule(rawValue: text) else { throw UsageError("--if-late: send or hold") }
            guard sendAt != nil else { throw UsageError("--if-late goes with --at") }
            ifLate = rule
        }
        // A relative reminder is "that long after it went": with --at, from the send time.
        if let text = cli.arguments.string("remind") {
            remindAt = try WhenText.parse(text, now: now, relativeTo: sendAt.map { $0 / 1000 }) * 1000
        }
        if let sendAt, let remindAt, remindAt <= sendAt { throw UsageError("--remind: before the message is sent (--at)") }
    }

    /// The value of the first `X-Hudson-Send-At:` field of the header block (unfolded,
    /// trimmed) and the message without that field; a second one is a usage error.
    static func takeHeader(from raw: [UInt8]) throws -> (String?, [UInt8]) {
        let name = Array((header.lowercased() + ":").utf8)
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var bodyStart = raw.count
        // The header block: lines up to the first empty one (CRLF, or a bare LF).
        while start < raw.count {
            var end = start
            while end < raw.count && raw[end] != 10 { end += 1 }
            let line = raw[start..<min(end + 1, raw.count)]
            let content = line.last == 10 ? line.dropLast() : line
            if (content.last == 13 ? content.dropLast() : content).isEmpty { bodyStart = start; break }
            lines.append(line)
            start = end + 1
        }
        if start >= raw.count { bodyStart = raw.count }
        var value: String?
        var kept: [UInt8] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let lowered = line.prefix(name.count).map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
            guard lowered == name else { kept += line; index += 1; continue }
            guard value == nil else { throw UsageError("more than one \(header) header") }
            var field = Array(line.dropFirst(name.count))
            index += 1
            while index < lines.count, let first = lines[index].first, first == 32 || first == 9 {
                field += lines[index]
                index += 1
            }
            let text = String(decoding: field.filter { $0 != 13 && $0 != 10 }, as: UTF8.self)
            value = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                .trimmingBlanks()
        }
        guard value != nil else { return (nil, raw) }
        return (value, kept + raw[bodyStart...])
    }
}

extension String {
    fileprivate func trimmingBlanks() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
