/*!
 The file `hd-send --edit` opens in the user's editor: a few header lines (To, Cc, Bcc,
 Subject), an empty line, then the body, as mutt and git send-email show a message to
 edit. What the user saves is read back the same way; a file left empty, or saved
 unchanged, means "do not send".
 */

/// The parts of a message the user edits.
public struct EditableMessage: Sendable, Equatable {
    public var to: String
    public var cc: String
    public var bcc: String
    public var subject: String
    public var body: String

    public init(to: String = "", cc: String = "", bcc: String = "", subject: String = "", body: String = "") {
        self.to = to
        self.cc = cc
        self.bcc = bcc
        self.subject = subject
        self.body = body
    }
}

/// Why an edited file cannot be used.
public enum EditTemplateError: Error, Equatable, CustomStringConvertible {
    case unknownHeader(String)
    case notAHeader(line: Int)
    /// A CR not followed by LF in a header line as saved.
    case bareCR(line: Int)

    public var description: String {
        switch self {
        case .unknownHeader(let name): return "the header \(name) cannot be edited here (To, Cc, Bcc and Subject can)"
        case .notAHeader(let line): return "line \(line) is not a header: leave an empty line between the headers and the body"
        case .bareCR(let line): return "line \(line) holds a CR not followed by LF, which would start a header of its own"
        }
    }
}

public enum EditTemplate {
    static let names = ["To", "Cc", "Bcc", "Subject"]

    /// The file the editor opens.
    public static func render(_ message: EditableMessage) -> String {
        "To: \(message.to)\nCc: \(message.cc)\nBcc: \(message.bcc)\nSubject: \(message.subject)\n\n"
            + message.body.replacingLineEnds()
    }

    /// What the user saved; nil when the file is empty (only blanks) or unchanged from
    /// `template`: the user cancelled.
    public static func parse(_ saved: String, template: String) throws -> EditableMessage? {
        try checkHeaderLineEnds(saved)
        let text = saved.replacingLineEnds()
        if text.trimmingWhitespace().isEmpty || text == template.replacingLineEnds() { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var fields: [String: String] = [:]
        var last: String?
        var number = 0
        while !lines.isEmpty {
            let line = lines.removeFirst()
            number += 1
            if line.isEmpty { break }
            if let first = line.first, first == " " || first == "\t", let name = last {
                fields[name, default: ""] += " " + line.trimmingWhitespace()
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw EditTemplateError.notAHeader(line: number) }
            let name = String(line[..<colon]).trimmingWhitespace()
            guard let known = names.first(where: { $0.lowercased() == name.lowercased() }) else {
                throw EditTemplateError.unknownHeader(name)
            }
            fields[known] = String(line[line.index(after: colon)...]).trimmingWhitespace()
            last = known
        }
        return EditableMessage(to: fields["To"] ?? "", cc: fields["Cc"] ?? "", bcc: fields["Bcc"] ?? "",
                               subject: fields["Subject"] ?? "", body: lines.joined(separator: "\n"))
    }

    /// The header lines as saved, before line ends are made one: a CR not followed by LF
    /// would become a line break, so `Subject: hi␍Bcc: eve@…` added a Bcc the editor showed
    /// inside the Subject line (as RawMessage refuses for `hd-send -t`).
    static func checkHeaderLineEnds(_ saved: String) throws(EditTemplateError) {
        var number = 0
        for var line in saved.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            if line.last == "\r" { line = line.dropLast() }
            if line.isEmpty { return }
            if line.contains("\r") { throw .bareCR(line: number) }
        }
    }
}
