/*!
 Structured MIME header values: `Content-Type: text/plain; charset="utf-8"` and
 `Content-Disposition: attachment; filename*=UTF-8''%E2%82%AC.pdf` become a lower-cased value
 and a table of parameters. Parameter syntax follows RFC 2045 §5.1 (token or quoted-string,
 case-insensitive names), extended by RFC 2231 (charset and percent-encoding, split
 continuations `name*0*=`, `name*1=`), and leniently by the RFC 2047 encoded words that many
 mailers put in `filename="=?UTF-8?B?...?="` although RFC 2047 §5 forbids it.
 */

/// A parsed structured header value such as a Content-Type or Content-Disposition.
public struct MIMEHeaderValue: Sendable, Equatable {
    /// The part before the first `;`, trimmed and lower-cased: `text/plain`, `attachment`.
    public var value: String
    /// Parameters by lower-cased name, fully decoded. When a name occurs twice the first wins;
    /// an RFC 2231 form (`name*`) wins over a plain one, as RFC 6266 §4.3 recommends.
    public var parameters: [String: String]

    /// Creates a value from already-decoded parts; names should be lower-cased.
    public init(value: String, parameters: [String: String] = [:]) {
        self.value = value
        self.parameters = parameters
    }

    /// The parameter with this name, compared case-insensitively.
    public subscript(parameter name: String) -> String? {
        parameters[name.lowercased()]
    }

    /// The `type/subtype` when the value is a well-formed media type, else nil
    /// (RFC 2045 §5.2: an invalid Content-Type is treated as absent, i.e. text/plain).
    public var mediaType: String? {
        let pieces = value.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty,
              !value.contains(" ") else { return nil }
        return value
    }

    /// Parses a header value; never fails (missing quotes, stray semicolons, comments and
    /// unquoted spaces are all tolerated).
    public static func parse(_ header: String) -> MIMEHeaderValue {
        let segments = splitSegments(Array(header.unicodeScalars))
        guard let first = segments.first else { return MIMEHeaderValue(value: "") }
        let value = stripComment(String(String.UnicodeScalarView(first.name))).lowercased()
        var plain: [String: String] = [:]
        var extended: [String: [Int: (text: String, encoded: Bool)]] = [:]
        for segment in segments.dropFirst() {
            guard let rawValue = segment.value else { continue }
            let name = String(String.UnicodeScalarView(segment.name)).trimmingWhitespace().lowercased()
            guard !name.isEmpty else { continue }
            let text = segment.quoted ? rawValue : stripComment(rawValue)
            if let star = name.firstIndex(of: "*") {
                // RFC 2231 §3/§4: name*, name*N, name*N*.
                let base = String(name[..<star])
                let rest = name[name.index(after: star)...]
                let encoded = rest.hasSuffix("*") || rest.isEmpty
                let digits = rest.hasSuffix("*") ? rest.dropLast() : rest
                guard let section = digits.isEmpty ? 0 : Int(digits), section >= 0, section < 1000 else { continue }
                if extended[base]?[section] == nil {
                    extended[base, default: [:]][section] = (text, encoded)
                }
            } else if plain[name] == nil {
                plain[name] = text
            }
        }
        var parameters: [String: String] = [:]
        for (name, text) in plain {
            parameters[name] = text.contains("=?") ? EncodedWords.decode(text) : text
        }
        for (name, sections) in extended {
            parameters[name] = joinSections(sections)
        }
        return MIMEHeaderValue(value: value, parameters: parameters)
    }

    // MARK: - RFC 2231

    /// Joins continuation sections in order and decodes them with the charset named in the
    /// first section's `charset'language'` prefix (RFC 2231 §4: only the first carries it).
    private static func joinSections(_ sections: [Int: (text: String, encoded: Bool)]) -> String {
        var charset: String? = nil
        var bytes: [UInt8] = []
        let order = sections.keys.sorted()
        for index in order {
            guard let section = sections[index] else { continue }
            var text = Substring(section.text)
            if section.encoded && index == order.first {
                let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3 {
                    charset = pieces[0].isEmpty ? nil : String(pieces[0])
                    text = pieces[2]
                }
            }
            bytes.append(contentsOf: section.encoded ? percentDecode(text.utf8) : Array(text.utf8))
        }
        return Charset.decodeText(bytes: bytes, charset: charset)
    }

    /// `%XX` to bytes; a `%` not followed by two hex digits stays literal.
    static func percentDecode<Bytes: Collection>(_ text: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let input = Array(text)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
               let high = QuotedPrintable.hexValue(input[index + 1]),
               let low = QuotedPrintable.hexValue(input[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(input[index])
                index += 1
            }
        }
        return output
    }

    // MARK: - Lexing

    /// One `;`-separated segment: `name` alone (the first segment, or a bare word) or
    /// `name=value`, with whether the value was a quoted-string.
    private struct Segment {
        var name: [Unicode.Scalar] = []
        var value: String? = nil
        var quoted = false
    }

    /// Splits at semicolons outside quoted-strings and undoes quoted-string escapes
    /// (RFC 5322 §3.2.4). A quote left open runs to the end of the header.
    private static func splitSegments(_ scalars: [Unicode.Scalar]) -> [Segment] {
        var segments: [Segment] = []
        var current = Segment()
        var valueScalars = String.UnicodeScalarView()
        var inValue = false
        var valueStarted = false  // Whether the value has had a non-blank character yet.
        var index = 0
        func finish() {
            if inValue {
                current.value = current.quoted ? String(valueScalars) : String(valueScalars).trimmingWhitespace()
            }
            segments.append(current)
            current = Segment()
            valueScalars = String.UnicodeScalarView()
            inValue = false
            valueStarted = false
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == ";" {
                finish()
            } else if !inValue {
                if scalar == "=" && !segments.isEmpty {
                    inValue = true
                } else {
                    current.name.append(scalar)
                }
            } else if scalar == "\"" && !current.quoted && !valueStarted {
                // A quoted-string: read to the closing quote, then skip to the next ";".
                current.quoted = true
                valueScalars = String.UnicodeScalarView()
                index += 1
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                    valueScalars.append(scalars[index])
                    index += 1
                }
                while index + 1 < scalars.count, scalars[index + 1] != ";" { index += 1 }
            } else {
                valueScalars.append(scalar)
                if !isSpace(scalar) { valueStarted = true }
            }
            index += 1
        }
        finish()
        return segments
    }

    /// Drops an RFC 5322 comment that trails an unquoted value: `us-ascii (Plain text)`.
    /// A parenthesis inside a word (`report(1).pdf`) does not open a comment.
    private static func stripComment(_ text: String) -> String {
        var previous: Character = " "
        for index in text.indices {
            let character = text[index]
            if character == "(" && previous.isWhitespace {
                return String(text[..<index]).trimmingWhitespace()
            }
            previous = character
        }
        return text.trimmingWhitespace()
    }
}
