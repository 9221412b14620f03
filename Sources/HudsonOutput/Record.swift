/*!
 A record is what a command says; a sink decides how it looks (notmuch's sprinter,
 ripgrep's printer). Every record has a type and an id, the id first in text so the
 output of any command can be piped into any other (CONTRACT.md "Ids and input").
 */

public struct Record: Sendable {
    public enum Emphasis: Sendable { case normal, strong, dim }

    /// The JSON `type`: "thread", "message", "label", "change", ...
    public var type: String
    /// A typed reference (`thread:…`, `message:…`) or another stable id.
    public var id: String
    /// The JSON members after `type` and `id`, in order.
    public var fields: [(String, JSONValue)]
    /// The text columns after the id, in order.
    public var columns: [String]
    /// How a terminal may present the row; never changes the data.
    public var emphasis: Emphasis

    public init(type: String, id: String, fields: [(String, JSONValue)], columns: [String], emphasis: Emphasis = .normal) {
        self.type = type
        self.id = id
        self.fields = fields
        self.columns = columns
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
    func finish() throws
}
