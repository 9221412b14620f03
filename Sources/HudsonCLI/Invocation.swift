/*!
 One run of a command (`Invocation`): its parsed arguments, environment, standard output,
 and the store opened the way the command's declaration says; what `Main.run` hands to a
 command's body.
 */
import Glibc
import HudsonMail
import HudsonOutput
import HudsonStore

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
                                   testing: TestHooks.connection(environment: environment),
                                   willUpgrade: Terminal.stderrIsTerminal ? { [name] migration, number, count in
                                       // An upgrade can take minutes at a million messages (an
                                       // index rebuilt): say so on a terminal (issue 43 §3).
                                       writeError("\(name): upgrading the store to this Hudson: \(migration) (\(number) of \(count))\n")
                                   } : nil,
                                   upgradeProgress: Terminal.stderrIsTerminal ? Self.upgradeProgressLine(name) : nil)
        if Terminal.stderrIsTerminal, store.upgradeReadListHeaders,
           let unknown = try? store.listHeaderCoverage(accountID: nil).unknown, unknown > 0 {
            // Migration 035 fills list headers from kept sources only (issue 42): say how
            // many it could not, once, when it ran on a store that had mail.
            writeError("\(name): \(unknown) stored message(s) have no kept source to read List-Unsubscribe from: "
                       + "hd-senders shows their senders' methods as unknown\n")
        }
        if checkpointAfterExit && access != .readOnly {
            precondition(CheckpointHelper.isDeclared(by: spec),
                         "\(name) starts a checkpoint helper but does not declare its option")
            _ = CheckpointHelper.start(commandName: name, storePath: path)
        }
        return store
    }

    /// Says how far a batched upgrade has got, a line at each tenth of it: an index
    /// rebuilt at a million messages takes minutes (issue 43 §3).
    static func upgradeProgressLine(_ name: String) -> (String, Int64, Int64) -> Void {
        var tenthsSaid: Int64 = -1
        return { migration, done, all in
            let tenths = all > 0 ? done * 10 / all : 10
            guard tenths > tenthsSaid else { return }
            tenthsSaid = tenths
            writeError("\(name): upgrading the store to this Hudson: \(migration): \(tenths * 10) % done\n")
        }
    }

    /// The page cache of a command that writes. SQLite's 2 MiB default is smaller than
    /// what one triage of a thousand threads dirties (about 3,000 pages at 100,000
    /// messages): the cache spilled to the WAL mid-transaction and pages were read again
    /// (23,000 reads of a page for that triage; 10,600 with this cache). Pages are
    /// allocated only as they are used.
    static let writerCacheKiB = 64 * 1024

    /// The account `--account` or `$HUDSON_ACCOUNT` names, or nil for every account.
    /// `strict`: `--account` is read as `accountArgument` reads it (commands that send).
    public func selectedAccount(in store: Store, strict: Bool = false) throws -> Account? {
        if strict, let option = arguments.string("account") {
            return try store.requireAccount(email: Self.accountArgument(option, what: "--account"))
        }
        let email = arguments.string("account") ?? environment["HUDSON_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        guard let email else { return nil }
        return try store.requireAccount(email: email)
    }

    /// An account named on the command line of a command that sends (hd-send's -f, -r and
    /// --account, hd-drafts' --account), read by the strict rule recipients are read by
    /// (OutgoingAddresses): one bare address, nothing that rule refuses. A line break in -f
    /// was looked up as an account name and answered "no such account" (77); it is a usage
    /// error (64), found before any account is looked up.
    public static func accountArgument(_ value: String, what: String) throws -> String {
        let list: [MailAddress]
        do { list = try OutgoingAddresses.parse(value) } catch {
            throw UsageError("\(what) \"\(TerminalSafety.quoted(value))\": \(error)")
        }
        guard list.count == 1, let only = list.first, only.name.isEmpty else {
            throw UsageError("\(what) \"\(TerminalSafety.quoted(value))\": not one email address")
        }
        return only.address
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
