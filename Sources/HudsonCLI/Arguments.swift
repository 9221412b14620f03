import Glibc
import HudsonOutput
/*!
 The argument parser, driven by a `CommandSpec`. GNU and BSD conventions: `--opt=value`
 and `--opt value`, `-o value` and `-ovalue`, combined short flags (`-0n`), `--` ends
 options, options and operands in any order. Errors are `UsageError`s, which `Main`
 prints with the usage line and exit 64.
 */

public struct UsageError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public struct ParsedArguments: Sendable {
    /// The subcommand chain, e.g. ["login"] for `hd-auth login`.
    public var subcommandPath: [String] = []
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var operands: [String] = []
    /// The options the user typed (not filled in from defaults).
    public var given: Set<String> = []

    public func flag(_ long: String) -> Bool { flags.contains(long) }

    /// Whether the user typed the option (rather than it taking its default).
    public func isGiven(_ long: String) -> Bool { given.contains(long) }

    /// The last value given for an option (later ones override earlier ones), or its default.
    public func string(_ long: String) -> String? { values[long]?.last }

    public func strings(_ long: String) -> [String] { values[long] ?? [] }

    /// An integer option; a non-integer value is a usage error.
    public func int(_ long: String, range: ClosedRange<Int> = Int.min...Int.max) throws -> Int? {
        guard let text = string(long) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            // Digits past Int's range are a number out of range too, not "not a number".
            let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
            if Int(text) != nil || (!digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }) {
                throw UsageError("--\(long): \(TerminalSafety.quoted(text)) is out of range (\(range.lowerBound)–\(range.upperBound))")
            }
            throw UsageError("--\(long): \(TerminalSafety.quoted(text)): not a whole number")
        }
        return value
    }
}

public enum ArgumentParser {
    /// The arguments as the kernel passed them (`argv[1...]`), each refused unless it is
    /// UTF-8. Swift's `CommandLine.arguments` repairs invalid bytes to U+FFFD, so
    /// `--db $'x\xff'` or `--save-attachments $'d\xff'` would create another file than
    /// the one named, and a query or reference would be looked up as text the user never
    /// typed. Everything Hudson takes as an argument (paths, queries, references, labels,
    /// addresses) is text, and Gmail's is UTF-8.
    public static func commandLine(_ argv: [[UInt8]]) throws -> [String] {
        try argv.enumerated().map { index, bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw UsageError("argument \(index + 1), \(TerminalSafety.quoted(bytes: bytes)): not valid UTF-8")
            }
            return text
        }
    }

    /// `argv[1...]` of this process, as bytes.
    public static var processArguments: [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return argument.withMemoryRebound(to: UInt8.self, capacity: strlen(argument)) {
                Array(UnsafeBufferPointer(start: $0, count: strlen(argument)))
            }
        }
    }

    /// Parses `arguments` (without the program name) against `spec`, descending into
    /// subcommands. Returns the parsed values and the spec of the selected command.
    public static func parse(_ arguments: [String], spec: CommandSpec) throws -> (ParsedArguments, CommandSpec) {
        var parsed = ParsedArguments()
        var current = spec
        var options = current.allOptions
        var index = 0
        var onlyOperands = false

        func option(long: String) -> OptionSpec? { options.first { $0.long == long } }
        func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }

        func record(_ option: OptionSpec, value: String?) throws {
            parsed.given.insert(option.long)
            if option.isFlag {
                parsed.flags.insert(option.long)
                return
            }
            guard let value else { throw UsageError("--\(option.long) needs a value (\(option.valueName ?? "VALUE"))") }
            if case .choice(let choices) = option.kind, !choices.contains(value) {
                throw UsageError("--\(option.long): \(TerminalSafety.quoted(value)): expected one of \(choices.joined(separator: ", "))")
            }
            if option.repeatable {
                parsed.values[option.long, default: []].append(value)
            } else {
                parsed.values[option.long] = [value]
            }
        }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyOperands || argument == "-" || !argument.hasPrefix("-") {
                if !onlyOperands, parsed.operands.isEmpty, !current.subcommands.isEmpty {
                    guard let sub = current.subcommand(named: argument) else {
                        throw UsageError("\(TerminalSafety.quoted(argument)): unknown command (expected \(current.subcommands.map(\.name).joined(separator: ", ")))")
                    }
                    parsed.subcommandPath.append(argument)
                    current = sub
                    options = current.allOptions
                    continue
                }
                parsed.operands.append(argument)
                continue
            }
            if argument == "--" {
                onlyOperands = true
                continue
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: String
                var inlineValue: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
                guard let spec = option(long: name) else {
                    throw UsageError("--\(TerminalSafety.quoted(name)): unknown option")
                }
                if spec.isFlag {
                    if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                    try record(spec, value: nil)
                } else {
                    if inlineValue == nil {
                        guard index < arguments.count else { throw UsageError("--\(name) needs a value (\(spec.valueName ?? "VALUE"))") }
                        inlineValue = arguments[index]
                        index += 1
                    }
                    try record(spec, value: inlineValue)
                }
                continue
            }
            // A single dash: a cluster of short options, or (where allowed) an operand.
            let cluster = Array(argument.dropFirst())
            if current.dashOperands && !isOptionCluster(cluster, option: option(short:)) {
                // `-from:bob`, `-Work`, `-notes`: a negated query term or a -LABEL action.
                parsed.operands.append(argument)
                continue
            }
            var position = 0
            while position < cluster.count {
                let character = cluster[position]
                position += 1
                guard let spec = option(short: character) else {
                    throw UsageError("-\(TerminalSafety.quoted(String(character))): unknown option")
                }
                if spec.isFlag {
                    try record(spec, value: nil)
                    continue
                }
                // The rest of the cluster is the value (`-n5`), else the next argument.
                let value: String
                if position < cluster.count {
                    value = String(cluster[position...])
                    position = cluster.count
                } else {
                    guard index < arguments.count else { throw UsageError("-\(character) needs a value (\(spec.valueName ?? "VALUE"))") }
                    value = arguments[index]
                    index += 1
                }
                try record(spec, value: value)
            }
        }
        for option in current.allOptions where parsed.values[option.long] == nil {
            if let value = option.defaultValue { parsed.values[option.long] = [value] }
        }
        if parsed.flag("help") || parsed.flag("version") || parsed.flag("declaration") || parsed.values["generate-completion"] != nil {
            return (parsed, current)
        }
        if !current.subcommands.isEmpty && !current.subcommandOptional {
            throw UsageError("a command is needed (\(current.subcommands.map(\.name).joined(separator: ", ")))")
        }
        try checkOperands(parsed.operands, spec: current)
        return (parsed, current)
    }

    /// Whether `-<cluster>` reads as short options: each character a declared short
    /// option up to the first one that takes a value (the rest is its value), and no ':'
    /// (which only query terms have). Where operands may start with '-', anything else is
    /// an operand: `-notes` is the label "notes", not `-n -o -t ...`.
    static func isOptionCluster(_ cluster: [Character], option: (Character) -> OptionSpec?) -> Bool {
        guard !cluster.isEmpty, !cluster.contains(":") else { return false }
        for character in cluster {
            guard let spec = option(character) else { return false }
            if !spec.isFlag { return true }
        }
        return true
    }

    static func checkOperands(_ operands: [String], spec: CommandSpec) throws {
        var minimum = 0
        var maximum: Int? = 0
        for operand in spec.operands {
            switch operand.arity {
            case .one:
                minimum += 1
                maximum = maximum.map { $0 + 1 }
            case .optional:
                maximum = maximum.map { $0 + 1 }
            case .many:
                maximum = nil
            case .oneOrMore:
                minimum += 1
                maximum = nil
            }
        }
        if operands.count < minimum {
            let missing = spec.operands.filter { $0.arity == .one || $0.arity == .oneOrMore }
                .dropFirst(operands.count).first?.name ?? "operand"
            throw UsageError("missing \(missing)")
        }
        if let maximum, operands.count > maximum {
            throw UsageError("\(TerminalSafety.quoted(operands[maximum])): unexpected operand")
        }
    }
}
