/*!
 The three output forms of the contract: text (one record per line, TAB-separated,
 complete and uncoloured in a pipe; aligned, truncated and coloured on a terminal
 unless NO_COLOR), NDJSON (`--json`), and ids only (`--ids`, `-0` for NUL-terminated).
 */

public enum OutputFormat: Sendable, Equatable {
    case text
    case json
    case ids(nulTerminated: Bool)
}

/// How the terminal on standard output looks, as the CLI layer found it.
public struct TerminalInfo: Sendable, Equatable {
    public var isTerminal: Bool
    public var width: Int
    public var color: Bool

    public init(isTerminal: Bool, width: Int, color: Bool) {
        self.isTerminal = isTerminal
        self.width = width
        self.color = color
    }

    public static let pipe = TerminalInfo(isTerminal: false, width: 0, color: false)
}

extension OutputStream {
    /// Writes out the first record at once: a reader waiting for the first result (`| head
    /// -1`, a script that stops at the first match) has it as soon as it is found, not
    /// when the buffer fills; the rest go out a buffer at a time.
    func flushFirst(_ first: inout Bool) throws {
        guard first else { return }
        first = false
        try flush()
    }
}

public func makeSink(_ format: OutputFormat, output: OutputStream, terminal: TerminalInfo) -> any Sink {
    switch format {
    case .json: return NDJSONSink(output: output)
    case .ids(let nul): return IDSink(output: output, terminator: nul ? "\0" : "\n")
    case .text: return terminal.isTerminal ? AlignedTextSink(output: output, terminal: terminal) : TextSink(output: output)
    }
}

/// Fields joined by TAB, one record per line; every field made terminal-safe and
/// single-line (sprinter-text).
public final class TextSink: Sink {
    let output: OutputStream
    private var first = true

    public init(output: OutputStream) { self.output = output }

    /// The line being built, kept between records so its storage is reused.
    private var line = TextLine()

    public func emit(_ record: Record) throws {
        // The line is built here and handed to the stream once: a write per field cost
        // a third of streaming the change feed.
        line.clear()
        line.field(record.id)
        for column in record.columns { line.field(column) }
        try write()
    }

    public func emit<Line: LineRecord>(_ record: Line) throws {
        line.clear()
        record.writeLine(&line)
        try write()
    }

    private func write() throws {
        try output.write(line: line.bytes)
        try output.flushFirst(&first)
    }

    public func finish() throws { try output.flush() }
}

public final class NDJSONSink: Sink {
    let output: OutputStream
    private var first = true

    public init(output: OutputStream) { self.output = output }

    public func emit(_ record: Record) throws {
        var line: [UInt8] = []
        line.reserveCapacity(1024)
        record.json.encode(into: &line)
        try write(&line)
    }

    public func emit<Line: LineRecord>(_ record: Line) throws {
        var line: [UInt8] = []
        line.reserveCapacity(1024)
        record.writeJSON(into: &line)
        try write(&line)
    }

    private func write(_ line: inout [UInt8]) throws {
        line.append(UInt8(ascii: "\n"))
        try output.write(bytes: line)
        try output.flushFirst(&first)
    }

    public func finish() throws { try output.flush() }
}

/// Ids only, newline- or NUL-terminated (sprinter-text0).
public final class IDSink: Sink {
    let output: OutputStream
    let terminator: String

    public init(output: OutputStream, terminator: String) {
        self.output = output
        self.terminator = terminator
    }

    private var first = true

    public func emit(_ record: Record) throws {
        try output.write(TerminalSafety.field(record.id) + terminator)
        try output.flushFirst(&first)
    }

    public func finish() throws { try output.flush() }
}

/// On a terminal: columns aligned over a batch of rows, each line cut to the width,
/// unread rows bold and ids dim when colour is allowed. Same records, same order.
public final class AlignedTextSink: Sink {
    let output: OutputStream
    let terminal: TerminalInfo
    private var batch: [Record] = []
    /// The column names, printed above the first batch and aligned with it.
    private var names: [String]?
    private var headed = false
    static let batchSize = 200
    static let maximumColumnWidth = 40

    public init(output: OutputStream, terminal: TerminalInfo) {
        self.output = output
        self.terminal = terminal
    }

    public func emit(_ record: Record) throws {
        batch.append(record)
        if batch.count >= Self.batchSize { try flushBatch() }
    }

    public func heading(_ names: [String]) { self.names = names }

    public func finish() throws {
        try flushBatch()
        try output.flush()
    }

    private func flushBatch() throws {
        guard !batch.isEmpty else { return }
        // The heading goes with the first batch, as a row of its own (never for no rows).
        if let names, !headed {
            headed = true
            batch.insert(Record(type: "heading", id: names.first ?? "", fields: [], columns: Array(names.dropFirst()),
                                emphasis: .dim), at: 0)
        }
        let rows = batch.map { ([$0.id] + $0.columns).map(TerminalSafety.field) }
        let columnCount = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columnCount)
        for row in rows {
            for (index, field) in row.enumerated() where index < columnCount - 1 {
                widths[index] = min(Self.maximumColumnWidth, max(widths[index], DisplayWidth.of(field)))
            }
        }
        let limit = terminal.width > 0 ? terminal.width : Int.max
        for (record, row) in zip(batch, rows) {
            // Every cell is cut to the room left on the line, padding included: a line
            // never wraps, whatever the subjects and names hold.
            var line = ""
            var used = 0
            for (index, field) in row.enumerated() {
                let room = limit == Int.max ? Int.max : limit - used
                if room <= 0 { break }
                let isLast = index == row.count - 1
                var cell = DisplayWidth.truncate(field, to: isLast ? room : min(widths[index], room))
                var cellWidth = DisplayWidth.of(cell)
                if !isLast {
                    let padded = min(widths[index] + 2, room)
                    cell += String(repeating: " ", count: max(0, padded - cellWidth))
                    cellWidth = max(cellWidth, padded)
                }
                if terminal.color && index == 0 { cell = "\u{1B}[2m" + cell + "\u{1B}[0m" }
                line += cell
                used += cellWidth
            }
            if terminal.color && record.emphasis == .strong { line = "\u{1B}[1m" + line + "\u{1B}[0m" }
            if terminal.color && record.emphasis == .dim { line = "\u{1B}[2m" + line + "\u{1B}[0m" }
            try output.write(line + "\n")
        }
        batch.removeAll(keepingCapacity: true)
    }
}

/// Terminal cell widths: East Asian wide and emoji take two cells, combining marks none.
public enum DisplayWidth {
    public static func of(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + cells($1) }
    }

    static func cells(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x300 { return 1 }  // Latin text: no property lookups
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0  // combining marks, ZWSP, ZWJ, BOM, WJ
        default: break
        }
        if (0xFE00...0xFE0F).contains(v) { return 0 }
        // Emoji shown as pictures by default take two cells wherever they are (⌚, ⚡, 🀄).
        if properties.isEmojiPresentation { return 2 }
        if (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1FAFF).contains(v) || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return 1
    }

    /// The text cut to at most `width` cells, with "…" when something was cut.
    public static func truncate(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        guard width > 0 else { return "" }
        var result = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let cell = cells(scalar)
            if used + cell > width - 1 { break }
            result.append(scalar)
            used += cell
        }
        return String(result) + "…"
    }
}
