/*!
 What `hd-show` fetches only when asked: a body not stored yet (the same hydration
 pipeline sync uses, on the interactive quota lane), the RFC 822 source (`--raw`), and
 attachment contents (`--save-attachments`). Connections are made per account the
 first time they are needed; a store connection that can write is opened only for
 hydration.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonMail
import HudsonStore
import HudsonSync

@MainActor
public final class OnDemand {
    let invocation: Invocation
    private var accesses: [String: GmailAccess] = [:]
    private var database: SharedStore?

    public init(invocation: Invocation) {
        self.invocation = invocation
    }

    func access(_ email: String) throws -> GmailAccess {
        if let access = accesses[email] { return access }
        let access = try GmailAccess(email: email, configDirectory: try invocation.configDirectory(),
                                     endpoints: try GmailEndpoints(environment: invocation.environment))
        accesses[email] = access
        return access
    }

    /// Fetches and stores one message's body. Returns false when Gmail no longer has it
    /// (it is then removed from the store, as sync would).
    public func hydrate(messageID: String, email: String) async throws -> Bool {
        let access = try access(email)
        if database == nil {
            database = SharedStore(try invocation.openStore(.readWrite))
        }
        let engine = SyncEngine(api: access.interactive, database: database!, account: email, onDemandAPI: access.interactive)
        return try await engine.hydrate(messageID: messageID)
    }

    /// The message's RFC 822 source, exactly as Gmail has it.
    public func raw(messageID: String, email: String) async throws -> [UInt8] {
        let message = try await access(email).interactive.getMessage(id: messageID, format: "raw")
        guard let raw = message.raw else { throw GmailError.invalidResponse("no raw message in the response") }
        return Base64.decode(raw)
    }

    /// An attachment's bytes: by its attachment id, or from the parsed source when Gmail
    /// delivered it inline.
    public func attachment(_ attachment: AttachmentInfo, messageID: String, email: String) async throws -> [UInt8] {
        if let id = attachment.attachmentID {
            let body = try await access(email).interactive.getAttachment(messageID: messageID, attachmentID: id)
            return Base64.decode(body.data ?? "")
        }
        let source = RFC822.parse(bytes: try await raw(messageID: messageID, email: email))
        guard let part = Self.part(source, id: attachment.partID) else {
            throw GmailError.invalidResponse("part \(attachment.partID) not in the message")
        }
        return part.decodedBody ?? []
    }

    static func part(_ root: MIMEPart, id: String) -> MIMEPart? {
        if root.partID == id { return root }
        for child in root.parts {
            if let found = part(child, id: id) { return found }
        }
        return nil
    }
}
