/*!
 One message as the list views show it (hd-search --messages, hd-ls of a thread,
 the change feed, rules and exports read it too).
 */

/// One message as list views show it.
public struct MessageSummary: Equatable, Sendable {
    public var accountID: Int64
    public var messageID: String
    public var threadID: String
    public var internalDate: Int64
    public var subject: String?
    public var sender: String?
    /// The sender as list views show it (Store.displaySender).
    public var senderName: String
    public var to: String?
    public var snippet: String
    public var sizeEstimate: Int64
    public var hasAttachment: Bool
    public var hydrated: Bool
    /// Effective label ids, sorted.
    public var labels: [String]
    /// Whether `hasAttachment` is Gmail's answer (the stored parts, or Gmail's own
    /// has:attachment) rather than a guess from the Content-Type (migration 028).
    public var attachmentKnown: Bool = true
    /// A change to it is held for the user's approval (issue 40).
    public var held: Bool = false
}
