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
            default:
                return ClassifiedError(status(of: error), "gmail: \(error)")
            }
        case let error as any OAuthFailure:
            switch error.kind {
            case .notAuthorised: return ClassifiedError(.notAuthorized, error.description)
            case .configuration: return ClassifiedError(.configuration, error.description)
            case .temporary: return ClassifiedError(.temporaryFailure, error.description)
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

    static func status(of error: GmailError) -> ExitStatus {
        switch error {
        case .unauthorized, .authorizationRevoked: return .notAuthorized
        case .forbidden: return .notAuthorized
        case .rateLimited, .server, .network, .cancelled, .invalidResponse: return .temporaryFailure
        case .badRequest: return .dataError
        case .notFound: return .dataError
        case .batchFailed(let failure): return status(of: failure)
        }
    }
}
