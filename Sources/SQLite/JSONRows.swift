/*!
 Many rows bound as one argument: a JSON array of arrays, which a statement reads with
 `json_each` (`FROM json_each(?) AS r`, then `r.value ->> 0`, `r.value ->> 1`, ...). A
 write of a thousand rows is then one statement instead of a thousand: each statement
 run costs a reset, bindings, cursors opened and closed, and a round trip through the
 wrapper, which for small rows is most of the work (docs/performance.md, "hd-mark").
 `->>` (SQLite 3.38) gives the SQL value: a JSON string as TEXT, a number as INTEGER.
 */

/// Rows of integers, text and NULLs, encoded as one JSON text argument.
public struct JSONRows: SQLiteBindable {
    /// One field of a row.
    public enum Field: Sendable {
        case integer(Int64)
        case text(String)
        case null
    }

    private var encoded: [UInt8] = [UInt8(ascii: "[")]
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ fields: Field...) {
        append(fields)
    }

    public mutating func append(_ fields: [Field]) {
        if count > 0 { encoded.append(UInt8(ascii: ",")) }
        encoded.append(UInt8(ascii: "["))
        for (index, field) in fields.enumerated() {
            if index > 0 { encoded.append(UInt8(ascii: ",")) }
            switch field {
            case .integer(let value): encoded.append(contentsOf: String(value).utf8)
            case .text(let value): Self.appendString(value, to: &encoded)
            case .null: encoded.append(contentsOf: "null".utf8)
            }
        }
        encoded.append(UInt8(ascii: "]"))
        count += 1
    }

    public var sqliteValue: SQLiteValue {
        .text(String(decoding: encoded + [UInt8(ascii: "]")], as: UTF8.self))
    }

    /// A JSON string (RFC 8259 section 7): quote, backslash and control characters escaped,
    /// everything else as its UTF-8 bytes.
    private static func appendString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xf)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
