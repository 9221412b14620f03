/*!
 A record's JSON members defined once and written two ways: as `JSONValue` members (for
 `Record.fields`, which every sink but NDJSON reads) or straight into an NDJSON line's
 bytes. Streaming a whole search as NDJSON built, per message, fifteen `JSONValue`s, two
 arrays of them and an array of members only to encode and free them: a quarter of
 `hd-search -n 0 --json` (issue 43 §1). A `LineRecord` whose members are written through
 `JSONMemberWriter` gives the NDJSON sink the same bytes without that tree.
 */

/// Where a record's JSON members go, in the order they are written.
public protocol JSONMemberWriter {
    mutating func member(_ key: StaticString, _ value: String?)
    mutating func member(_ key: StaticString, _ value: Int64)
    mutating func member(_ key: StaticString, _ value: Bool)
    mutating func member(_ key: StaticString, strings values: [String])
}

/// The members as `JSONValue`s: what `Record.fields` holds.
public struct JSONMemberList: JSONMemberWriter {
    public private(set) var members: [(String, JSONValue)] = []

    public init() {}

    /// The members `write` writes.
    public static func build(_ write: (inout JSONMemberList) -> Void) -> [(String, JSONValue)] {
        var list = JSONMemberList()
        write(&list)
        return list.members
    }

    public mutating func member(_ key: StaticString, _ value: String?) {
        members.append((key.description, value.map { .string($0) } ?? .null))
    }

    public mutating func member(_ key: StaticString, _ value: Int64) { members.append((key.description, .int(value))) }

    public mutating func member(_ key: StaticString, _ value: Bool) { members.append((key.description, .bool(value))) }

    public mutating func member(_ key: StaticString, strings values: [String]) {
        members.append((key.description, .array(values.map { .string($0) })))
    }
}

/// One JSON object written into bytes as `JSONValue.encode` writes the same members:
/// `{"type":…,"id":…`, each member after a comma, then `}`.
public struct JSONObjectWriter: JSONMemberWriter {
    private var bytes: [UInt8] = []

    /// Appends the object with its `type` and `id` (Record.json's first two members) and
    /// the members `members` writes to `output`, in the caller's buffer (swapped in and
    /// out, never copied).
    public static func write(
        type: String, id: String, into output: inout [UInt8], _ members: (inout JSONObjectWriter) -> Void
    ) {
        var object = JSONObjectWriter()
        swap(&object.bytes, &output)
        object.bytes.append(contentsOf: #"{"type":"#.utf8)
        JSONValue.encodeString(type, into: &object.bytes)
        object.bytes.append(contentsOf: #","id":"#.utf8)
        JSONValue.encodeString(id, into: &object.bytes)
        members(&object)
        object.bytes.append(UInt8(ascii: "}"))
        swap(&object.bytes, &output)
    }

    private mutating func key(_ key: StaticString) {
        bytes.append(UInt8(ascii: ","))
        // The keys are the program's own literals, lower-case words and `_`, which JSON
        // writes as they are (asserted in debug builds, where the tests run).
        key.withUTF8Buffer { literal in
            assert(literal.allSatisfy { $0 == UInt8(ascii: "_") || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) })
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: literal)
            bytes.append(contentsOf: #"":"#.utf8)
        }
    }

    public mutating func member(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { JSONValue.encodeString(value, into: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
    }

    public mutating func member(_ key: StaticString, _ value: Int64) {
        self.key(key)
        Bytes.appendDecimal(value, to: &bytes)
    }

    public mutating func member(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func member(_ key: StaticString, strings values: [String]) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.encodeString(value, into: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
