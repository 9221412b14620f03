import HudsonMail

/// The one way a composed message becomes bytes to queue (hd-send's Composer and hd-mcp's
/// send and drafts tools): rendered, then its recipients read back by the strict parser;
/// they must be exactly the ones decided, in order, or nothing is queued.
public enum OutgoingRender {
    public static func checked(_ outgoing: OutgoingMessage, using random: inout SystemRandomNumberGenerator) throws -> PreparedMessage {
        let raw = MessageBuilder.render(outgoing, using: &random)
        let envelope: OutgoingEnvelope
        do { envelope = try OutgoingHeaderBlock.envelope(of: raw) } catch {
            throw CommandFailure(.dataError, "the message built cannot be read back: \(error); nothing queued")
        }
        for (field, written, built) in [("To", outgoing.to, envelope.to), ("Cc", outgoing.cc, envelope.cc), ("Bcc", outgoing.bcc, envelope.bcc)]
            where written.map(\.address) != built.map(\.address) {
            throw CommandFailure(.dataError, "the message built would go to other \(field) recipients than the ones given; nothing queued")
        }
        return PreparedMessage(raw: raw, messageID: outgoing.messageID, from: envelope.from, to: envelope.to, cc: envelope.cc,
                               bcc: envelope.bcc, subject: outgoing.subject)
    }
}
