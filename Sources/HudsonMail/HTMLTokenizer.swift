/*!
 A forgiving HTML tokenizer for mail bodies: it splits markup into text runs, start tags
 (lower-cased name and attributes) and end tags, and drops comments, doctypes and processing
 instructions. It follows the shape of the HTML5 tokenizer (WHATWG HTML §13.2.5) where that
 matters for mail (a `<` that starts no tag is text; raw-text elements such as `<script>` and
 `<style>` end only at their own end tag; a tag cut off by the end of input is dropped) and
 skips the rest. Every step consumes input and nothing recurses, so any input, including
 10 MB of `<`, takes linear time and constant stack.
 */

enum HTMLToken {
    /// Character data, as a range of the input; entities are still encoded.
    case text(Range<Int>)
    /// The contents of a raw-text or RCDATA element (`script`, `style`, `textarea`, ...).
    case rawText(element: String, range: Range<Int>)
    case startTag(name: String, attributes: [String: String], selfClosing: Bool)
    case endTag(name: String)
}

struct HTMLTokenizer {
    let input: [Unicode.Scalar]
    private var index = 0
    /// Set after a start tag whose content is raw text, until its end tag.
    private var rawTextElement: String? = nil

    /// Elements whose content is not markup (HTML5 §13.1.2.1): raw text and escapable raw text.
    static let rawTextElements: Set<String> = [
        "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
    ]

    init(_ input: [Unicode.Scalar]) {
        self.input = input
    }

    mutating func next() -> HTMLToken? {
        if let element = rawTextElement {
            rawTextElement = nil
            let start = index
            let end = findEndTag(element, from: start)
            index = end
            if end > start { return .rawText(element: element, range: start..<end) }
        }
        while index < input.count {
            if input[index] != "<" {
                let start = index
                while index < input.count, input[index] != "<" { index += 1 }
                return .text(start..<index)
            }
            let start = index
            if let token = markup() {
                if case .startTag(let name, _, let selfClosing) = token, !selfClosing,
                   Self.rawTextElements.contains(name) {
                    rawTextElement = name
                }
                return token
            }
            if index == start {
                // A "<" that opens no markup is an ordinary character (HTML5 "tag open state").
                index += 1
                return .text(start..<index)
            }
            // Markup that produced no token (a comment, a doctype): carry on after it.
        }
        return nil
    }

    /// Reads the markup at a `<`. Returns nil, with `index` unchanged, when the `<` opens
    /// no markup; returns nil with `index` advanced for comments and declarations.
    private mutating func markup() -> HTMLToken? {
        let next = peek(1)
        if next == "!" {
            if peek(2) == "-" && peek(3) == "-" {
                skipComment()
            } else {
                skip(past: ">", from: index + 2)
            }
            return nil
        }
        if next == "?" {
            skip(past: ">", from: index + 2)
            return nil
        }
        if next == "/" {
            guard let letter = peek(2) else { index += 2; return nil }
            if letter == ">" { index += 3; return nil }
            guard isASCIILetter(letter) else {
                skip(past: ">", from: index + 2)
                return nil
            }
            index += 2
            let name = readTagName()
            // Attributes on an end tag are a parse error and are ignored.
            guard let _ = readAttributes() else { return nil }
            return .endTag(name: name)
        }
        guard let letter = next, isASCIILetter(letter) else { return nil }
        index += 1
        let name = readTagName()
        guard let (attributes, selfClosing) = readAttributes() else { return nil }
        return .startTag(name: name, attributes: attributes, selfClosing: selfClosing)
    }

    private mutating func readTagName() -> String {
        var name = String.UnicodeScalarView()
        while index < input.count {
            let scalar = input[index]
            if isSpace(scalar) || scalar == "/" || scalar == ">" { break }
            name.append(lowercased(scalar))
            index += 1
        }
        return String(name)
    }

    /// Reads attributes up to and including the closing `>`. Returns nil (and consumes the
    /// rest of the input) when the input ends inside the tag: HTML5 drops such a tag.
    private mutating func readAttributes() -> ([String: String], Bool)? {
        var attributes: [String: String] = [:]
        var selfClosing = false
        while index < input.count {
            let scalar = input[index]
            if isSpace(scalar) { index += 1; continue }
            if scalar == ">" { index += 1; return (attributes, selfClosing) }
            if scalar == "/" { selfClosing = true; index += 1; continue }
            selfClosing = false
            var name = String.UnicodeScalarView()
            name.append(lowercased(scalar))
            index += 1
            while index < input.count {
                let character = input[index]
                if isSpace(character) || character == "/" || character == ">" || character == "=" { break }
                name.append(lowercased(character))
                index += 1
            }
            while index < input.count, isSpace(input[index]) { index += 1 }
            var value = ""
            if index < input.count, input[index] == "=" {
                index += 1
                while index < input.count, isSpace(input[index]) { index += 1 }
                guard index < input.count else { return nil }
                let quote = input[index]
                if quote == "\"" || quote == "'" {
                    let start = index + 1
                    var end = start
                    while end < input.count, input[end] != quote { end += 1 }
                    guard end < input.count else { index = end; return nil }
                    value = HTMLText.decodeReferences(input[start..<end], inAttribute: true)
                    index = end + 1
                } else {
                    let start = index
                    while index < input.count, !isSpace(input[index]), input[index] != ">" { index += 1 }
                    value = HTMLText.decodeReferences(input[start..<index], inAttribute: true)
                }
            }
            let key = String(name)
            if attributes[key] == nil { attributes[key] = value }
        }
        return nil
    }

    /// Skips `<!-- ... -->`; an unterminated comment runs to the end (HTML5 "EOF in comment").
    private mutating func skipComment() {
        var cursor = index + 4
        // "<!-->" and "<!--->" are complete (empty) comments.
        if cursor < input.count, input[cursor] == ">" { index = cursor + 1; return }
        if cursor + 1 < input.count, input[cursor] == "-", input[cursor + 1] == ">" { index = cursor + 2; return }
        while cursor + 2 < input.count {
            if input[cursor] == "-" && input[cursor + 1] == "-" {
                if input[cursor + 2] == ">" { index = cursor + 3; return }
                if input[cursor + 2] == "!", cursor + 3 < input.count, input[cursor + 3] == ">" {
                    index = cursor + 4
                    return
                }
            }
            cursor += 1
        }
        index = input.count
    }

    private mutating func skip(past terminator: Unicode.Scalar, from start: Int) {
        var cursor = start
        while cursor < input.count, input[cursor] != terminator { cursor += 1 }
        index = min(cursor + 1, input.count)
    }

    /// The index of the `</name` that ends a raw-text element, or the end of the input.
    private func findEndTag(_ name: String, from start: Int) -> Int {
        let nameScalars = Array(name.unicodeScalars)
        var cursor = start
        while cursor + 1 < input.count {
            if input[cursor] == "<", input[cursor + 1] == "/", cursor + 2 + nameScalars.count <= input.count {
                var matches = true
                for (offset, expected) in nameScalars.enumerated()
                where lowercased(input[cursor + 2 + offset]) != expected {
                    matches = false
                    break
                }
                let after = cursor + 2 + nameScalars.count
                if matches && (after == input.count || isSpace(input[after]) || input[after] == ">" || input[after] == "/") {
                    return cursor
                }
            }
            cursor += 1
        }
        return input.count
    }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < input.count ? input[index + offset] : nil
    }
}

private func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
}

private func lowercased(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
    ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
}
