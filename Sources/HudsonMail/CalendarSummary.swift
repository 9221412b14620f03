/*!
 A one-line summary of an iCalendar object (RFC 5545) for text/calendar parts, such as the
 invitations Google Calendar and Outlook send: what, when, where. Only the first VEVENT is
 read; the part itself is also listed as an attachment so the .ics can be saved.
 */

enum CalendarSummary {
    /// `[Calendar invitation: Team sync, 2024-12-02 13:00 UTC, Room 4]`, or nil when the text
    /// holds no VEVENT with a SUMMARY or DTSTART.
    static func line(for text: String) -> String? {
        var method: String? = nil
        var summary: String? = nil
        var start: String? = nil
        var location: String? = nil
        var inEvent = false
        for line in unfoldedLines(text) {
            let (name, parameters, value) = split(line)
            switch name {
            case "METHOD" where !inEvent: method = value.uppercased()
            case "BEGIN" where value.uppercased() == "VEVENT": inEvent = true
            case "END" where value.uppercased() == "VEVENT" && inEvent:
                return format(method: method, summary: summary, start: start, location: location)
            case "SUMMARY" where inEvent && summary == nil: summary = unescape(value)
            case "LOCATION" where inEvent && location == nil: location = unescape(value)
            case "DTSTART" where inEvent && start == nil: start = formatDate(value, parameters: parameters)
            default: break
            }
        }
        return inEvent ? format(method: method, summary: summary, start: start, location: location) : nil
    }

    private static func format(method: String?, summary: String?, start: String?, location: String?) -> String? {
        guard summary != nil || start != nil else { return nil }
        let kind: String
        switch method {
        case "REQUEST": kind = "Calendar invitation"
        case "CANCEL": kind = "Calendar cancellation"
        case "REPLY": kind = "Calendar reply"
        default: kind = "Calendar event"
        }
        let fields = [summary, start, location].compactMap { $0 }.filter { !$0.isEmpty }
        return "[\(kind): \(fields.joined(separator: ", "))]"
    }

    /// RFC 5545 §3.1: a line starting with a blank continues the previous one.
    private static func unfoldedLines(_ text: String) -> [String] {
        var lines: [String] = []
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            if let first = raw.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1] += raw.dropFirst()
            } else {
                lines.append(String(raw))
            }
        }
        return lines
    }

    /// `NAME;PARAM=x:VALUE` into its upper-cased name, its parameters and its value.
    private static func split(_ line: String) -> (String, String, String) {
        var inQuote = false
        for index in line.indices {
            let character = line[index]
            if character == "\"" { inQuote.toggle() }
            if character == ":" && !inQuote {
                let head = line[..<index]
                let name = head.prefix(while: { $0 != ";" })
                return (name.uppercased(), String(head.dropFirst(name.count)), String(line[line.index(after: index)...]))
            }
        }
        return (line.uppercased(), "", "")
    }

    /// RFC 5545 §3.3.11 TEXT escapes.
    private static func unescape(_ value: String) -> String {
        var output = ""
        var escaped = false
        for character in value {
            if escaped {
                output.append(character == "n" || character == "N" ? " " : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                output.append(character)
            }
        }
        return output.trimmingWhitespace()
    }

    /// `20241202T130000Z` as `2024-12-02 13:00 UTC`; a TZID parameter is named; a DATE value
    /// (`20241202`) has no time. Anything else is shown as written.
    private static func formatDate(_ value: String, parameters: String) -> String {
        let digits = Array(value)
        guard digits.count >= 8, digits[0..<8].allSatisfy(\.isNumber) else { return value }
        var text = "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
        if digits.count >= 13, digits[8] == "T", digits[9..<13].allSatisfy(\.isNumber) {
            text += " \(String(digits[9..<11])):\(String(digits[11..<13]))"
            if digits.last == "Z" {
                text += " UTC"
            } else if let range = parameters.firstRange(of: "TZID=") {
                let zone = parameters[range.upperBound...].prefix(while: { $0 != ";" })
                text += " (\(zone.filter { $0 != "\"" }))"
            }
        }
        return text
    }
}
