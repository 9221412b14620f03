/*!
 HTML mail to readable plain text, for messages that have no text/plain alternative. It reads
 the token stream of `HTMLTokenizer` once, drops what a reader never sees (`<script>`,
 `<style>`, `<head>`, `<title>`, comments, elements hidden with `display:none` and the like,
 such as marketing preheaders), turns block elements into line breaks, list items into
 `- ` lines and blockquotes into `> ` lines, keeps link targets as `label <url>`, images as
 `[alt]`, and decodes character references (HTML5 §13.2.5.72–80). Work is linear in the input
 and nothing recurses, whatever the nesting.
 */

public enum HTMLText {
    /// Converts an HTML document or fragment to plain text (see the file comment for the rules).
    public static func render(_ html: String) -> String {
        var renderer = Renderer(Array(html.unicodeScalars))
        return renderer.run()
    }

    /// Decodes character references in text: named (`&eacute;`, and the legacy names without
    /// `;` outside attributes), decimal (`&#233;`) and hexadecimal (`&#xE9;`). Numbers that
    /// are not Unicode scalars become U+FFFD; 0x80–0x9F map as Windows-1252 (HTML5 §13.2.5.80).
    /// Unknown names stay as written.
    public static func decodeReferences(_ text: String) -> String {
        decodeReferences(Array(text.unicodeScalars)[...], inAttribute: false)
    }

    static func decodeReferences(_ text: ArraySlice<Unicode.Scalar>, inAttribute: Bool) -> String {
        var output = String.UnicodeScalarView()
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "&", let (scalar, next) = reference(in: text, at: index, inAttribute: inAttribute) {
                output.append(scalar)
                index = next
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return String(output)
    }

    /// The scalar for the reference starting at `start` (an `&`), and the index after it.
    private static func reference(
        in text: ArraySlice<Unicode.Scalar>, at start: Int, inAttribute: Bool
    ) -> (Unicode.Scalar, Int)? {
        var cursor = start + 1
        guard cursor < text.endIndex else { return nil }
        if text[cursor] == "#" {
            cursor += 1
            let hex = cursor < text.endIndex && (text[cursor] == "x" || text[cursor] == "X")
            if hex { cursor += 1 }
            var value: UInt32 = 0
            var digits = 0
            while cursor < text.endIndex, let digit = digitValue(text[cursor], hex: hex) {
                value = min(value &* (hex ? 16 : 10) &+ digit, 0x110000)
                digits += 1
                cursor += 1
            }
            guard digits > 0 else { return nil }
            if cursor < text.endIndex, text[cursor] == ";" { cursor += 1 }
            return (numericScalar(value), cursor)
        }
        // Names are at most 32 characters long; read letters and digits only.
        var name = String.UnicodeScalarView()
        while cursor < text.endIndex, name.count < 32, isASCIIAlphanumeric(text[cursor]) {
            name.append(text[cursor])
            cursor += 1
        }
        let key = String(name)
        if cursor < text.endIndex, text[cursor] == ";", let value = HTMLEntities.codePoints[key],
           let scalar = Unicode.Scalar(value) {
            return (scalar, cursor + 1)
        }
        guard !inAttribute else { return nil }
        // Legacy references without ";": the longest known prefix ("&copy2024" is "©2024").
        var length = key.unicodeScalars.count
        while length >= 2 {
            let prefix = String(String.UnicodeScalarView(key.unicodeScalars.prefix(length)))
            if HTMLEntities.legacyWithoutSemicolon.contains(prefix),
               let value = HTMLEntities.codePoints[prefix], let scalar = Unicode.Scalar(value) {
                return (scalar, start + 1 + length)
            }
            length -= 1
        }
        return nil
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    private static func digitValue(_ scalar: Unicode.Scalar, hex: Bool) -> UInt32? {
        switch scalar {
        case "0"..."9": return scalar.value - 48
        case "a"..."f" where hex: return scalar.value - 87
        case "A"..."F" where hex: return scalar.value - 55
        default: return nil
        }
    }

    private static func numericScalar(_ value: UInt32) -> Unicode.Scalar {
        if value >= 0x80 && value <= 0x9F { return Charset.windows1252Scalar(UInt8(value)) }
        if value == 0 { return "\u{FFFD}" }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }
}

/// Block elements: each starts and ends on its own line; the paragraph-like ones are set off
/// by a blank line.
private let paragraphElements: Set<String> = [
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "dl", "table", "pre", "figure", "hr",
]
private let lineElements: Set<String> = [
    "div", "li", "tr", "dt", "dd", "address", "article", "aside", "caption", "center", "details", "dialog",
    "fieldset", "figcaption", "footer", "form", "header", "legend", "main", "nav", "section", "summary",
    "tbody", "thead", "tfoot", "option",
]
/// Elements whose content is never shown, and raw-text elements whose content is not text.
private let invisibleElements: Set<String> = ["head", "template", "svg", "math", "object", "map"]
private let invisibleRawText: Set<String> = ["script", "style", "title", "iframe", "noembed", "noframes"]
/// Void elements have no end tag (HTML5 §13.1.2).
private let voidElements: Set<String> = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
]

private struct Renderer {
    var tokenizer: HTMLTokenizer
    var output = PlainTextBuilder()
    /// The element being hidden, its nesting depth, and where its output began.
    var hidden: (name: String, depth: Int, mark: PlainTextBuilder.Mark)? = nil
    /// The open link: its target and where its label began.
    var link: (href: String, start: Int)? = nil
    var preDepth = 0

    init(_ input: [Unicode.Scalar]) {
        tokenizer = HTMLTokenizer(input)
    }

    mutating func run() -> String {
        while let token = tokenizer.next() {
            switch token {
            case .text(let range):
                appendText(tokenizer.input[range])
            case .rawText(let element, let range):
                if !invisibleRawText.contains(element) { appendText(tokenizer.input[range]) }
            case .startTag(let name, let attributes, let selfClosing):
                start(name, attributes, selfClosing: selfClosing)
            case .endTag(let name):
                end(name)
            }
        }
        // An element still hidden at the end was never closed, so hiding it was a guess
        // that could swallow the whole message: keep what it held.
        closeLink()
        return output.text
    }

    mutating func appendText(_ raw: ArraySlice<Unicode.Scalar>) {
        if raw.contains("&") {
            append(HTMLText.decodeReferences(raw, inAttribute: false).unicodeScalars)
        } else {
            append(raw)
        }
    }

    mutating func append<Scalars: Sequence>(_ text: Scalars) where Scalars.Element == Unicode.Scalar {
        if preDepth > 0 { output.appendPreformatted(text) } else { output.appendFlowing(text) }
    }

    mutating func start(_ name: String, _ attributes: [String: String], selfClosing: Bool) {
        if var region = hidden {
            if name == region.name && !voidElements.contains(name) && !selfClosing {
                region.depth += 1
                hidden = region
            } else if region.name == "head" && name == "body" {
                endHidden()
            }
        } else if !voidElements.contains(name) && !selfClosing
                    && (invisibleElements.contains(name) || Self.isHidden(attributes)) {
            hidden = (name, 1, output.mark)
            return
        }
        requestBreak(for: name)
        switch name {
        case "br":
            output.lineBreak()
        case "hr":
            output.appendWord("----------")
            output.requestBreak(2)
        case "li":
            output.appendWord("-")
            output.requestSpace()
        case "ul", "ol", "dl":
            output.listDepth += 1
        case "blockquote":
            output.quoteDepth += 1
        case "pre", "listing", "plaintext":
            preDepth += 1
        case "td", "th":
            output.requestSpace()
        case "img":
            appendImage(attributes)
        case "a":
            closeLink()
            link = (attributes["href"] ?? "", output.scalars.count)
        default:
            break
        }
    }

    mutating func end(_ name: String) {
        if var region = hidden, name == region.name {
            region.depth -= 1
            hidden = region
            if region.depth == 0 { endHidden() }
            return
        }
        switch name {
        case "ul", "ol", "dl": output.listDepth = max(0, output.listDepth - 1)
        case "blockquote": output.quoteDepth = max(0, output.quoteDepth - 1)
        case "pre", "listing", "plaintext": preDepth = max(0, preDepth - 1)
        case "a": closeLink()
        case "td", "th": output.requestSpace()
        default: break
        }
        requestBreak(for: name)
    }

    /// Blocks start and end on their own lines; a list inside a list item is not a paragraph.
    mutating func requestBreak(for name: String) {
        let nestedList = (name == "ul" || name == "ol" || name == "dl") && output.listDepth > 0
        if paragraphElements.contains(name) && !nestedList { output.requestBreak(2) }
        if lineElements.contains(name) || nestedList { output.requestBreak(1) }
    }

    /// The hidden element was closed: drop everything it produced.
    mutating func endHidden() {
        guard let region = hidden else { return }
        output.truncate(to: region.mark)
        if let open = link, open.start > output.scalars.count { link = nil }
        hidden = nil
    }

    /// Ends a link: appends ` <target>` unless the label already says it, the target is not
    /// a place (`#`, `javascript:`), or there is no label (an invisible link).
    mutating func closeLink() {
        guard let (href, start) = link else { return }
        link = nil
        let target = href.trimmingWhitespace()
        guard start <= output.scalars.count, !target.isEmpty, !target.hasPrefix("#"),
              !target.lowercased().hasPrefix("javascript:") else { return }
        var labelScalars = String.UnicodeScalarView()
        labelScalars.append(contentsOf: output.scalars[start...])
        let label = String(labelScalars).collapsingWhitespace()
        guard !label.isEmpty else { return }
        var shown = target
        if shown.lowercased().hasPrefix("mailto:") {
            shown = String(shown.dropFirst("mailto:".count))
            if let query = shown.firstIndex(of: "?") { shown = String(shown[..<query]) }
        }
        if Self.comparable(label) == Self.comparable(shown) { return }
        output.requestSpace()
        output.appendWord("<\(shown)>")
    }

    mutating func appendImage(_ attributes: [String: String]) {
        guard !Self.isHidden(attributes), !Self.isTrackingPixel(attributes) else { return }
        let alt = (attributes["alt"] ?? "").collapsingWhitespace()
        guard !alt.isEmpty else { return }
        output.appendWord("[\(alt)]")
    }

    /// Hidden the obvious ways: the `hidden` attribute, `display:none`, `visibility:hidden`,
    /// `mso-hide:all`, zero opacity or zero height with overflow hidden (preheader idioms).
    static func isHidden(_ attributes: [String: String]) -> Bool {
        if attributes["hidden"] != nil { return true }
        guard let style = attributes["style"]?.lowercased() else { return false }
        let compact = String(style.unicodeScalars.filter { !isSpace($0) }.map(Character.init))
        if compact.contains("display:none") || compact.contains("visibility:hidden")
            || compact.contains("mso-hide:all") { return true }
        let collapsed = compact.contains("max-height:0") || compact.contains("opacity:0;") || compact.hasSuffix("opacity:0")
        return collapsed && compact.contains("overflow:hidden")
    }

    /// Images of at most 2×2 pixels are tracking beacons, not content.
    static func isTrackingPixel(_ attributes: [String: String]) -> Bool {
        func tiny(_ value: String?) -> Bool {
            guard let value else { return false }
            let digits = value.trimmingWhitespace().prefix(while: { $0.isASCII && $0.isNumber })
            return Int(digits).map { $0 <= 2 } ?? false
        }
        return tiny(attributes["width"]) || tiny(attributes["height"])
    }

    /// A link label and target compare equal without scheme, `www.`, trailing `/` and case.
    static func comparable(_ text: String) -> String {
        var value = Substring(text.trimmingWhitespace().lowercased())
        for scheme in ["https://", "http://"] where value.hasPrefix(scheme) { value = value.dropFirst(scheme.count) }
        if value.hasPrefix("www.") { value = value.dropFirst(4) }
        while value.hasSuffix("/") { value = value.dropLast() }
        return String(value)
    }
}
