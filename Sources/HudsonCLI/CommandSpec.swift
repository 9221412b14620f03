/*!
 A command is declared once (swift-argument-parser's model, without reflection): its
 name, abstract, options with value names, kinds and defaults, operands, access mode
 and subcommands. The parser, `--help`, usage errors, `--version`, completions and the
 synopsis are all derived from this declaration (STYLE.md rule 3, example 9).
 */

/// What an option's or operand's value is, for validation, help and completion.
public enum ValueKind: Sendable, Equatable {
    case string
    case integer
    case file
    case directory
    case label
    case account
    /// An email address, completed from `hd-address` (the store's addresses, best first).
    case address
    case reference
    case query
    case action
    case choice([String])
}

public struct OptionSpec: Sendable {
    public var long: String
    public var short: Character?
    /// Nil for a flag; else the placeholder shown in help (`N`, `PATH`).
    public var valueName: String?
    public var kind: ValueKind
    public var help: String
    public var defaultValue: String?
    public var repeatable: Bool
    public var hidden: Bool

    public var isFlag: Bool { valueName == nil }

    public static func flag(_ long: String, short: Character? = nil, help: String, hidden: Bool = false) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: nil, kind: .string, help: help, defaultValue: nil,
                   repeatable: false, hidden: hidden)
    }

    public static func value(
        _ long: String, short: Character? = nil, name: String, kind: ValueKind = .string, help: String,
        default defaultValue: String? = nil, repeatable: Bool = false, hidden: Bool = false
    ) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: name, kind: kind, help: help, defaultValue: defaultValue,
                   repeatable: repeatable, hidden: hidden)
    }
}

public struct OperandSpec: Sendable {
    public enum Arity: Sendable { case one, optional, many, oneOrMore }

    public var name: String
    public var kind: ValueKind
    public var help: String
    public var arity: Arity

    public init(_ name: String, kind: ValueKind = .string, arity: Arity = .one, help: String) {
        self.name = name
        self.kind = kind
        self.help = help
        self.arity = arity
    }
}

/// How a command uses the store; `Main` opens it accordingly (STYLE.md rule 3).
public enum AccessMode: Sendable, Equatable {
    /// Does not touch the store.
    case none
    /// `SQLITE_OPEN_READONLY`; never creates the store.
    case readOnly
    /// Writes an existing store.
    case readWrite
    /// Creates the store when missing.
    case create
}

public struct ExitStatusNote: Sendable {
    public var status: ExitStatus
    public var meaning: String
}

public struct CommandSpec: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String
    public var options: [OptionSpec]
    public var operands: [OperandSpec]
    public var subcommands: [CommandSpec]
    public var access: AccessMode
    /// Operands may begin with '-' (`hd-mark -Work`, `hd-search -from:bob`): a
    /// single-dash word that is not a declared short option is an operand.
    public var dashOperands: Bool
    /// Exit statuses this command uses besides 0, with what they mean for it.
    public var exitStatuses: [ExitStatus]
    /// The command also runs with no subcommand, with its own options and operands
    /// (`hd-labels` lists; `hd-labels create NAME` creates).
    public var subcommandOptional: Bool

    public init(
        name: String, abstract: String, discussion: String = "", options: [OptionSpec] = [],
        operands: [OperandSpec] = [], subcommands: [CommandSpec] = [], access: AccessMode,
        dashOperands: Bool = false, exitStatuses: [ExitStatus] = ExitStatus.allCases, subcommandOptional: Bool = false
    ) {
        self.subcommandOptional = subcommandOptional
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.operands = operands
        self.subcommands = subcommands
        self.access = access
        self.dashOperands = dashOperands
        self.exitStatuses = exitStatuses
    }

    /// Options every command has (CONTRACT.md "Every command").
    public static let commonOptions: [OptionSpec] = [
        .flag("help", short: "h", help: "Show this help and exit."),
        .flag("version", help: "Show the version and exit."),
        .value("db", name: "PATH", kind: .file,
               help: "The store (default: $HUDSON_DB, else $XDG_DATA_HOME/hudson/hudson.sqlite3)."),
        .value("account", name: "EMAIL", kind: .account,
               help: "Only this account (default: $HUDSON_ACCOUNT, else every account)."),
        .value("generate-completion", name: "SHELL", kind: .choice(["bash", "zsh", "fish"]),
               help: "Print the completion script for SHELL (bash, zsh or fish).", hidden: true),
        .flag("declaration", help: "Print this command's declaration as JSON (for tests and tooling).", hidden: true),
    ]

    /// The command's own options followed by the common ones.
    public var allOptions: [OptionSpec] { options + Self.commonOptions }

    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}
