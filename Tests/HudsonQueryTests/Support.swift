/*!
 Shorthands shared by the HudsonQuery tests: parse to a tree or to an error, and build
 expected trees without the `.term(...)` noise, so each test reads like the rule it proves.
 */

import HudsonQuery

/// The tree `text` parses to, as written (not simplified).
func tree(_ text: String) throws -> QueryNode {
    try Query.parse(text).root
}

/// The error `text` fails with, or nil when it parses.
func parseError(_ text: String) -> QueryError? {
    do {
        _ = try Query.parse(text)
        return nil
    } catch {
        return error
    }
}

/// A bare full-text word.
func word(_ text: String) -> QueryNode { .term(.text(text)) }

/// A quoted phrase.
func phrase(_ text: String) -> QueryNode { .term(.phrase(text)) }

func node(_ term: Term) -> QueryNode { .term(term) }
