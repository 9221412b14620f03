/*!
 Errors the store reports. Each names what went wrong without mail content or SQL;
 the CLI maps them to exit codes in one table (HudsonCLI's Exit).
 */

public enum StoreError: Error, Equatable, CustomStringConvertible {
    case noStore(path: String)
    case cannotCreate(path: String, reason: String)
    case notAStore(path: String, reason: String)
    /// The store exists but cannot be read or written as the command needs (permissions,
    /// a read-only file system); `reason` says which, in words.
    case unusable(path: String, reason: String)
    case newerSchema(path: String)
    case olderSchema(path: String)
    /// The store is behind this Hudson and another process held it past the wait: most
    /// likely upgrading it (a temporary condition, unlike `olderSchema`).
    case beingUpgraded(path: String)
    /// A batched upgrade (an index rebuilt) has started and not finished: a read-only
    /// command cannot use the half-built store; the writer running it, or the next one,
    /// finishes it (Migrator's batched migrations).
    case upgradeUnfinished(path: String, rowsDone: Int64, rowsInAll: Int64)
    case migrationFailed(path: String, reason: String)
    case unknownAccount(String)
    case accountExists(String)
    case unknownLabel(String)
    /// A label name Gmail would refuse: empty, or holding control characters.
    case invalidLabelName(String, reason: String)
    /// A system label (INBOX, SPAM, ...): it cannot be created, renamed or deleted.
    case systemLabel(String)
    /// A label with this name is already shown.
    case labelExists(String)
    case noSuchAction(Int64)
    case nothingToUndo
    case invalidArgument(String)
    /// The kernel would not watch the store's directory for changes (`--follow`).
    case cannotWatch(path: String, reason: String)

    public var description: String { description(quoting: { $0 }) }

    /// The description with every text that came from outside (a path, an account, a
    /// label name, an action id) passed through `quote`: the CLI quotes them so that a
    /// name holding ESC or a megabyte of text prints safely and short.
    public func description(quoting quote: (String) -> String) -> String {
        switch self {
        case .noStore(let path):
            return "no store at \(quote(path)); run hd-auth"
        case .cannotCreate(let path, let reason):
            return "cannot create store at \(quote(path)): \(reason)"
        case .notAStore(let path, let reason):
            return "\(quote(path)): \(reason)"
        case .unusable(let path, let reason):
            return "\(quote(path)): \(reason)"
        case .newerSchema(let path):
            return "\(quote(path)): store written by a newer Hudson; upgrade Hudson"
        case .olderSchema(let path):
            return "\(quote(path)): store written by an older Hudson; the next command that writes (hd-sync, hd-mark) upgrades it, and may be doing so now"
        case .beingUpgraded(let path):
            return "\(quote(path)): the store is being upgraded to this Hudson by another process; try again when it finishes"
        case .upgradeUnfinished(let path, let done, let all):
            let percent = all > 0 ? done * 100 / all : 100
            return "\(quote(path)): the store's upgrade to this Hudson is \(percent) % done; the command running it, or the next command that writes (hd-sync, hd-mark), finishes it"
        case .migrationFailed(let path, let reason):
            return "\(quote(path)): \(reason)"
        case .unknownAccount(let email):
            return "\(quote(email)): no such account"
        case .accountExists(let email):
            return "\(quote(email)): account already exists"
        case .unknownLabel(let name):
            return "\(quote(name)): no such label"
        case .invalidLabelName(let name, let reason):
            return name.isEmpty ? reason : "\(quote(name)): \(reason)"
        case .systemLabel(let name):
            return "\(quote(name)): a system label; it cannot be created, renamed or deleted"
        case .labelExists(let name):
            return "\(quote(name)): a label with this name exists"
        case .noSuchAction(let id):
            return "\(id): no such action"
        case .nothingToUndo:
            return "nothing to undo"
        case .invalidArgument(let what):
            return what
        case .cannotWatch(let path, let reason):
            return "\(quote(path)): cannot watch the store for changes: \(reason)"
        }
    }
}
