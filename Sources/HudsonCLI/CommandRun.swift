/*!
 `Main.run`, the wrapper every `hd-*` runs through (swift-argument-parser's `main()` and
 `exit(withError:)`): parse against the declaration, answer `--help` and `--version`,
 run the command, and turn every error into one line on standard error and an exit
 status from the one table. A closed output pipe ends the command quietly with 0.
 */
import Glibc
import HudsonOutput
import HudsonStore

/// The version every command reports.
public let hudsonVersion = "0.1.0"

/// Output options shared by the commands that print records (CONTRACT.md "Output").
public enum OutputOptions {
    public static let all: [OptionSpec] = [
        .flag("json", help: "Print NDJSON records (docs/json.md)."),
        .flag("ids", help: "Print only the ids, one per line."),
        .flag("null", short: "0", help: "With --ids, end each id with a NUL byte instead of a newline."),
    ]
}

public enum Main {
    /// Runs a command and exits. `classifiers` map errors of modules this file does not
    /// link (the network's) to statuses of the same table.
    public static func run(
        _ spec: CommandSpec, classifiers: [ErrorClassifier] = [], _ body: (Invocation) throws -> ExitStatus
    ) -> Never {
        let invocation = prepare(spec, classifiers: classifiers)
        do {
            let status = try body(invocation)
            try invocation.stdout.flush()
            exit(status.rawValue)
        } catch {
            fail(error, invocation: invocation, classifiers: classifiers)
        }
    }

    /// The same, for commands that talk to the network (on the main actor, where their
    /// top-level code ran when each was its own main.swift).
    @MainActor
    public static func run(
        _ spec: CommandSpec, classifiers: [ErrorClassifier] = [], _ body: @MainActor (Invocation) async throws -> ExitStatus
    ) async -> Never {
        let invocation = prepare(spec, classifiers: classifiers)
        do {
            let status = try await body(invocation)
            try invocation.stdout.flush()
            exit(status.rawValue)
        } catch {
            fail(error, invocation: invocation, classifiers: classifiers)
        }
    }

    /// Parses the command line and answers --help and --version; exits on a usage error.
    static func prepare(_ spec: CommandSpec, classifiers: [ErrorClassifier]) -> Invocation {
        signal(SIGPIPE, SIG_IGN)
        var (environment, undecodable) = currentEnvironment()
        let output = OutputStream(fd: 1)
        // Before anything reads the time zone: a TZ naming a pipe or a terminal would hold
        // the first date printed for ever (LocalTime.unreadableZoneFile).
        if let zone = LocalTime.unreadableZoneFile() {
            LocalTime.useUTC()
            environment["TZ"] = LocalTime.utc
            writeError("\(spec.name): TZ: \(TerminalSafety.quoted(bytes: zone.path)): \(zone.kind), not a time zone file; "
                + "times are shown in UTC\n")
        }
        // The checkpoint helper is started with its option and nothing else, ahead of the
        // parsing of operands the command requires (hd-mark's actions).
        if let path = CheckpointHelper.storePath(arguments: Array(CommandLine.arguments.dropFirst()), spec: spec) {
            CheckpointHelper.run(storePath: path)
        }
        do {
            let commandLine = try ArgumentParser.commandLine(ArgumentParser.processArguments)
            let (arguments, selected) = try ArgumentParser.parse(commandLine, spec: spec)
            let programName = ([spec.name] + arguments.subcommandPath).joined(separator: " ")
            if arguments.flag("help") {
                try output.write(Help.text(selected, programName: programName))
                try output.flush()
                exit(0)
            }
            if arguments.flag("version") {
                try output.write("\(spec.name) (Hudson) \(hudsonVersion)\n")
                try output.flush()
                exit(0)
            }
            if let shell = arguments.string("generate-completion") {
                try output.write(Completion.script(for: spec, shell: shell))
                try output.flush()
                exit(0)
            }
            if arguments.flag("declaration") {
                try output.write(Completion.declaration(spec).encoded + "\n")
                try output.flush()
                exit(0)
            }
            try CheckpointHelper.refuseOutsideHelper(arguments)
            return Invocation(
                name: spec.name, programName: programName, spec: selected, arguments: arguments,
                environment: environment, undecodableEnvironment: undecodable, stdout: output,
                debug: environment["HUDSON_DEBUG"] == "1")
        } catch is OutputClosed {
            exit(0)
        } catch let error as OutputFailed {
            // --help or --version into a full disk: the same status as any other output.
            writeError("\(spec.name): \(error)\n")
            exit(ExitStatus.temporaryFailure.rawValue)
        } catch let error as UsageError {
            let usage = usageSpec(spec)
            let programName = usage.name == spec.name ? spec.name : "\(spec.name) \(usage.name)"
            writeError("\(spec.name): \(error.message)\n\(Help.usage(usage, programName: programName))\n")
            exit(ExitStatus.usage.rawValue)
        } catch {
            writeError("\(spec.name): \(error)\n")
            exit(ExitStatus.usage.rawValue)
        }
    }

    /// The spec whose usage line a usage error shows: the subcommand's when one was named.
    static func usageSpec(_ spec: CommandSpec) -> CommandSpec {
        let arguments = CommandLine.arguments.dropFirst()
        if let name = arguments.first(where: { !$0.hasPrefix("-") }), let sub = spec.subcommand(named: name) { return sub }
        return spec
    }

    /// Reports an error as one line and exits with its status. A closed output pipe is
    /// a quiet success.
    static func fail(_ error: any Error, invocation: Invocation, classifiers: [ErrorClassifier]) -> Never {
        if error is OutputClosed { exit(0) }
        do {
            try invocation.stdout.flush()
        } catch {
            // The reader is gone; the error still goes to standard error below.
        }
        if let usage = error as? UsageError {
            writeError("\(invocation.name): \(usage.message)\n\(Help.usage(invocation.spec, programName: invocation.programName))\n")
            exit(ExitStatus.usage.rawValue)
        }
        let classified = classifiers.lazy.compactMap { $0(error) }.first ?? Exit.classify(error, debug: invocation.debug)
        // Every usage error is printed with the usage line (CONTRACT.md "Exit status").
        let usage = classified.status == .usage ? Help.usage(invocation.spec, programName: invocation.programName) + "\n" : ""
        writeError("\(invocation.name): \(classified.message)\n\(usage)")
        exit(classified.status.rawValue)
    }

    /// The environment as text, and the names whose values are not UTF-8: their text is
    /// repaired (U+FFFD), so whatever reads them as a path asks `Paths`, which refuses them.
    static func currentEnvironment() -> (values: [String: String], undecodable: Set<String>) {
        var result: [String: String] = [:]
        var undecodable: Set<String> = []
        var pointer = environ
        while let entry = pointer.pointee {
            // Split on the first '=' in bytes: walking Characters costs more than the rest
            // of a short command's start.
            if let equals = strchr(entry, Int32(UInt8(ascii: "="))) {
                let nameLength = entry.distance(to: equals)
                let name = entry.withMemoryRebound(to: UInt8.self, capacity: nameLength) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: nameLength), as: UTF8.self)
                }
                let value = UnsafeBufferPointer(start: UnsafeRawPointer(equals + 1).assumingMemoryBound(to: UInt8.self),
                                                count: strlen(equals + 1))
                if let text = String(validating: value, as: UTF8.self) {
                    result[name] = text
                } else {
                    result[name] = String(decoding: value, as: UTF8.self)
                    undecodable.insert(name)
                }
            }
            pointer += 1
        }
        return (result, undecodable)
    }
}

/// Writes a diagnostic to standard error, unbuffered (diagnostics must not wait for a
/// flush), through `TerminalSafety.diagnostic`: whatever an error quotes (a reference, a
/// label, a server's message) cannot drive the terminal or run to a megabyte.
public func writeError(_ text: String) {
    writeTerminalControl(TerminalSafety.diagnostic(text))
}

/// Writes to standard error as is: only for Hudson's own control sequences (a progress
/// line's carriage return and erase), never for text that quotes input.
public func writeTerminalControl(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 {
            if written < 0 && errno == EINTR { continue }
            return
        }
        offset += written
    }
    bytes.removeAll()
}
