/*!
 The value forms of gmail-api.md §6 read into typed values: dates in their three forms
 plus epoch seconds with calendar checks, relative ages, byte sizes (K and M are 1024
 based), and label names with Gmail's separator folding.
 */

import HudsonQuery
import Testing

@Suite("Values")
struct ValueTests {
    private func date(_ value: String) throws -> DateValue? {
        guard case .term(.after(let date)) = try tree("after:\(value)") else { return nil }
        return date
    }

    private func size(_ value: String) throws -> Int64? {
        guard case .term(.larger(let bytes)) = try tree("larger:\(value)") else { return nil }
        return bytes
    }

    private func age(_ value: String) throws -> RelativeAge? {
        guard case .term(.olderThan(let age)) = try tree("older_than:\(value)") else { return nil }
        return age
    }

    // MARK: Dates

    @Test("Dates read as YYYY/MM/DD, YYYY-MM-DD and MM/DD/YYYY", arguments: [
        "2024/03/09", "2024-03-09", "03/09/2024", "2024/3/9", "3/9/2024",
    ])
    func dateForms(_ value: String) throws {
        #expect(try date(value) == .day(year: 2024, month: 3, day: 9))
    }

    @Test("All digits are epoch seconds")
    func epochSeconds() throws {
        #expect(try date("1733011200") == .epochSeconds(1_733_011_200))
        #expect(try date("0") == .epochSeconds(0))
        #expect(try date("20240309") == .epochSeconds(20_240_309))
        // The bound, 100,000 years of seconds, as for ages (issue 37: past Int64 milliseconds the search crashed).
        #expect(try date("3162240000000") == .epochSeconds(3_162_240_000_000))
    }

    @Test("February 29 exists only in leap years")
    func leapYears() throws {
        #expect(try date("2024/02/29") == .day(year: 2024, month: 2, day: 29))
        #expect(try date("2000/02/29") == .day(year: 2000, month: 2, day: 29))
        #expect(parseError("after:2023/02/29")?.message == "no such date")
        #expect(parseError("after:1900/02/29")?.message == "no such date")
    }

    @Test("Months and days are checked against the calendar", arguments: [
        "2024/13/01", "2024/00/10", "2024/01/00", "2024/04/31", "2024/06/31", "2024/01/32", "0000/01/01",
    ])
    func calendarChecked(_ value: String) {
        #expect(parseError("after:\(value)") == QueryError(column: 7, message: "no such date"))
    }

    @Test("The last day of every month is accepted")
    func lastDays() throws {
        let last = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for (index, day) in last.enumerated() {
            #expect(try date("2023/\(index + 1)/\(day)") == .day(year: 2023, month: index + 1, day: day))
        }
    }

    @Test("Other date shapes are refused with the forms to use", arguments: [
        "yesterday", "2024/12", "2024/12/01/02", "12-01-2024", "2024/12-01", "24/12/01",
        "2024/123/1", "2024/1/123", "2024//01", "2024/01/01T00:00:00Z", "+5", "-5", "2024.01.01", "１２３",
    ])
    func badDateShapes(_ value: String) {
        let expected = "invalid date; use YYYY/MM/DD, YYYY-MM-DD, MM/DD/YYYY or epoch seconds"
        #expect(parseError("before:\(value)") == QueryError(column: 8, message: expected))
    }

    @Test("Epoch seconds beyond Int64 are out of range")
    func epochOverflow() {
        #expect(parseError("after:9223372036854775808") == QueryError(column: 7, message: "date out of range"))
        #expect(parseError("after:9223372036854775807") == QueryError(column: 7, message: "date out of range"))
        #expect(parseError("before:3162240000001") == QueryError(column: 8, message: "date out of range"))
    }

    // MARK: Relative ages

    @Test("Relative ages take d, m or y in either case", arguments: [
        ("2d", RelativeAge(amount: 2, unit: .day)),
        ("6m", RelativeAge(amount: 6, unit: .month)),
        ("1y", RelativeAge(amount: 1, unit: .year)),
        ("3D", RelativeAge(amount: 3, unit: .day)),
        ("0d", RelativeAge(amount: 0, unit: .day)),
        ("007d", RelativeAge(amount: 7, unit: .day)),
        ("100000y", RelativeAge(amount: 100_000, unit: .year)),
    ])
    func relativeAges(_ value: String, _ expected: RelativeAge) throws {
        #expect(try age(value) == expected)
        #expect(try tree("newer_than:\(value)") == node(.newerThan(expected)))
    }

    @Test("Weeks, hours and other shapes are not ages", arguments: ["2w", "1h", "d", "2", "-2d", "1.5d", "d2", "2dd"])
    func badAges(_ value: String) {
        let expected = "invalid age; use a number and d, m or y, as in 7d"
        #expect(parseError("older_than:\(value)") == QueryError(column: 12, message: expected))
    }

    @Test("Ages above 100000 are refused so date arithmetic cannot overflow")
    func ageLimit() {
        let expected = QueryError(column: 12, message: "age too large; at most 100000")
        #expect(parseError("newer_than:100001d") == expected)
        #expect(parseError("newer_than:99999999999999999999999y") == expected)
    }

    // MARK: Sizes

    @Test("Sizes are bytes, or KiB and MiB with K and M in either case", arguments: [
        ("1000", 1000), ("0", 0), ("5K", 5120), ("5k", 5120), ("10M", 10_485_760), ("10m", 10_485_760),
        ("9223372036854775807", Int64.max), ("8796093022207M", 8_796_093_022_207 * 1_048_576),
    ] as [(String, Int64)])
    func sizes(_ value: String, _ bytes: Int64) throws {
        #expect(try size(value) == bytes)
        #expect(try tree("smaller:\(value)") == node(.smaller(bytes)))
    }

    @Test("Other size shapes are refused", arguments: ["10G", "M", "1.5M", "-1", "10MB", "10K5", "ten", "K5"])
    func badSizes(_ value: String) {
        let expected = "invalid size; use bytes or a number with K or M, as in 10M"
        #expect(parseError("larger:\(value)") == QueryError(column: 8, message: expected))
    }

    @Test("Sizes that overflow Int64 are refused")
    func sizeOverflow() {
        let expected = QueryError(column: 8, message: "size too large")
        #expect(parseError("larger:9223372036854775808") == expected)
        #expect(parseError("larger:8796093022208M") == expected)
        #expect(parseError("larger:9007199254740992K") == expected)
    }

    // MARK: Labels

    @Test("A label keeps its raw name and a folded name", arguments: [
        ("Travel/2026", "travel-2026"), ("travel 2026", "travel-2026"), ("travel-2026", "travel-2026"),
        ("TRAVEL_2026", "travel-2026"), ("a / b", "a-b"), ("a--b", "a-b"), ("Ünïcode", "ünïcode"), ("-x-", "-x-"),
    ])
    func labelNormalisation(_ raw: String, _ normalized: String) {
        let name = LabelName(raw)
        #expect(name.raw == raw)
        #expect(name.normalized == normalized)
        #expect(LabelName.normalize(raw) == normalized)
    }

    @Test("Gmail's hyphenated label form and the real name fold alike")
    func labelSpellingsMeet() throws {
        guard case .term(.label(let typed)) = try tree("label:travel-2026"),
              case .term(.label(let quoted)) = try tree(#"label:"Travel/2026""#)
        else {
            Issue.record("not labels")
            return
        }
        #expect(typed.raw == "travel-2026")
        #expect(quoted.raw == "Travel/2026")
        #expect(typed.normalized == quoted.normalized)
    }
}
