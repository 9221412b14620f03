/*!
 FTS5 MATCH expressions, built by Hudson from the query AST. Every user term becomes a
 double-quoted FTS5 string (inner quotes doubled), so nothing the user typed is FTS5
 syntax (https://sqlite.org/fts5.html#full_text_query_syntax; sqlite-notes.md). Bare
 words match word starts (a prefix query), phrases match exactly; `subject:` and
 `from:`/`to:` names use column filters that Hudson writes.
 */
import HudsonQuery
import HudsonText

enum FullText {
    /// The MATCH expression for a subtree made only of full-text terms, or nil.
    static func expression(_ node: QueryNode) -> String? {
        switch node {
        case .all:
            return nil
        case .term(let term):
            switch term {
            case .text(let word): return quoted(word, prefix: true)
            case .phrase(let phrase): return quoted(phrase, prefix: false)
            case .subject(let value, let isQuoted): return column("subject", phrase: value, prefix: !isQuoted)
            case .from(let value) where isNameOrPart(value):
                return column("sender", phrase: value, prefix: true)
            case .to(let value) where isNameOrPart(value), .cc(let value) where isNameOrPart(value),
                 .bcc(let value) where isNameOrPart(value), .deliveredTo(let value) where isNameOrPart(value):
                // The index has one column for To, Cc and Bcc; whole addresses use the
                // per-role address table instead.
                return column("recipients", phrase: value, prefix: true)
            default: return nil
            }
        case .and(let children):
            // FTS5's NOT is binary ("a NOT b"): positives first, then each negation.
            var positives: [String] = []
            var negatives: [String] = []
            for child in children {
                if case .not(let inner) = child {
                    guard let expression = expression(inner) else { return nil }
                    negatives.append(expression)
                } else {
                    guard let expression = expression(child) else { return nil }
                    positives.append(expression)
                }
            }
            guard !positives.isEmpty else { return nil }
            var result = positives.map { "(\($0))" }.joined(separator: " AND ")
            for negative in negatives { result = "(\(result)) NOT (\(negative))" }
            return result
        case .or(let children):
            var parts: [String] = []
            for child in children {
                guard let expression = expression(child), hasPositive(child) else { return nil }
                parts.append("(\(expression))")
            }
            return parts.joined(separator: " OR ")
        case .not:
            return nil  // a lone negation needs SQL: NOT IN (...)
        }
    }

    /// Whether the subtree matches some documents by itself (FTS5 cannot start with NOT).
    static func hasPositive(_ node: QueryNode) -> Bool {
        switch node {
        case .term: return expression(node) != nil
        case .and(let children): return children.contains { if case .not = $0 { return false }; return hasPositive($0) }
        case .or(let children): return children.allSatisfy(hasPositive)
        case .not, .all: return false
        }
    }

    /// `from:alice` or `from:example.com` (a name or part of an address) is full text;
    /// `from:alice@example.com` and `from:me` are exact address lookups.
    static func isNameOrPart(_ value: String) -> Bool {
        value.lowercased() != "me" && !SearchCompiler.isFullAddress(value) && isIndexable(value)
    }

    /// A bare word with no letter or digit (e.g. "***"): nothing the tokenizer indexes.
    static func isEmptyText(_ node: QueryNode) -> Bool {
        if case .term(.text(let word)) = node { return !isIndexable(word) }
        return false
    }

    static func isIndexable(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                return true
            default:
                return false
            }
        }
    }

    /// `"text"` or `"text" *`, with inner quotes doubled; nil when nothing is indexable.
    /// Words in scripts written without spaces are looked up as the index holds them
    /// (IndexText): as the phrase of their bigrams, and a lone character by its prefix,
    /// which finds it anywhere in a run.
    static func quoted(_ text: String, prefix: Bool) -> String? {
        guard isIndexable(text) else { return nil }
        let segmented = IndexText.forQuery(text)
        let escaped = segmented.unicodeScalars.map { $0 == "\"" ? "\"\"" : String($0) }.joined()
        return "\"\(escaped)\"" + (prefix || IndexText.endsWithLoneCharacter(segmented) ? " *" : "")
    }

    /// A column filter Hudson writes: `{subject} : "text" *`.
    static func column(_ name: String, phrase: String, prefix: Bool) -> String? {
        guard let quoted = quoted(phrase, prefix: prefix) else { return nil }
        return "{\(name)} : \(quoted)"
    }
}
