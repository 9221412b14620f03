/*!
 Shell completions derived from the declaration (swift-argument-parser's and ripgrep's
 model): `hd-<cmd> --generate-completion bash|zsh|fish` prints a self-contained script;
 the scripts in completions/ are this output, checked in. Values that live in the store
 are completed at TAB time by asking Hudson itself: label names from `hd-labels --ids`
 (for `--label`, `+LABEL`/`-LABEL` actions and `label:` in queries) and accounts from
 `hd-auth list --ids`. Query operands complete operator names and their keyword values.
 */
import HudsonOutput
import HudsonStore

public enum Completion {
    /// Operator names offered for a query operand.
    static let queryOperators = [
        "from:", "to:", "cc:", "bcc:", "subject:", "label:", "in:", "is:", "has:", "filename:", "after:", "before:",
        "older_than:", "newer_than:", "larger:", "smaller:", "category:", "rfc822msgid:", "list:",
    ]
    /// Keyword values of the operators that have them.
    static let operatorValues: [(String, [String])] = [
        ("in:", ["inbox", "sent", "trash", "spam", "anywhere", "drafts", "starred", "important"]),
        ("is:", ["unread", "read", "starred", "important"]),
        ("has:", ["attachment", "userlabels", "nouserlabels"]),
        ("category:", ["primary", "social", "promotions", "updates", "forums"]),
    ]
    static let actions = TriageAction.names

    public static func script(for spec: CommandSpec, shell: String) -> String {
        switch shell {
        case "zsh": return zsh(spec)
        case "fish": return fish(spec)
        default: return bash(spec)
        }
    }

    /// The declaration as JSON: options (long, short, value name, kind, default,
    /// hidden), operands and subcommands, recursively.
    public static func declaration(_ spec: CommandSpec) -> JSONValue {
        func kind(_ kind: ValueKind) -> String {
            switch kind {
            case .string: return "string"
            case .integer: return "integer"
            case .file: return "file"
            case .directory: return "directory"
            case .label: return "label"
            case .account: return "account"
            case .address: return "address"
            case .reference: return "reference"
            case .query: return "query"
            case .action: return "action"
            case .choice(let values): return "choice:" + values.joined(separator: ",")
            }
        }
        let options: [JSONValue] = spec.allOptions.map { option in
            .object([
                ("long", .string(option.long)), ("short", option.short.map { .string(String($0)) } ?? .null),
                ("value_name", option.valueName.map { .string($0) } ?? .null), ("kind", .string(option.isFlag ? "flag" : kind(option.kind))),
                ("default", option.defaultValue.map { .string($0) } ?? .null), ("hidden", .bool(option.hidden)),
                ("repeatable", .bool(option.repeatable)), ("help", .string(option.help)),
            ])
        }
        let operands: [JSONValue] = spec.operands.map {
            .object([("name", .string($0.name)), ("kind", .string(kind($0.kind))), ("help", .string($0.help))])
        }
        return .object([
            ("name", .string(spec.name)), ("abstract", .string(spec.abstract)), ("options", .array(options)),
            ("operands", .array(operands)), ("subcommands", .array(spec.subcommands.map(declaration))),
        ])
    }

    // MARK: - Shared pieces

    static func functionName(_ spec: CommandSpec) -> String {
        "_hudson_" + spec.name.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    }

    /// The operand kinds of a command (its own or its subcommands').
    static func operandKinds(_ spec: CommandSpec) -> Set<String> {
        var kinds = Set<String>()
        for operand in spec.operands {
            switch operand.kind {
            case .query: kinds.insert("query")
            case .action: kinds.insert("action")
            case .account: kinds.insert("account")
            case .label: kinds.insert("label")
            case .file: kinds.insert("file")
            default: break
            }
        }
        return kinds
    }

    static func visible(_ options: [OptionSpec]) -> [OptionSpec] { options.filter { !$0.hidden } }

    static func escapeSingle(_ text: String) -> String {
        text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
    }
}
