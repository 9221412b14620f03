import HudsonCLI
import Testing

@Suite("Argument parsing derived from the declaration")
struct ArgumentParserTests {
    let spec = CommandSpec(
        name: "hd-test", abstract: "A test command.",
        options: [
            .flag("json", help: "JSON."),
            .flag("null", short: "0", help: "NUL."),
            .flag("messages", short: "m", help: "Messages."),
            .value("limit", short: "n", name: "N", kind: .integer, help: "Limit.", default: "50"),
            .value("sort", name: "ORDER", kind: .choice(["newest", "relevance"]), help: "Sort."),
            .value("attach", name: "FILE", kind: .file, help: "Attach.", repeatable: true),
        ],
        operands: [OperandSpec("QUERY", arity: .many, help: "Query.")],
        access: .none, dashOperands: true)

    func parse(_ arguments: String...) throws -> ParsedArguments {
        try ArgumentParser.parse(arguments, spec: spec).0
    }

    @Test("--opt=value and --opt value are the same")
    func longForms() throws {
        #expect(try parse("--limit=5").string("limit") == "5")
        #expect(try parse("--limit", "5").string("limit") == "5")
    }

    @Test("short options take a value attached or separate, and flags combine")
    func shortForms() throws {
        #expect(try parse("-n5").string("limit") == "5")
        #expect(try parse("-n", "5").string("limit") == "5")
        let combined = try parse("-0mn7")
        #expect(combined.flag("null") && combined.flag("messages") && combined.string("limit") == "7")
    }

    @Test("defaults apply when an option is absent; the last value wins otherwise")
    func defaultsAndOverrides() throws {
        #expect(try parse().string("limit") == "50")
        #expect(try parse("-n", "1", "--limit", "2").string("limit") == "2")
    }

    @Test("repeatable options collect every value")
    func repeatable() throws {
        #expect(try parse("--attach", "a", "--attach=b").strings("attach") == ["a", "b"])
    }

    @Test("options and operands mix; -- ends options")
    func operandsAndDoubleDash() throws {
        let parsed = try parse("from:x", "--json", "is:unread", "--", "--limit")
        #expect(parsed.operands == ["from:x", "is:unread", "--limit"])
        #expect(parsed.flag("json"))
    }

    @Test("with dash operands, a single-dash word that is not an option is an operand")
    func dashOperands() throws {
        #expect(try parse("-from:bob", "-Work").operands == ["-from:bob", "-Work"])
        #expect(try parse("-", "x").operands == ["-", "x"])
    }

    @Test("r8_a dash word is options only when every letter is one (up to a value), and never with ':'")
    func dashWordsThatLookLikeOptions() throws {
        // -m is a flag and -o is not an option: the label "moon", negated.
        #expect(try parse("-moon").operands == ["-moon"])
        #expect(try parse("-category:promotions").operands == ["-category:promotions"])
        #expect(try parse("-mn", "3").flag("messages"))
        #expect(try parse("-n3").string("limit") == "3")
        #expect(try parse("-m0").flag("null"))
    }

    @Test("unknown long options, missing values, bad choices and bad integers are usage errors")
    func usageErrors() throws {
        #expect(throws: UsageError("--limt: unknown option")) { try parse("--limt", "5") }
        #expect(throws: UsageError("--limit needs a value (N)")) { try parse("--limit") }
        #expect(throws: UsageError("--json takes no value")) { try parse("--json=yes") }
        #expect(throws: UsageError.self) { try parse("--sort", "oldest") }
        #expect(throws: UsageError("--limit: ten: not a whole number")) { try parse("--limit", "ten").int("limit") }
        // Digits past Int's range: out of range, not "not a number".
        #expect(throws: UsageError("--limit: 99999999999999999999 is out of range (0–10)")) {
            try parse("--limit", "99999999999999999999").int("limit", range: 0...10)
        }
        #expect(throws: UsageError("--limit: -99999999999999999999 is out of range (0–10)")) {
            try parse("--limit", "-99999999999999999999").int("limit", range: 0...10)
        }
        #expect(throws: UsageError("--limit: 1e3: not a whole number")) { try parse("--limit", "1e3").int("limit", range: 0...10) }
    }

    @Test("operand arity is checked")
    func arity() throws {
        let one = CommandSpec(name: "x", abstract: "", operands: [OperandSpec("EMAIL", help: "")], access: .none)
        #expect(throws: UsageError("missing EMAIL")) { try ArgumentParser.parse([], spec: one) }
        #expect(throws: UsageError("b: unexpected operand")) { try ArgumentParser.parse(["a", "b"], spec: one) }
    }

    @Test("subcommands are selected by the first operand and parsed with their own options")
    func subcommands() throws {
        let login = CommandSpec(name: "login", abstract: "Log in.", options: [.flag("no-browser", help: "")], access: .create)
        let auth = CommandSpec(name: "hd-auth", abstract: "Accounts.", subcommands: [login], access: .none)
        let (parsed, selected) = try ArgumentParser.parse(["login", "--no-browser"], spec: auth)
        #expect(parsed.subcommandPath == ["login"] && selected.name == "login" && parsed.flag("no-browser"))
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["logout"], spec: auth) }
        #expect(throws: UsageError.self) { try ArgumentParser.parse([], spec: auth) }
        #expect(try ArgumentParser.parse(["--help"], spec: auth).0.flag("help"))
    }

    @Test("help lists every visible option with its value name and default, and the exit statuses")
    func help() {
        let text = Help.text(spec, programName: "hd-test")
        #expect(text.contains("usage: hd-test [options] [QUERY...]"))
        #expect(text.contains("-n, --limit N"))
        #expect(text.contains("(default: 50)"))
        #expect(text.contains("--db PATH"))
        #expect(text.contains("64  usage error"))
    }
}
