/*!
 Exit statuses: the one table (CONTRACT.md "Exit status", copied into every man page)
 and the one mapping from errors to statuses and one-line messages (notmuch's
 `status_to_exit`). Errors of the network modules are classified by a classifier the
 network commands pass to `Main`, so read-only commands need not link them; every
 classifier answers with a status from this table.
 */
import HudsonQuery
import HudsonStore
import HudsonOutput
import SQLite

public enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    case noMatch = 1
    case partialFailure = 2
    case usage = 64
    case dataError = 65
    case temporaryFailure = 75
    case notAuthorized = 77
    case configuration = 78

    public var meaning: String {
        switch self {
        case .success: return "success (also: a closed output pipe; changes queued while offline)"
        case .noMatch: return "nothing matched (hd-search, hd-ls with a query), as grep does"
        case .partialFailure: return "partial failure: some references failed and the rest were done"
        case .usage: return "usage error (printed with the usage line)"
        case .dataError: return "bad input data (a query that does not parse: the message points at the column)"
        case .temporaryFailure: return "temporary failure, safe to retry: database busy past its timeout, network down, quota or server error"
        case .notAuthorized: return "not authorised: no credentials for the account, refresh token revoked, or a 403 from Gmail for a missing scope or the domain's policy"
        case .configuration: return "configuration: no store, unreadable or too-open credentials, store written by a newer Hudson"
        }
    }
}

/// An error's exit status and the text after `hd-<cmd>: `.
public struct ClassifiedError: Sendable {
    public var status: ExitStatus
    public var message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// Maps an error to a status, or nil when it is not one this classifier knows.
public typealias ErrorClassifier = @Sendable (any Error) -> ClassifiedError?

/// A failure a command reports itself with an explicit status.
public struct CommandFailure: Error, CustomStringConvertible {
    public var status: ExitStatus
    public var message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }
}

public enum Exit {
    /// The mapping for the errors of the modules every command links.
    public static func classify(_ error: any Error, debug: Bool) -> ClassifiedError {
        switch error {
        case let error as CommandFailure:
            return ClassifiedError(error.status, error.message)
        case let error as UsageError:
            return ClassifiedError(.usage, error.message)
        case let error as StoreError:
            return ClassifiedError(status(of: error), error.description(quoting: { TerminalSafety.quoted($0, limit: 200) }))
        case let error as OutboxError:
            // A message that cannot be queued, or a send that cannot be undone (65).
            return ClassifiedError(.dataError, error.description)
        case let error as ScheduledSendError:
            // A scheduled send already on its way, or not held (65).
            return ClassifiedError(.dataError, error.description)
        case let error as SQLiteError:
            return classify(error, debug: debug)
        case let error as OutputFailed:
            return ClassifiedError(.temporaryFailure, error.description)
        case let error as QueryError:
            return ClassifiedError(.dataError, "query: \(error)")
        case let error as JSONParseError:
            return ClassifiedError(.dataError, "standard input: \(error)")
        default:
            return ClassifiedError(.temporaryFailure, String(describing: error))
        }
    }

    static func status(of error: StoreError) -> ExitStatus {
        switch error {
        case .noStore, .cannotCreate, .notAStore, .unusable, .newerSchema, .olderSchema, .migrationFailed:
            return .configuration
        case .beingUpgraded, .upgradeUnfinished:
            return .temporaryFailure
        case .unknownAccount:
            return .notAuthorized
        case .accountExists, .unknownLabel, .invalidArgument:
            return .usage
        case .noSuchAction, .invalidLabelName, .systemLabel, .labelExists:
            return .dataError
        case .nothingToUndo:
            return .noMatch
        case .cannotWatch:
            return .temporaryFailure
        }
    }

    static func classify(_ error: SQLiteError, debug: Bool) -> ClassifiedError {
        let text = debug ? error.debugDescription : error.description
        switch error.code {
        case SQLiteError.busy, SQLiteError.locked:
            return ClassifiedError(.temporaryFailure, "store: busy: another process held it past the timeout; try again")
        case SQLiteError.full:
            return ClassifiedError(.temporaryFailure, "store: the disk is full; free space and try again")
        case SQLiteError.readOnly, SQLiteError.cantOpen:
            return ClassifiedError(.configuration, "store: \(text)")
        case SQLiteError.corrupt, SQLiteError.notADatabase:
            return ClassifiedError(.configuration, "store: \(text)")
        case SQLiteError.ioError:
            return ClassifiedError(.temporaryFailure, "store: \(text)")
        default:
            return ClassifiedError(.temporaryFailure, "store: \(text)")
        }
    }
}
