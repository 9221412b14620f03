/*!
 The output side of the HTML-to-text converter: it collects characters and turns layout
 requests ("a line break here", "a paragraph break here", "a space if more text follows")
 into text with collapsed whitespace, no trailing blanks, at most two blank lines in a row,
 and a `> ` prefix per blockquote level. Requests are lazy: breaks and spaces are written only
 when real text follows, so empty elements and trailing markup leave nothing behind.
 */

struct PlainTextBuilder {
    private(set) var scalars: [Unicode.Scalar] = []
    /// Newlines owed before the next text: 1 ends the line, 2 leaves a blank line.
    private var pendingBreaks = 0
    private var pendingSpace = false
    /// Consecutive newlines at the end of `scalars`.
    private var trailingNewlines = 0
    var quoteDepth = 0
    var listDepth = 0

    /// More blank lines than this in a row are collapsed.
    static let maximumNewlines = 3
    /// Deeper nesting stops adding prefix or indentation, so hostile nesting cannot make
    /// every line quadratically long.
    static let maximumPrefixDepth = 8

    /// A position to return to with ``truncate(to:)``.
    struct Mark {
        fileprivate var count: Int
        fileprivate var pendingBreaks: Int
        fileprivate var pendingSpace: Bool
        fileprivate var trailingNewlines: Int
    }

    var mark: Mark {
        Mark(count: scalars.count, pendingBreaks: pendingBreaks, pendingSpace: pendingSpace,
             trailingNewlines: trailingNewlines)
    }

    /// Forgets everything written since `mark` (used to drop hidden elements once their end
    /// tag proves they were closed).
    mutating func truncate(to mark: Mark) {
        guard mark.count <= scalars.count else { return }
        scalars.removeSubrange(mark.count...)
        pendingBreaks = mark.pendingBreaks
        pendingSpace = mark.pendingSpace
        trailingNewlines = mark.trailingNewlines
    }

    /// Text that flows: runs of whitespace become one space, invisible formatting characters
    /// (zero-width spaces, soft hyphens, the U+034F padding of e-mail preheaders) vanish.
    mutating func appendFlowing<Scalars: Sequence>(_ text: Scalars) where Scalars.Element == Unicode.Scalar {
        for scalar in text {
            if isSpace(scalar) || scalar == "\u{A0}" {
                pendingSpace = true
            } else if !Self.isInvisible(scalar) {
                appendContent(scalar)
            }
        }
    }

    /// Preformatted text: spaces and line breaks are kept as written.
    mutating func appendPreformatted<Scalars: Sequence>(_ text: Scalars) where Scalars.Element == Unicode.Scalar {
        for scalar in text {
            switch scalar {
            case "\n": lineBreak()
            case "\r": continue
            case " ", "\t", "\u{A0}":
                appendContent(scalar == "\u{A0}" ? " " : scalar)
            default:
                if !Self.isInvisible(scalar) { appendContent(scalar) }
            }
        }
    }

    /// Content that is not running text (a list marker, a link target): written as is,
    /// after any owed break or space.
    mutating func appendWord(_ word: String) {
        for scalar in word.unicodeScalars { appendContent(scalar) }
    }

    /// A space before the next content, unless a line starts there.
    mutating func requestSpace() {
        pendingSpace = true
    }

    /// At least `count` newlines before the next content (1: new line; 2: blank line).
    mutating func requestBreak(_ count: Int) {
        pendingBreaks = max(pendingBreaks, count)
        pendingSpace = false
    }

    /// A `<br>`: ends the line now, so two in a row leave a blank line.
    mutating func lineBreak() {
        guard !scalars.isEmpty else { return }
        flushBreaks()
        trimTrailingBlanks()
        if trailingNewlines < Self.maximumNewlines {
            scalars.append("\n")
            trailingNewlines += 1
        }
        pendingSpace = false
    }

    /// The text so far, without leading or trailing blank lines.
    var text: String {
        var end = scalars.count
        while end > 0, isSpace(scalars[end - 1]) { end -= 1 }
        var start = 0
        while start < end, scalars[start] == "\n" { start += 1 }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<end])
        return String(view)
    }

    private mutating func appendContent(_ scalar: Unicode.Scalar) {
        flushBreaks()
        if pendingSpace {
            if trailingNewlines == 0 && !scalars.isEmpty && scalars.last != " " { scalars.append(" ") }
            pendingSpace = false
        }
        if trailingNewlines > 0 || scalars.isEmpty { appendPrefix() }
        scalars.append(scalar)
        trailingNewlines = 0
    }

    private mutating func flushBreaks() {
        defer { pendingBreaks = 0 }
        guard pendingBreaks > 0, !scalars.isEmpty else { return }
        let owed = min(pendingBreaks, Self.maximumNewlines) - trailingNewlines
        if owed > 0 {
            trimTrailingBlanks()
            for _ in 0..<owed { scalars.append("\n") }
            trailingNewlines += owed
        }
        pendingSpace = false
    }

    /// Drops the blanks a preformatted line may end with, before the line is broken.
    private mutating func trimTrailingBlanks() {
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    }

    private mutating func appendPrefix() {
        for _ in 0..<min(quoteDepth, Self.maximumPrefixDepth) {
            scalars.append(">")
            scalars.append(" ")
        }
        for _ in 0..<max(0, min(listDepth, Self.maximumPrefixDepth) - 1) {
            scalars.append(" ")
            scalars.append(" ")
        }
    }

    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200B, 0x200C, 0x2060, 0xFEFF, 0x034F, 0x00AD, 0x180E: return true
        default: return false
        }
    }
}
