/*!
 The headers Hudson keeps of a message, decoded: written by sync (snapshots, bodies,
 imports) and read by search, reads and the outbox's threading.
 */

/// The headers Hudson keeps for display, search and threading, already decoded.
public struct MessageHeaders: Equatable, Sendable {
    public var subject: String?
    public var from: String?
    public var to: String?
    public var cc: String?
    public var bcc: String?
    public var replyTo: String?
    public var date: String?
    public var messageID: String?
    public var inReplyTo: String?
    public var references: String?
    public var listID: String?
    public var contentType: String?
    /// What a sender offers for unsubscribing and what vouches for it (issue 42;
    /// Senders/ListHeaders.swift): kept for mail that carries List-Unsubscribe.
    public var list = ListHeaders()

    public init(
        subject: String? = nil, from: String? = nil, to: String? = nil, cc: String? = nil, bcc: String? = nil,
        replyTo: String? = nil, date: String? = nil, messageID: String? = nil, inReplyTo: String? = nil,
        references: String? = nil, listID: String? = nil, contentType: String? = nil
    ) {
        self.subject = subject
        self.from = from
        self.to = to
        self.cc = cc
        self.bcc = bcc
        self.replyTo = replyTo
        self.date = date
        self.messageID = messageID
        self.inReplyTo = inReplyTo
        self.references = references
        self.listID = listID
        self.contentType = contentType
    }
}
