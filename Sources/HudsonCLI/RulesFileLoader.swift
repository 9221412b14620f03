/*!
 The rules file (hd-filters(1), RULES FILE): `$HUDSON_CONFIG_DIR/rules`, else
 `$XDG_CONFIG_HOME/hudson/rules`, else `~/.config/hudson/rules` (Paths.configDirectory).
 A rule that does not parse, or names a label the account does not have, fails the
 load (exit 78) with its file, line and column: never a silently skipped rule.
 */
import HudsonOutput
import HudsonStore

public enum RulesFileLoader {
    /// The rules file's path.
    public static func path(_ cli: Invocation) throws -> String {
        try cli.configDirectory() + "/rules"
    }

    /// The rules, or nil when there is no rules file. `accountID` (when given) checks
    /// that every label the rules add or remove exists.
    public static func load(_ cli: Invocation, store: Store?, accountID: Int64?) throws -> [MailRule]? {
        let path = try path(cli)
        guard let text = try read(path) else { return nil }
        let rules: [MailRule]
        do {
            rules = try RulesFile.parse(text)
        } catch {
            throw CommandFailure(.configuration, "\(path):\(error.line):\(error.column): \(error.message)")
        }
        if let store, let accountID {
            for rule in rules {
                for (index, action) in rule.actions.enumerated() {
                    guard let name = action.labelName, try store.label(named: name, accountID: accountID) == nil else { continue }
                    let column = index < rule.actionColumns.count ? ":\(rule.actionColumns[index])" : ""
                    throw CommandFailure(.configuration,
                                         "\(path):\(rule.line)\(column): no label named \(Records.labelText(name)) (hd-labels create it first)")
                }
            }
        }
        return rules
    }

    /// The longest rules file read: a rule is a line; a file past this is not rules.
    static let maximumBytes = 4 << 20

    /// The file's text; nil when it does not exist. Opened the one way (InputFile): a
    /// FIFO, device or directory is refused (78), never waited on.
    static func read(_ path: String) throws -> String? {
        guard let bytes = try InputFile.read(path, limit: maximumBytes, what: "4 MiB", failing: .configuration) else {
            return nil
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(.configuration, "\(TerminalSafety.quoted(path)): not UTF-8")
        }
        return text
    }
}
