/// The names of what can be held for approval, as `hd-pending --approve` and hd-mcp take
/// them: `action:N` (an action's held label changes) and `outbox:N` (a held send).
public enum HeldReference {
    public static func action(_ text: String) -> Int64? { number(text, prefix: "action:") }

    public static func outbox(_ text: String) -> Int64? { number(text, prefix: "outbox:") }

    private static func number(_ text: String, prefix: String) -> Int64? {
        guard text.hasPrefix(prefix), let id = Int64(text.dropFirst(prefix.count)), id > 0,
              text.dropFirst(prefix.count).allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return id
    }
}
