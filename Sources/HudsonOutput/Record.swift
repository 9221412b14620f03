/*!
 A record is what a command says; a sink decides how it looks (notmuch's sprinter,
 ripgrep's printer). Every record has a type and an id, the id first in text so the
 output of any command can be piped into any other (CONTRACT.md "Ids and input").
 */

public struct Record {
    public enum Emphasis: Sendable { case normal, strong, dim }

    /// The JSON `type`: "thread", "message", "label", "change", ...
    public var type: String
    /// A typed reference (`thread:…`, `message:…`) or another stable id.
    public var id: String
    /// The JSON members after `type` and `id`, in order.
    public var fields: [(String, JSONValue)] { makeFields() }
    /// The text columns after the id, in order.
    public var columns: [String] { makeColumns() }
    /// How a terminal may present the row; never changes the data.
    public var emphasis: Emphasis

    // A sink reads one of the two forms; each is built only when read (building both, two
    // date formats and two label lists per message, was a fifth of streaming a search).
    private let makeFields: () -> [(String, JSONValue)]
    private let makeColumns: () -> [String]

    public init(
        type: String, id: String, fields: @autoclosure @escaping () -> [(String, JSONValue)],
        columns: @autoclosure @escaping () -> [String], emphasis: Emphasis = .normal
    ) {
        self.type = type
        self.id = id
        makeFields = fields
        makeColumns = columns
        self.emphasis = emphasis
    }

    /// The NDJSON object: `type`, `id`, then the fields.
    public var json: JSONValue {
        .object([("type", .string(type)), ("id", .string(id))] + fields)
    }
}

/// Where records go. `finish()` flushes; after it, nothing more is written.
public protocol Sink {
    func emit(_ record: Record) throws
    /// A record that can write its own text line (`TextLine.swift`); a sink that prints
    /// anything but plain text lines prints its `record`.
    func emit<Line: LineRecord>(_ record: Line) throws
    /// Names the columns (the id's first) of the records that follow, for a person
    /// reading aligned columns on a terminal; every other sink prints nothing, so what
    /// a pipe gets is unchanged (issue 38 §4).
    func heading(_ names: [String])
    func finish() throws
}

extension Sink {
    public func emit<Line: LineRecord>(_ record: Line) throws { try emit(record.record) }
    public func heading(_ names: [String]) {}
}
