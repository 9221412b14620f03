/*!
 The one table of Gmail methods Hudson calls, with their quota cost and whether repeating
 them is safe. Costs are per call from the Gmail "Usage limits" page as copied in
 gmail-api.md §3; a batch of n calls costs n times the per-call cost, not one call. Every
 place that charges the QuotaBucket or decides whether a failure may be retried reads it here.
 */

/// A Gmail REST method, with its quota cost in units (gmail-api.md §3).
public enum GmailMethod: String, Sendable, CaseIterable {
    case getProfile
    case labelsList
    case labelsGet
    case labelsCreate
    case labelsPatch
    case labelsDelete
    case historyList
    case messagesList
    case messagesGet
    case attachmentsGet
    case messagesModify
    case messagesTrash
    case messagesUntrash
    case messagesBatchModify
    case messagesSend
    case messagesImport
    case draftsCreate
    case draftsUpdate
    case draftsGet
    case draftsList
    case draftsSend
    case draftsDelete
    case filtersList

    /// Quota units one call costs.
    public var units: Int {
        switch self {
        case .getProfile, .labelsList, .labelsGet: return 1
        case .historyList: return 2
        case .labelsCreate, .labelsPatch, .labelsDelete, .messagesList, .messagesGet, .attachmentsGet,
             .messagesModify, .messagesTrash, .messagesUntrash:
            return 5
        case .messagesBatchModify: return 50
        case .messagesSend: return 100
        // gmail-api.md §2.13.
        case .messagesImport: return 25
        // gmail-api.md §2.12.
        case .draftsGet, .draftsList: return 5
        case .draftsCreate, .draftsDelete: return 10
        case .draftsUpdate: return 15
        case .draftsSend: return 100
        // users.settings.filters.list (gmail-api.md §2.14, §3).
        case .filtersList: return 1
        }
    }

    /// Whether the call may be repeated after an ambiguous failure (a timeout or 5xx, where
    /// the server may have acted). `messages.send` may not: gmail-api.md §4 says "Don't
    /// blindly retry non-idempotent calls … The message may already have gone out." It is
    /// retried only after a rate-limit refusal, which means the server did not act.
    /// `labels.create` is safe to repeat: a second create of the same name fails with 409
    /// (the flusher then finds the label by name). `labels.patch` sets the same fields
    /// again; a repeated `labels.delete` answers 404, which the flusher reads as done.
    /// `drafts.create` makes a second draft and `drafts.send` a second email, so neither is
    /// repeated either; `drafts.update` replaces the content with the same content, and a
    /// repeated `drafts.delete` answers 404, which its caller takes as done.
    /// `messages.import` stores a second copy when repeated (gmail-api.md §2.13), so it is not either.
    public var isIdempotent: Bool {
        self != .messagesSend && self != .draftsCreate && self != .draftsSend && self != .messagesImport
    }
}
