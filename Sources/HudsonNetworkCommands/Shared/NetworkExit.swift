/*!
 Exit statuses for the errors of the network modules (Gmail, OAuth, credentials, sync),
 from the one table in HudsonCLI's Exit.swift. Only the commands that talk to Gmail link
 this, so the read commands start without Foundation.
 */
import HudsonCLI
import HudsonGmail
import HudsonSync

public enum NetworkExit {
    public static let classify: ErrorClassifier = { error in
        switch error {
        case let error as GmailError:
            // The two ways an authorisation stops working say what happened and what to do,
            // the same words whether the token endpoint or Gmail noticed.
            switch error.unwrapped {
            case .authorizationRevoked(let detail):
                return ClassifiedError(.notAuthorized, OAuthGuidance.revoked(serverDescription: detail))
            case .forbidden(reason: "insufficientPermissions"):
                return ClassifiedError(.notAuthorized, OAuthGuidance.missingScopes([OAuthScope.gmailModify]))
            case .network(let detail) where LocalServer.isRefusal(detail) && LocalServer.refusedMessage() != nil:
                return ClassifiedError(.temporaryFailure, "gmail: " + LocalServer.refusedMessage()!)
            default:
                return ClassifiedError(status(of: error), "gmail: \(error)")
            }
        case let error as any OAuthFailure:
            switch error.kind {
            case .notAuthorised: return ClassifiedError(.notAuthorized, error.description)
            case .configuration: return ClassifiedError(.configuration, error.description)
            case .temporary:
                // The token endpoint of a Gmail on this machine (the demo's fake) is the same server.
                if error.description.hasSuffix(": connection refused; try again later"), let message = LocalServer.refusedMessage() {
                    return ClassifiedError(.temporaryFailure, message)
                }
                return ClassifiedError(.temporaryFailure, error.description)
            case .unexpected: return ClassifiedError(.temporaryFailure, error.description)
            }
        case let error as GmailConfigurationError:
            return ClassifiedError(.configuration, error.description)
        case let error as SyncError:
            switch error {
            case .unknownAccount: return ClassifiedError(.notAuthorized, error.description)
            case .unknownMessage: return ClassifiedError(.dataError, error.description)
            case .invalidHistoryID: return ClassifiedError(.temporaryFailure, error.description)
            }
        case is CancellationError:
            return ClassifiedError(.temporaryFailure, "interrupted")
        default:
            return nil
        }
    }

    /// The error, classified, when retrying at once cannot get past it: credentials that
    /// cannot be used, a revoked grant, or Gmail refusing the whole account
    /// (`GmailError.isAccountWide`, the daily quota included). What a command that leaves
    /// its work queued says on standard error, where being offline goes unsaid.
    static func lasting(_ error: any Error) -> ClassifiedError? {
        guard let classified = classify(error) else { return nil }
        if [.configuration, .notAuthorized].contains(classified.status) { return classified }
        if let error = error as? GmailError, error.isAccountWide { return classified }
        return nil
    }

    static func status(of error: GmailError) -> ExitStatus {
        switch error {
        case .unauthorized, .authorizationRevoked: return .notAuthorized
        // The project's daily quota: a quota, which the contract's 75 covers (safe to run
        // again, tomorrow). Every other 403 that is not a rate limit needs the user.
        case .forbidden(reason: "dailyLimitExceeded"): return .temporaryFailure
        case .forbidden: return .notAuthorized
        case .rateLimited, .server, .network, .cancelled, .invalidResponse: return .temporaryFailure
        case .badRequest: return .dataError
        case .notFound: return .dataError
        case .batchFailed(let failure): return status(of: failure)
        }
    }
}
