/*!
 The main wrapper every `hd-*` runs through (swift-argument-parser's `main()` and
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

/// One run of a command: its parsed arguments, environment, output, and the store
/// opened the way the declaration says.
public final class Invocation {
    /// `hd-mark`: the prefix of every diagnostic.
    public let name: String
    /// `hd-auth login` for a subcommand.
    public let programName: String
    public let spec: CommandSpec
    public let arguments: ParsedArguments
    public let environment: [String: String]
    /// The variables whose values are not UTF-8 (`Main.currentEnvironment`).
    public let undecodableEnvironment: Set<String>
    public let stdout: OutputStream
    public let debug: Bool
    private var openedStore: Store?

    init(name: String, programName: String, spec: CommandSpec, arguments: ParsedArguments,
         environment: [String: String], undecodableEnvironment: Set<String>, stdout: OutputStream, debug: Bool) {
        self.undecodableEnvironment = undecodableEnvironment
        self.name = name
        self.programName = programName
        self.spec = spec
        self.arguments = arguments
        self.environment = environment
        self.stdout = stdout
        self.debug = debug
    }

    public var terminal: TerminalInfo { Terminal.info(environment: environment) }

    /// The store path after `--db` and the environment.
    public func storePath() throws -> String {
        try Paths.store(option: arguments.string("db"), environment: environment, undecodable: undecodableEnvironment)
    }

    public func configDirectory() throws -> String {
        try Paths.configDirectory(environment: environment, undecodable: undecodableEnvironment)
    }

    /// The store, opened once with the declared access mode.
    public func store() throws -> Store {
        if let openedStore { return openedStore }
        let access: Store.Access
        switch spec.access {
        case .none: throw CommandFailure(.configuration, "\(name) does not use the store")
        case .readOnly: access = .readOnly
        case .readWrite: access = .readWrite
        case .create: access = .create
        }
        let store = try openStore(access)
        openedStore = store
        return store
    }

    /// Opens the store with an explicit access mode (creating its directory 0700 when
    /// the mode creates). Triage opens with `synchronous=FULL`: a queued change exists
    /// nowhere else until it is sent (sqlite-notes.md "Durability"). Every command opens
    /// its store here, so the reliability suite's seams (TestHooks) reach them all.
    /// `cacheKiB` (else `writerCacheKiB` for a writer, SQLite's default for a reader) and
    /// `checkpointPages` are for hd-sync's connection (SyncRunner).
    /// With `checkpointAfterExit` (a command that declares `CheckpointHelper.option`), the
    /// checkpoint its close would do is left to a helper that does it once this process
    /// has exited (CheckpointHelper).
    public func openStore(
        _ access: Store.Access, durable: Bool = false, cacheKiB: Int? = nil, checkpointPages: Int? = nil,
        checkpointAfterExit: Bool = false
    ) throws -> sending Store {
        let path = try storePath()
        if access == .create { try Paths.makeDirectories(Paths.directory(of: path)) }
        let store = try Store.open(path: path, access: access, synchronous: durable ? .full : .normal,
                                   cacheKiB: cacheKiB ?? (access == .readOnly ? nil : Self.writerCacheKiB),
                                   checkpointPages: checkpointPages,
                                   testing: TestHooks.connection(environment: environment))
        if checkpointAfterExit && access != .readOnly {
            precondition(CheckpointHelper.isDeclared(by: spec),
                         "\(name) starts a checkpoint helper but does not declare its option")
            _ = CheckpointHelper.start(commandName: name, storePath: path)
        }
        return store
    }

    /// The page cache of a command that writes. SQLite's 2 MiB default is smaller than
    /// what one triage of a thousand threads dirties (about 3,000 pages at 100,000
    /// messages): the cache spilled to the WAL mid-transaction and pages were read again
    /// (23,000 reads of a page for that triage; 10,600 with this cache). Pages are
    /// allocated only as they are used.
    static let writerCacheKiB = 64 * 1024

    /// The account `--account` or `$HUDSON_ACCOUNT` names, or nil for every account.
    public func selectedAccount(in store: Store) throws -> Account? {
        let email = arguments.string("account") ?? environment["HUDSON_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        guard let email else { return nil }
        return try store.requireAccount(email: email)
    }

    /// The output form the shared output options ask for.
    public var outputFormat: OutputFormat {
        if arguments.flag("ids") { return .ids(nulTerminated: arguments.flag("null")) }
        if arguments.flag("json") { return .json }
        return .text
    }

    public func makeSink() -> any Sink {
        HudsonOutput.makeSink(outputFormat, output: stdout, terminal: terminal)
    }

    /// `hd-<cmd>: text` on standard error.
    public func warn(_ text: String) {
        writeError("\(name): \(text)\n")
    }

    /// `warn`, only when standard output is a terminal: a command that found nothing to
    /// list or change says so to the person reading (issue 38 §4), while a pipe keeps its
    /// empty output and its exit status, which is what a script reads.
    public func noteForTerminal(_ text: String) {
        if terminal.isTerminal { warn(text) }
    }

    /// Reference texts from operands, or from standard input when there are none or
    /// one is `-`. With no operands and a terminal on standard input, that is a usage
    /// error rather than a silent wait (STYLE.md rule 9).
    public func referenceTexts(_ operands: [String]) throws -> [String] {
        if !operands.isEmpty && !operands.contains("-") { return operands }
        if operands.isEmpty && Input.stdinIsTerminal {
            throw UsageError("no references given (operands, or one per line on standard input)")
        }
        var result = operands.filter { $0 != "-" }
        let reader = LineReader()
        while let line = try reader.next() {
            if let text = try Input.referenceText(line: line) { result.append(text) }
        }
        return result
    }
}
