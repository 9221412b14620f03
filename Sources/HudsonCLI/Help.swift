/*!
 `--help` text and the usage line, derived from the declaration.
 */

public enum Help {
    /// `usage: hd-search [options] QUERY...`
    public static func usage(_ spec: CommandSpec, programName: String) -> String {
        var parts = ["usage:", programName]
        if !spec.subcommands.isEmpty && !spec.subcommandOptional {
            parts.append("COMMAND [options]")
        } else {
            if !spec.subcommands.isEmpty { parts.append("[COMMAND]") }
            parts.append("[options]")
            for operand in spec.operands {
                switch operand.arity {
                case .one: parts.append(operand.name)
                case .optional: parts.append("[\(operand.name)]")
                case .many: parts.append("[\(operand.name)...]")
                case .oneOrMore: parts.append("\(operand.name)...")
                }
            }
        }
        return parts.joined(separator: " ")
    }

    public static func text(_ spec: CommandSpec, programName: String) -> String {
        var lines: [String] = []
        lines.append("\(programName): \(spec.abstract)")
        lines.append("")
        lines.append(usage(spec, programName: programName))
        if !spec.subcommands.isEmpty {
            lines.append("")
            lines.append("Commands:")
            let width = spec.subcommands.map(\.name.count).max() ?? 0
            for sub in spec.subcommands {
                lines.append("  " + sub.name.padding(to: width) + "  " + sub.abstract)
            }
        }
        if !spec.discussion.isEmpty {
            lines.append("")
            lines.append(spec.discussion)
        }
        if !spec.operands.isEmpty {
            lines.append("")
            lines.append("Operands:")
            let width = spec.operands.map(\.name.count).max() ?? 0
            for operand in spec.operands {
                lines.append("  " + operand.name.padding(to: width) + "  " + operand.help)
            }
        }
        let visible = spec.allOptions.filter { !$0.hidden }
        lines.append("")
        lines.append("Options:")
        let labels = visible.map(optionLabel)
        let width = min(28, labels.map(\.count).max() ?? 0)
        for (option, label) in zip(visible, labels) {
            var help = option.help
            if let value = option.defaultValue { help += " (default: \(value))" }
            if label.count > width {
                lines.append("  " + label)
                lines.append("  " + "".padding(to: width) + "  " + help)
            } else {
                lines.append("  " + label.padding(to: width) + "  " + help)
            }
        }
        lines.append("")
        lines.append("Exit status:")
        for status in [ExitStatus.success] + spec.exitStatuses.filter({ $0 != .success }) {
            lines.append("  " + String(status.rawValue).padding(to: 3) + " " + status.meaning)
        }
        lines.append("")
        lines.append("See \(programName.split(separator: " ").first.map(String.init) ?? programName)(1).")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `-n, --limit N` or `    --json`.
    public static func optionLabel(_ option: OptionSpec) -> String {
        var label = option.short.map { "-\($0), " } ?? "    "
        label += "--\(option.long)"
        if let name = option.valueName { label += " \(name)" }
        return label
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
