/*!
 The one error a query can fail with: a 1-based column and a short reason. The CLI maps
 it to exit 65 and prints it after the command name, so the message is a fragment
 ("column 7: unclosed parenthesis") and never repeats the user's text: queries name
 people and subjects, and CONTRACT.md keeps private text out of error lines.
 */

/// A query that does not parse.
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// 1-based position of the offending spot, counted in `Character`s (extended
    /// grapheme clusters), which is what a terminal shows as one column for most text.
    /// A column one past the last character means "at the end of the query".
    public var column: Int
    /// What is wrong, in a few words, without the query's own text.
    public var message: String

    public init(column: Int, message: String) {
        self.column = column
        self.message = message
    }

    public var description: String { "column \(column): \(message)" }
}
