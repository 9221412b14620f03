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

    /// The array so far, without its closing bracket.
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
        for index in fields.indices {
            if index > 0 { encoded.append(UInt8(ascii: ",")) }
            switch fields[index] {
            case .integer(let value): Self.appendInteger(value, to: &encoded)
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

    /// Decimal digits, without the String a description would allocate.
    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[index]) }
        }
    }

    /// A JSON string (RFC 8259 section 7): quote, backslash and control characters escaped,
    /// everything else as its UTF-8 bytes.
    private static func appendString(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            out.append(UInt8(ascii: "\""))
            // Ids and label names never need escaping: copy them whole.
            var clean = true
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                clean = false
                break
            }
            if clean {
                out.append(contentsOf: bytes)
            } else {
                for byte in bytes {
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
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}
