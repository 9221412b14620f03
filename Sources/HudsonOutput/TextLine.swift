/*!
 A text record's line built straight into bytes. Streaming the change feed or a search
 built, for each record, a `Record` (two closures), an array of columns, a string per
 typed id and per date, and then copied each into the line: about half of the command's
 instructions (issue 19). A `LineRecord` writes its id and columns here instead, byte for
 byte what `TextSink` makes of its `Record`.
 */

/// One line of text output being built: the id, then each column after a TAB, each made
/// terminal-safe as `TerminalSafety.field` makes it.
public struct TextLine {
    public private(set) var bytes: [UInt8] = []
    private var empty = true

    public init() {}

    mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
        empty = true
    }

    private mutating func separate() {
        if empty { empty = false } else { bytes.append(UInt8(ascii: "\t")) }
    }

    /// A field of any text (mail, names, ids read from the store).
    public mutating func field(_ text: String) {
        separate()
        TextLine.appendSafe(text, to: &bytes)
    }

    /// `prefix` then `text` as one field (`message:` and an id), as the field of the two
    /// joined would be: when `text` needs cleaning the joined text is cleaned, so a
    /// leading space folds exactly as it would there.
    public mutating func field(_ prefix: StaticString, _ text: String) {
        separate()
        if TerminalSafety.isPlainField(text) {
            prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
            Bytes.append(text, to: &bytes)
        } else {
            TextLine.appendSafe(prefix.description + text, to: &bytes)
        }
    }

    /// A field whose text is known to be safe (a literal of the program's own).
    public mutating func field(literal: StaticString) {
        separate()
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A decimal number, as `String(value)` writes it.
    public mutating func field(_ value: Int64) {
        separate()
        Bytes.appendDecimal(value, to: &bytes)
    }

    /// A short local date (`DateText.short`), written in place.
    public mutating func field(shortDateOf milliseconds: Int64, offsetSeconds: Int64) {
        separate()
        DateText.appendShort(milliseconds: milliseconds, offsetSeconds: offsetSeconds, to: &bytes)
    }

    /// `TerminalSafety.field(text)` as UTF-8, copied from the string's storage.
    static func appendSafe(_ text: String, to bytes: inout [UInt8]) {
        Bytes.append(TerminalSafety.field(text), to: &bytes)
    }
}

/// A record that writes its own text line: `TextSink` asks for the line and never builds
/// the record; every other sink prints `record`.
public protocol LineRecord {
    /// The whole record, for JSON, ids and a terminal's aligned columns; its columns are
    /// `textColumns`, so the line has one definition.
    var record: Record { get }
    /// The id and the columns, as fields of `line`.
    func writeLine(_ line: inout TextLine)
    /// The NDJSON object, `record.json` encoded, appended to `bytes` (a record may write
    /// it without building the record: JSONMembers.swift).
    func writeJSON(into bytes: inout [UInt8])
}

extension LineRecord {
    public func writeJSON(into bytes: inout [UInt8]) { record.json.encode(into: &bytes) }

    /// The columns after the id of the line `writeLine` writes, for `record.columns`: a
    /// terminal's sink aligns and cuts them itself. Each is already terminal-safe, which
    /// `TerminalSafety.field` leaves as it is, and holds no TAB to split on.
    public var textColumns: [String] {
        var line = TextLine()
        writeLine(&line)
        return line.bytes.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).dropFirst()
            .map { String(decoding: $0, as: UTF8.self) }
    }
}
