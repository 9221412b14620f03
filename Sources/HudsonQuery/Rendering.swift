/*!
 The S-expression rendering of a query tree that `hd-search --explain` prints, e.g.
 `(and (from "alice") (or (text "x") (phrase "a b")))`. It is part of the output
 contract, so it is deterministic (no dictionaries, no locale) and changes only on
 purpose. Operator heads use Gmail's operator names; strings are always quoted, with
 `"` and `\` escaped and control or bidirectional-override characters written as
 `\u{…}`, so a rendering is one printable line that cannot reorder a terminal's text.
 */

extension Query: CustomStringConvertible {
    public var description: String { root.description }
}

extension QueryNode: CustomStringConvertible {
    public var description: String {
        var output = ""
        render(into: &output)
        return output
    }

    private func render(into output: inout String) {
        switch self {
        case .all:
            output += "(all)"
        case .term(let term):
            output += term.description
        case .and(let children), .or(let children):
            if case .and = self { output += "(and" } else { output += "(or" }
            for child in children {
                output += " "
                child.render(into: &output)
            }
            output += ")"
        case .not(let inner):
            output += "(not "
            inner.render(into: &output)
            output += ")"
        }
    }
}

extension Term: CustomStringConvertible {
    public var description: String {
        switch self {
        case .text(let value): return "(text \(quote(value)))"
        case .phrase(let value): return "(phrase \(quote(value)))"
        case .from(let value): return "(from \(quote(value)))"
        case .to(let value): return "(to \(quote(value)))"
        case .cc(let value): return "(cc \(quote(value)))"
        case .bcc(let value): return "(bcc \(quote(value)))"
        case .deliveredTo(let value): return "(deliveredto \(quote(value)))"
        case .subject(let value, let quoted):
            return quoted ? "(subject (phrase \(quote(value))))" : "(subject \(quote(value)))"
        case .label(let name): return "(label \(quote(name.raw)) :normalized \(quote(name.normalized)))"
        case .location(let location): return "(in \(location.rawValue))"
        case .flag(let flag): return "(is \(flag.rawValue))"
        case .has(let kind): return "(has \(kind.rawValue))"
        case .filename(let value): return "(filename \(quote(value)))"
        case .after(let date): return "(after \(date))"
        case .before(let date): return "(before \(date))"
        case .olderThan(let age): return "(older_than \(age))"
        case .newerThan(let age): return "(newer_than \(age))"
        case .larger(let bytes): return "(larger \(bytes))"
        case .smaller(let bytes): return "(smaller \(bytes))"
        case .category(let category): return "(category \(category.rawValue))"
        case .rfc822MessageID(let value): return "(rfc822msgid \(quote(value)))"
        case .list(let value): return "(list \(quote(value)))"
        case .snoozedBefore(let date): return "(snoozed-before \(date))"
        case .awaitingReply(let age): return "(awaiting-reply \(age))"
        }
    }
}

extension DateValue: CustomStringConvertible {
    /// `2024-03-09` for a day (ISO 8601 order, whatever the user typed), `@1733011200`
    /// for epoch seconds (the `@` marks an instant, as in GNU date).
    public var description: String {
        switch self {
        case .day(let year, let month, let day):
            return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
        case .epochSeconds(let seconds):
            return "@\(seconds)"
        }
    }
}

extension RelativeAge: CustomStringConvertible {
    /// Gmail's own spelling: `7d`, `6m`, `1y`.
    public var description: String { "\(amount)\(unit.rawValue)" }
}

private func padded(_ number: Int, _ width: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// A double-quoted string literal for the rendering.
private func quote(_ value: String) -> String {
    var output = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": output += "\\\""
        case "\\": output += "\\\\"
        default:
            if mustEscape(scalar) {
                output += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
    }
    return output + "\""
}

/// C0, DEL and C1 controls, and the bidirectional marks, embeddings, overrides and
/// isolates (U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) that could disguise a line.
private func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x200E...0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
}
