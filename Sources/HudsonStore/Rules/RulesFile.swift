/*!
 The rules file (hd-filters(1), RULES FILE): one rule a line,

     [NAME] QUERY => ACTION...

 where NAME is optional, QUERY is Gmail's query language (hudson-query(7), parsed by
 the one parser) and each ACTION is an hd-mark action (archive, read, star, trash, spam,
 important and their opposites, +LABEL, -LABEL; a label with spaces is quoted:
 +"Travel 2026"). A line whose first non-blank character is `#`, or a blank line, is
 skipped. Any error stops the load with its line and column: a rule is never skipped.
 */
import HudsonText
import HudsonQuery

/// One rule: the messages a query selects, and the hd-mark actions to take on each.
public struct MailRule: Equatable, Sendable {
    /// The rule's name: the one given, else `line N` (or a Gmail filter's id).
    public var name: String
    /// The query as written (what hd-search takes).
    public var queryText: String
    public var query: Query
    public var actions: [TriageAction]
    /// Where it was written, for messages: a line of the rules file; 0 when not from one.
    public var line: Int
    /// The column of each action on that line (empty when not from a file).
    public var actionColumns: [Int]

    public init(name: String, queryText: String, query: Query, actions: [TriageAction], line: Int = 0,
                actionColumns: [Int] = []) {
        self.name = name
        self.queryText = queryText
        self.query = query
        self.actions = actions
        self.line = line
        self.actionColumns = actionColumns
    }
}

/// A rules file that does not load: where, and what is wrong.
public struct RulesFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    /// 1-based, in characters.
    public var column: Int
    public var message: String

    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

public enum RulesFile {
    /// Every rule of `text`, in order; the first error throws.
    public static func parse(_ text: String) throws(RulesFileError) -> [MailRule] {
        var rules: [MailRule] = []
        var names = Set<String>()
        var lineNumber = 0
        // "\r\n" is one Character: a file with CRLF line ends splits on it as on "\n".
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Array(rawLine)
            if line.last == "\r" { line.removeLast() }
            guard let first = line.firstIndex(where: { !$0.isWhitespace }), line[first] != "#" else { continue }
            // What a terminal would act on, or shows as something else (TerminalSafety): a
            // rule is shown by `rules check` and named in messages as written.
            if let control = line.firstIndex(where: { $0 != "\t" && $0.unicodeScalars.contains(where: TerminalSafety.isUnsafe) }) {
                throw RulesFileError(line: lineNumber, column: control + 1,
                                     message: "a control character or bidirectional mark (\(TerminalSafety.quoted(String(line[control]))))")
            }
            var start = first
            var name = "line \(lineNumber)"
            if line[first] == "[" {
                guard let close = line[first...].firstIndex(of: "]") else {
                    throw RulesFileError(line: lineNumber, column: first + 1, message: "unclosed [ of a rule name")
                }
                let given = String(line[(first + 1)..<close]).trimmingSpaces()
                guard !given.isEmpty else {
                    throw RulesFileError(line: lineNumber, column: first + 1, message: "an empty rule name")
                }
                guard names.insert(given.lowercased()).inserted else {
                    throw RulesFileError(line: lineNumber, column: first + 2, message: "a second rule named \(given)")
                }
                name = given
                start = close + 1
            }
            guard let arrow = separator(in: line, from: start) else {
                throw RulesFileError(line: lineNumber, column: line.count + 1,
                                     message: "no => between the query and the actions")
            }
            let queryText = String(line[start..<arrow]).trimmingSpaces()
            let queryColumn = (line[start..<arrow].firstIndex(where: { !$0.isWhitespace }) ?? arrow) + 1
            guard !queryText.isEmpty else {
                throw RulesFileError(line: lineNumber, column: queryColumn, message: "no query before =>")
            }
            let query: Query
            do {
                query = try Query.parse(queryText)
            } catch {
                throw RulesFileError(line: lineNumber, column: queryColumn + error.column - 1, message: error.message)
            }
            let actions = try Self.actions(line, from: arrow + 2, lineNumber: lineNumber)
            rules.append(MailRule(name: name, queryText: queryText, query: query, actions: actions.map(\.action),
                                  line: lineNumber, actionColumns: actions.map(\.column)))
        }
        return rules
    }

    /// The index of the first `=>` outside a quoted phrase.
    private static func separator(in line: [Character], from start: Int) -> Int? {
        var quoted = false
        var index = start
        while index < line.count {
            if line[index] == "\"" {
                quoted.toggle()
            } else if !quoted, line[index] == "=", index + 1 < line.count, line[index + 1] == ">" {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The actions after `=>`: words separated by blanks; `"` quotes a label with spaces.
    private static func actions(
        _ line: [Character], from start: Int, lineNumber: Int
    ) throws(RulesFileError) -> [(action: TriageAction, column: Int)] {
        var actions: [(action: TriageAction, column: Int)] = []
        var index = start
        while index < line.count {
            if line[index].isWhitespace { index += 1; continue }
            let column = index + 1
            var word = ""
            var quoted = false
            while index < line.count, quoted || !line[index].isWhitespace {
                if line[index] == "\"" { quoted.toggle() } else { word.append(line[index]) }
                index += 1
            }
            if quoted { throw RulesFileError(line: lineNumber, column: column, message: "unclosed quote") }
            guard let action = TriageAction(parsing: word) else {
                throw RulesFileError(line: lineNumber, column: column,
                                     message: "not an action (\(TriageAction.names.joined(separator: ", ")), +LABEL, -LABEL)")
            }
            // The one rule of what a label name may hold (LabelNameRule).
            if let name = action.labelName, let problem = LabelNameRule.problem(name) {
                throw RulesFileError(line: lineNumber, column: column, message: "\(TerminalSafety.quoted(name)): \(problem)")
            }
            actions.append((action, column))
        }
        guard !actions.isEmpty else {
            throw RulesFileError(line: lineNumber, column: line.count + 1, message: "no action after =>")
        }
        return actions
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
