/*!
 How `hd-export` lays out a Maildir and names its tags (issue 24 §2; docs/export.md):

 - one Maildir (`cur/`, `new/`, `tmp/`), every message in `cur/` under a name fixed by the
   message (`<seconds>.hudson-<gmail id>:2,<flags>`), so a rerun after a kill finds it;
 - flags (Maildir's "info", cr.yp.to/proto/maildir.html): `D` DRAFT, `F` STARRED, `S`
   read (no UNREAD), `T` TRASH, in ASCII order;
 - labels as tags named as lieer names them (`inbox`, `unread`, `flagged` for STARRED,
   `sent`, `draft`, `spam`, `trash`, `important`, `chat`, the categories by their short
   names, user labels by name), in an `X-Keywords:` header written above the source (mu
   reads it as tags) and in a `notmuch tag --batch` file.
 */
import GmailIDShape

public enum MaildirNames {
    /// Gmail's system labels → lieer's tag names.
    public static let systemTags: [String: String] = [
        "INBOX": "inbox", "UNREAD": "unread", "STARRED": "flagged", "SENT": "sent", "DRAFT": "draft",
        "SPAM": "spam", "TRASH": "trash", "IMPORTANT": "important", "CHAT": "chat",
        "CATEGORY_PERSONAL": "personal", "CATEGORY_SOCIAL": "social", "CATEGORY_PROMOTIONS": "promotions",
        "CATEGORY_UPDATES": "updates", "CATEGORY_FORUMS": "forums",
    ]

    /// The tag of a label: lieer's name for a system label, the label's name otherwise
    /// (control characters, which no tag should carry, become spaces).
    public static func tag(labelID: String, names: [String: String]) -> String {
        if let tag = systemTags[labelID] { return tag }
        let name = names[labelID] ?? labelID
        return String(String.UnicodeScalarView(name.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) ? " " : $0
        }))
    }

    /// Whether a Gmail id can be part of a file name as it is: of a Gmail id's shape (the
    /// one rule, GmailIDShape: no `/`, no dot-segment), and short enough that the whole name
    /// stays under the 255 bytes a file name may have.
    public static func isUsableID(_ id: String) -> Bool {
        GmailID.isWellFormed(id, as: .message) && id.utf8.count <= 128
    }

    /// The part of a file name fixed by the message.
    public static func unique(gmailID: String, internalDate: Int64) -> String {
        "\(max(0, internalDate / 1000)).hudson-\(gmailID)"
    }

    /// The Maildir flags of a message with these (effective) labels.
    public static func flags(_ labels: [String]) -> String {
        var flags = ""
        if labels.contains("DRAFT") { flags += "D" }
        if labels.contains("STARRED") { flags += "F" }
        if !labels.contains("UNREAD") { flags += "S" }
        if labels.contains("TRASH") { flags += "T" }
        return flags
    }

    /// `cur/<unique>:2,<flags>`.
    public static func fileName(gmailID: String, internalDate: Int64, labels: [String]) -> String {
        "\(unique(gmailID: gmailID, internalDate: internalDate)):2,\(flags(labels))"
    }

    /// The unique part of a file name Hudson wrote, nil for any other file.
    public static func uniquePart(of name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let range = uniqueRange(of: bytes[...]) else { return nil }
        return String(decoding: bytes[range], as: UTF8.self)
    }

    /// `uniquePart` on bytes (a state file names 100,000 of them, checked every run): the
    /// first run of bytes between colons, when the name holds `.hudson-`.
    static func uniqueRange(of name: ArraySlice<UInt8>) -> Range<Int>? {
        guard containsMarker(name) else { return nil }
        let colon = UInt8(ascii: ":")
        guard let start = name.firstIndex(where: { $0 != colon }) else { return nil }
        let end = name[start...].firstIndex(of: colon) ?? name.endIndex
        return start..<end
    }

    private static let marker = Array(".hudson-".utf8)

    static func containsMarker(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while let dot = bytes[index...].firstIndex(of: UInt8(ascii: ".")) {
            if bytes[dot...].starts(with: marker) { return true }
            index = dot + 1
        }
        return false
    }

    /// The `X-Keywords:` header for these tags (comma-separated, folded before 78 columns;
    /// a comma in a tag becomes a space), ending in `newline`. Written even with no tags, so
    /// `strippingKeywords` always removes this one and never a source's own `X-Keywords:`.
    public static func keywordsHeader(_ tags: [String], newline: [UInt8]) -> [UInt8] {
        guard !tags.isEmpty else { return Array("X-Keywords:".utf8) + newline }
        var output = Array("X-Keywords:".utf8)
        var column = output.count
        for (index, tag) in tags.enumerated() {
            let word = Array(tag.replacingCommas.utf8) + (index + 1 < tags.count ? [UInt8(ascii: ",")] : [])
            if column + 1 + word.count > 78 && column > 11 {
                output += newline
                column = 0
            }
            output.append(UInt8(ascii: " "))
            output += word
            column += 1 + word.count
        }
        return output + newline
    }

    /// The source without the `X-Keywords:` header an export put above it: the first line
    /// and as many folded lines as make exactly the header `keywordsHeader` writes for the
    /// tags they hold. A source whose own first lines start with a space (a malformed
    /// header, or mail built to look like a fold) keeps them: the fewest lines that
    /// regenerate are the header, since a header cut short at a fold ends in a comma.
    public static func strippingKeywords(_ file: [UInt8]) -> [UInt8] {
        let prefix = Array("X-Keywords:".utf8)
        guard file.starts(with: prefix) else { return file }
        var end = 0
        while let newline = file[end...].firstIndex(of: UInt8(ascii: "\n")) {
            end = newline + 1
            let candidate = Array(file[..<end])
            let lineEnd: [UInt8] = newline > 0 && file[newline - 1] == UInt8(ascii: "\r") ? [13, 10] : [10]
            if keywordsHeader(tags(inHeader: candidate, newline: lineEnd), newline: lineEnd) == candidate {
                return Array(file[end...])
            }
            // Only a folded line (starting with a space) can continue the header.
            guard end < file.count, file[end] == UInt8(ascii: " ") else { break }
        }
        // Not a header this export wrote (or cut short): the old rule, the first line and its folds.
        var index = 0
        while let newline = file[index...].firstIndex(of: UInt8(ascii: "\n")) {
            index = newline + 1
            guard index < file.count, file[index] == UInt8(ascii: " ") || file[index] == UInt8(ascii: "\t") else { break }
        }
        return Array(file[index...])
    }

    /// The tags a header of `keywordsHeader`'s holds: unfolded, split at commas, each
    /// without the one space written before it.
    static func tags(inHeader header: [UInt8], newline: [UInt8]) -> [String] {
        var body = Array(header.dropFirst("X-Keywords:".utf8.count))
        if body.count >= newline.count, Array(body.suffix(newline.count)) == newline { body.removeLast(newline.count) }
        var unfolded: [UInt8] = []
        var index = 0
        while index < body.count {
            if body[index...].starts(with: newline) { index += newline.count; continue }
            unfolded.append(body[index])
            index += 1
        }
        guard !unfolded.isEmpty else { return [] }
        return unfolded.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { part in
            String(decoding: part.first == UInt8(ascii: " ") ? part.dropFirst() : part[...], as: UTF8.self)
        }
    }

    /// The line ending a source uses (CRLF when its first line ends so).
    public static func newline(of source: [UInt8]) -> [UInt8] {
        if let index = source.firstIndex(of: UInt8(ascii: "\n")), index > 0, source[index - 1] == UInt8(ascii: "\r") {
            return [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
        }
        return [UInt8(ascii: "\n")]
    }
}

/// `notmuch tag --batch` lines (notmuch-tag(1), "TAG FILE FORMAT"): tags hex-encoded
/// (`%XX`) wherever a character is not plainly safe (spaces must be); the query is the
/// rest of the line, `id:"..."` with a quote doubled (notmuch-search-terms(7)) — notmuch
/// 0.37 does not decode `%XX` in a batch line's query (tested in HudsonExportTests).
public enum NotmuchBatch {
    static func encode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "-"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789abcdef".unicodeScalars)
                output += "%"
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return output
    }

    /// The Message-ID a header names, read as notmuch reads it (its lib/message-id.c and
    /// add-message.cc), so the id a batch line names is the one notmuch gave the message:
    /// spaces and comments skipped, then any text up to the first `<`; what follows, to the
    /// first `>` (or the end), with its spaces and tabs removed. A value that gives none (no
    /// `<`, `<>`, one character between them) is taken whole, as notmuch falls back to.
    /// nil when there is none.
    public static func messageID(_ header: String?) -> String? {
        guard let header else { return nil }
        let whole = Array(header.utf8)
        var start = 0, end = whole.count
        while start < end, isCSpace(whole[start]) { start += 1 }
        while end > start, isCSpace(whole[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let bytes = parsedMessageID(whole[start..<end]) ?? Array(whole[start..<end])
        let text = String(decoding: bytes, as: UTF8.self)
        // A control character or a line separator (a line break above all) would break the
        // tag file's line.
        return text.isEmpty || text.unicodeScalars.contains(where: {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029
        }) ? nil : text
    }

    /// C's isspace in the "C" locale, which notmuch's parser uses.
    private static func isCSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// notmuch's `_notmuch_message_id_parse`: nil where it gives none.
    static func parsedMessageID(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var index = bytes.startIndex
        // Spaces and (nested, backslash-escaped) comments.
        func skipSpaceAndComments() {
            while index < bytes.endIndex, isCSpace(bytes[index]) || bytes[index] == UInt8(ascii: "(") {
                while index < bytes.endIndex, isCSpace(bytes[index]) { index += 1 }
                guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "(") else { continue }
                var nesting = 1
                index += 1
                while index < bytes.endIndex, nesting > 0 {
                    switch bytes[index] {
                    case UInt8(ascii: "("): nesting += 1
                    case UInt8(ascii: ")"): nesting -= 1
                    case UInt8(ascii: "\\") where index + 1 < bytes.endIndex: index += 1
                    default: break
                    }
                    index += 1
                }
            }
        }
        skipSpaceAndComments()
        guard let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) else { return nil }
        index = open + 1
        skipSpaceAndComments()
        let start = index
        let close = bytes[start...].firstIndex(of: UInt8(ascii: ">"))
        // notmuch steps back from the `>` and then wants more than the first character:
        // an id of one character between `<` and `>` gives none.
        let end = close ?? bytes.endIndex
        guard close == nil ? end > start : end - start >= 2 else { return nil }
        return bytes[start..<end].filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
    }

    /// One line: add `tags`, remove every other tag of `managed`, for `id:"<messageID>"`.
    public static func line(messageID: String, tags: Set<String>, managed: Set<String>) -> String {
        var parts: [String] = []
        for tag in tags.sorted() where !tag.isEmpty { parts.append("+" + encode(tag)) }
        for tag in managed.subtracting(tags).sorted() where !tag.isEmpty { parts.append("-" + encode(tag)) }
        let quoted = "\"" + messageID.replacing("\"", with: "\"\"") + "\""
        return (parts + ["--", "id:" + quoted]).joined(separator: " ") + "\n"
    }
}

extension String {
    var replacingCommas: String { String(map { $0 == "," ? " " : $0 }) }

    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text = text.dropFirst() }
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }

}

