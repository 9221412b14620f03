/*!
 The typed values operators carry, and the rules that read them from query text:
 label names with Gmail's separator folding, the closed keyword sets of `in:`, `is:`,
 `has:` and `category:`, calendar dates without time zones, relative ages and byte
 sizes. Every reader here is pure and linear in its input; a value that does not read
 throws a `ValueError`, which the parser turns into a `QueryError` at the value's column.
 */

/// A `label:` value as typed, plus the form Gmail compares label names by.
public struct LabelName: Hashable, Sendable {
    /// The value after unquoting, e.g. `Travel/2026`, `travel-2026`, `My Label`.
    public var raw: String
    /// `raw` folded by `LabelName.normalize`, e.g. `travel-2026` for all three spellings
    /// `Travel/2026`, `travel 2026` and `travel-2026`.
    public var normalized: String

    public init(_ raw: String) {
        self.raw = raw
        self.normalized = LabelName.normalize(raw)
    }

    /// Folds a label name the way Gmail matches `label:` values: case-insensitively,
    /// with spaces and `/` written as `-` (gmail-api.md §6: "spaces and `/` in names become
    /// `-`"). `_` folds too, because users type it for the same purpose. A run of
    /// separators becomes one `-`, so `a / b` and `a-b` meet. The translator must fold
    /// stored label names with this same function (one place for the rule).
    public static func normalize(_ name: String) -> String {
        var result = ""
        var previousWasSeparator = false
        for character in name.lowercased() {
            if character == "-" || character == "/" || character == " " || character == "_" {
                if !previousWasSeparator { result.append("-") }
                previousWasSeparator = true
            } else {
                result.append(character)
                previousWasSeparator = false
            }
        }
        return result
    }
}

extension Term {
    /// `in:` values (gmail-api.md §6). Matched case-insensitively.
    public enum Location: String, CaseIterable, Sendable {
        case inbox, sent, trash, spam, anywhere, drafts, starred, important, chats, snoozed
    }

    /// `is:` values (gmail-api.md §6, plus `snoozed`). Matched case-insensitively.
    public enum Flag: String, CaseIterable, Sendable {
        case unread, read, starred, important, muted, snoozed
        /// Hudson's own (issue 41): the thread's newest message is the account's, unanswered.
        case awaitingReply = "awaiting-reply"
    }

    /// `has:` values. `drive` is listed in gmail-api.md §6; the store may not be able
    /// to answer it, but rejecting it would be a syntax error Gmail does not make.
    public enum HasKind: String, CaseIterable, Sendable {
        case attachment, drive
        case userLabels = "userlabels"
        case noUserLabels = "nouserlabels"
    }

    /// `category:` values (gmail-api.md §6). Matched case-insensitively.
    public enum Category: String, CaseIterable, Sendable {
        case primary, social, promotions, updates, forums, reservations, purchases
    }
}

/// An `after:`/`before:` value. Deliberately zone-free: Gmail reads a calendar day as
/// midnight in *its* zone (gmail-api.md §6), Hudson's translator reads it in the user's.
public enum DateValue: Equatable, Sendable {
    /// A calendar day, already checked to exist (month 1–12, day within the month).
    case day(year: Int, month: Int, day: Int)
    /// An instant, as Gmail's all-digits form: seconds since 1970-01-01T00:00:00Z.
    case epochSeconds(Int64)
}

/// An `older_than:`/`newer_than:` value such as `2d`, `6m`, `1y`.
public struct RelativeAge: Equatable, Sendable {
    /// Units Gmail documents for these operators (gmail-api.md §6: "units `d`, `m`
    /// (month), `y`"). Weeks are not among them, so `2w` is an error rather than a guess.
    public enum Unit: String, CaseIterable, Sendable {
        case day = "d", month = "m", year = "y"
    }

    /// At most `RelativeAge.maximumAmount`, so date arithmetic downstream cannot overflow.
    public var amount: Int
    public var unit: Unit

    public init(amount: Int, unit: Unit) {
        self.amount = amount
        self.unit = unit
    }

    /// 100 000 years is about 3.2e15 seconds: beyond any mailbox, and safely inside Int64.
    public static let maximumAmount = 100_000
}

/// Why a value did not read; the parser adds the column.
struct ValueError: Error {
    let message: String
}

/// Readers for operator values. Input is the value text after unquoting.
enum ValueReader {
    static func keyword<K: RawRepresentable & CaseIterable>(
        _ text: String, as type: K.Type, operator name: String
    ) throws(ValueError) -> K where K.RawValue == String {
        if let value = K(rawValue: text.lowercased()) { return value }
        let choices = K.allCases.map(\.rawValue).joined(separator: ", ")
        throw ValueError(message: "unknown \(name): value; expected one of \(choices)")
    }

    /// 100 000 years of seconds, as for ages: beyond any mailbox, and ×1000 inside Int64.
    static let maximumEpochSeconds = Int64(RelativeAge.maximumAmount) * 366 * 86_400

    private static let dateHelp = "invalid date; use YYYY/MM/DD, YYYY-MM-DD, MM/DD/YYYY or epoch seconds"

    /// `YYYY/MM/DD`, `YYYY-MM-DD`, `MM/DD/YYYY` (month and day may have one digit), or
    /// all digits for epoch seconds (gmail-api.md §6: `after:2024/12/01`, `after:1733011200`).
    static func date(_ text: String) throws(ValueError) -> DateValue {
        let bytes = Array(text.utf8)
        if !bytes.isEmpty, bytes.allSatisfy(isDigit) {
            // Bounded as ages are (RelativeAge.maximumAmount): the search turns seconds into
            // milliseconds, which overflowed Int64 past 9.2e15 s and crashed the command.
            guard let seconds = Int64(text), seconds <= maximumEpochSeconds else { throw ValueError(message: "date out of range") }
            return .epochSeconds(seconds)
        }
        guard let separator = bytes.first(where: { !isDigit($0) }),
              separator == UInt8(ascii: "/") || separator == UInt8(ascii: "-")
        else { throw ValueError(message: dateHelp) }
        let parts = bytes.split(separator: separator, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isDigit) })
        else { throw ValueError(message: dateHelp) }
        let year: ArraySlice<UInt8>, month: ArraySlice<UInt8>, day: ArraySlice<UInt8>
        if parts[0].count == 4 {
            (year, month, day) = (parts[0], parts[1], parts[2])
        } else if parts[2].count == 4 && separator == UInt8(ascii: "/") {
            (month, day, year) = (parts[0], parts[1], parts[2])
        } else {
            throw ValueError(message: dateHelp)
        }
        guard month.count <= 2, day.count <= 2 else { throw ValueError(message: dateHelp) }
        let y = number(year), m = number(month), d = number(day)
        guard y >= 1, (1...12).contains(m), d >= 1, d <= daysIn(month: m, year: y) else {
            throw ValueError(message: "no such date")
        }
        return .day(year: y, month: m, day: d)
    }

    /// `<n>d`, `<n>m` or `<n>y`, unit case-insensitive.
    static func relativeAge(_ text: String) throws(ValueError) -> RelativeAge {
        let help = "invalid age; use a number and d, m or y, as in 7d"
        var bytes = Array(text.utf8)
        // `| 0x20` lower-cases an ASCII letter and maps no other byte onto d, m or y.
        guard let last = bytes.popLast(), !bytes.isEmpty, bytes.allSatisfy(isDigit),
              let unit = RelativeAge.Unit(rawValue: String(decoding: [last | 0x20], as: UTF8.self))
        else { throw ValueError(message: help) }
        let digits = bytes.drop(while: { $0 == UInt8(ascii: "0") })
        guard digits.count <= 6, number(digits) <= RelativeAge.maximumAmount else {
            throw ValueError(message: "age too large; at most \(RelativeAge.maximumAmount)")
        }
        return RelativeAge(amount: number(digits), unit: unit)
    }

    /// Bytes, or with a `K`/`M` suffix in either case (gmail-api.md §6: `larger:10M`).
    /// Gmail does not say whether K is 1000 or 1024; Hudson uses 1024 (K = KiB,
    /// M = MiB), the meaning mail clients show sizes in.
    static func size(_ text: String) throws(ValueError) -> Int64 {
        let help = "invalid size; use bytes or a number with K or M, as in 10M"
        var bytes = Array(text.utf8)
        var multiplier: Int64 = 1
        switch bytes.last.map({ $0 | 0x20 }) {
        case UInt8(ascii: "k"): multiplier = 1024; bytes.removeLast()
        case UInt8(ascii: "m"): multiplier = 1024 * 1024; bytes.removeLast()
        default: break
        }
        guard !bytes.isEmpty, bytes.allSatisfy(isDigit) else { throw ValueError(message: help) }
        guard let count = Int64(String(decoding: bytes, as: UTF8.self)) else {
            throw ValueError(message: "size too large")
        }
        let (total, overflow) = count.multipliedReportingOverflow(by: multiplier)
        if overflow { throw ValueError(message: "size too large") }
        return total
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Callers pass at most six digits, so this cannot overflow.
    private static func number<C: Collection<UInt8>>(_ digits: C) -> Int {
        digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }
}
