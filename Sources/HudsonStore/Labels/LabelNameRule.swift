/*!
 What a label name may hold (issue 37 §3), one rule for every way a name reaches Gmail or the
 store: `hd-labels create` and `rename`, `hd-mark --create`, `hd-import` (X-Gmail-Labels,
 X-Keywords and `--label`) and the rules file (the filters `hd-filters` replays name labels
 Gmail already has, which are kept as they are, below). A name may
 hold any character text output shows as it is: none of those TerminalSafety removes from
 a field (C0 controls with TAB, CR, LF, ESC and BEL, DEL, C1 controls, bidirectional marks
 and overrides such as U+202E, interlinear annotation controls). A name holding one would
 act on the terminal that lists it, or be shown as another name (`Work` for `Work ESC[8m`)
 that no command could then name.

 Labels Gmail already has (made in the web UI, or by an older Hudson) are kept and synced
 as they are; text output shows such a name double-quoted with each of those characters
 as a visible escape (`"Work\e[8m"`: `escaped`), and every command that takes a label name
 accepts that spelling (or the label's id, which `hd-labels --json` shows) for it
 (`Store.labelMatches`).
 */
import HudsonText

public enum LabelNameRule {
    /// Why `name` breaks the rule, or nil when it keeps it.
    public static func problem(_ name: String) -> String? {
        guard let bad = name.unicodeScalars.first(where: TerminalSafety.isUnsafe) else { return nil }
        switch bad.value {
        case 0x09, 0x0A, 0x0D: return "a label name cannot hold a tab or a line break"
        case 0x00...0x1F, 0x7F...0x9F: return "a label name cannot hold control characters"
        default: return "a label name cannot hold bidirectional or invisible format characters"
        }
    }

    /// Whether text output can show `name` as it is.
    public static func isShownAsIs(_ name: String) -> Bool {
        problem(name) == nil
    }

    /// `name` with each character the rule refuses written as a visible escape (`\e`,
    /// `\a`, `\0`, `\t`, `\n`, `\r`, `\u{202E}`) and every `\` doubled, so two names never
    /// share a spelling: how text output shows a name that breaks the rule, and a spelling
    /// of it every command accepts.
    public static func escaped(_ name: String) -> String {
        var output = ""
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x5C: output += "\\\\"
            case 0x1B: output += "\\e"
            case 0x07: output += "\\a"
            case 0x00: output += "\\0"
            case 0x09: output += "\\t"
            case 0x0A: output += "\\n"
            case 0x0D: output += "\\r"
            default:
                if TerminalSafety.isUnsafe(scalar) {
                    output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }

    /// `name` as one field of a text line that lists labels: the name as it is, or, when it
    /// holds a comma, a double quote, a backslash, a space at either end, a character text
    /// cannot show, or (with `quotingSpaces`, where blanks separate the fields, as in
    /// `+LABEL` actions) any blank, the name in double quotes with `"` and `\` escaped by a
    /// backslash and the unshowable characters escaped visibly (`escaped`). `Work, Projects`
    /// stays one label: `"Work, Projects"`.
    public static func field(_ name: String, quotingSpaces: Bool = false) -> String {
        let plain = !name.isEmpty && isShownAsIs(name)
            && !name.contains(where: { $0 == "," || $0 == "\"" || $0 == "\\" || (quotingSpaces && $0.isWhitespace) })
            && name.first != " " && name.last != " "
        if plain { return name }
        return "\"" + escaped(name).split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\\\"") + "\""
    }
}
