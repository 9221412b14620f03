/*!
 The installed commands are two multi-call binaries (scripts/install): one for the local
 commands (a static executable) and one for those that talk to Gmail. Each `hd-*` is a
 link to one of them; the binary runs the command whose name it was started under. One
 copy of the Swift runtime and Foundation per binary instead of one per command is what
 keeps the installed set small (docs/performance.md, "Installed size").
 */
import Glibc

public enum MultiCall {
    /// The name this process was started under: the last component of argv[0].
    public static var name: String {
        let path = CommandLine.arguments.first ?? ""
        return path.split(separator: "/").last.map(String.init) ?? path
    }

    /// For a name that is none of `commands`: one line and the usage status.
    public static func unknown(_ commands: some Sequence<String>) -> Never {
        let names = commands.sorted().joined(separator: ", ")
        writeError("\(name): not a Hudson command; run this binary as one of its links: \(names)\n")
        exit(ExitStatus.usage.rawValue)
    }
}
