import HudsonStore

extension FetchHelper {
    /// What fetching the missing bodies of some messages did: the note each message's view
    /// carries ("deleted from Gmail", "body not stored; Gmail could not be reached"), and
    /// each failure, for the caller to report its way.
    public struct Hydration {
        public var notes: [String: String] = [:]
        public var failures: [(messageID: String, failure: Failure)] = []
    }

    /// Fetches (in one child process) the bodies `details` lack and reads back each message
    /// whose body is now stored: what hd-show and hd-mcp's show do before showing.
    public func hydrateMissing(_ details: inout [MessageDetail], store: Store, names: LabelNames) throws -> Hydration {
        var hydration = Hydration()
        let hydrated = hydrate(details.filter { $0.body == nil }.map { ($0.messageID, names.email($0.accountID)) })
        for (index, message) in details.enumerated() where message.body == nil {
            switch hydrated[message.messageID] {
            case .success(true):
                details[index] = try store.messageDetails(.message(message.messageID), accountID: message.accountID).first ?? message
            case .success(false):
                hydration.notes[message.messageID] = "deleted from Gmail"
            case .failure(let failure):
                hydration.notes[message.messageID] = "body not stored; Gmail could not be reached"
                hydration.failures.append((message.messageID, failure))
            case nil:
                break
            }
        }
        return hydration
    }
}
