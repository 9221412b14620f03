/*!
 The words for a Gmail on this machine that nothing answers at (issue 38 §4: the demo's fake
 stopped, the environment still naming it), in one place: the network commands say them when
 they meet it (HudsonNetworkCommands' `LocalServer`), and `hd-mark` and `hd-undo`, whose
 `hd-sync --push` met it in a child process, pass the child's line on (QueuePush.swift).
 */

public enum StoppedLocalGmail {
    /// How the demo's fake Gmail starts again: the end of every such message, by which a
    /// parent finds it among its child's errors.
    public static let restart = "(the demo's starts again with scripts/demo --serve)"

    /// What to say instead of "connection refused" when the Gmail at `address` is on this machine.
    public static func message(address: String) -> String {
        "nothing answers at \(address), the Gmail on this machine HUDSON_GMAIL_URL names: is it running? " + restart
    }

    /// The stopped-server line among a child's standard error (`hd-sync: ACCOUNT: gmail: …`),
    /// without the child's name, or nil.
    static func line(inErrorsOf child: String, _ errors: [UInt8]) -> String? {
        let prefix = child + ": "
        for line in errors.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasSuffix(restart) else { continue }
            return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
        }
        return nil
    }
}
