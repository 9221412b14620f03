/*!
 A search as the command line gives it (`hd-ls`, `hd-search`, the rules, `hd-mcp`'s
 search tool): operands into a query (exit 65 with the column on a parse error), the
 search options with the user's time zone, `--before` and `--limit`.
 */
import HudsonOutput
import HudsonQuery
import HudsonStore

public enum SearchInput {
    /// The operands joined by spaces, parsed. A QueryError keeps its column in the
    /// joined text, which is what the user typed.
    public static func query(_ operands: [String]) throws -> Query {
        try Query.parse(operands.joined(separator: " "))
    }

    public static func options(accountID: Int64?, sort: SearchOptions.Sort = .newest) -> SearchOptions {
        SearchOptions(
            accountID: accountID, sort: sort, now: LocalTime.nowMilliseconds,
            startOfDay: { LocalTime.startOfDay(year: $0, month: $1, day: $2) })
    }

    /// `--before REF`.
    public static func reference(_ text: String?) throws -> Reference? {
        guard let text else { return nil }
        guard let reference = Reference(parsing: text) else { throw UsageError("--before: \(TerminalSafety.quoted(text)): not a reference") }
        return reference
    }

    /// `--limit N`, where 0 means no limit.
    public static func limit(_ invocation: Invocation) throws -> Int {
        let value = try invocation.arguments.int("limit", range: 0...Int.max) ?? 0
        return value == 0 ? Int.max : value
    }
}
