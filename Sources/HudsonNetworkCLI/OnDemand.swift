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
    private var database: HudsonDatabase?

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
            database = HudsonDatabase(try invocation.openStore(.readWrite))
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

/// mboxrd: messages separated by "From " lines, body lines that start with ">*From "
/// quoted with one more ">" (so the format can be read back exactly).
public enum Mbox {
    public static func entry(_ raw: [UInt8], sender: String, date: Int64) -> [UInt8] {
        // On bytes, not text: an 8-bit body in another charset must come out as it went in.
        var lines: [ArraySlice<UInt8>] = raw.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        while let last = lines.last, last.isEmpty || last == [UInt8(ascii: "\r")] { lines.removeLast() }
        var output = Array("From \(sender.isEmpty ? "MAILER-DAEMON" : sender) \(asctime(date))\n".utf8)
        let from = Array("From ".utf8)
        for var line in lines {
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }  // mbox lines end in LF
            var probe = line[...]
            while probe.first == UInt8(ascii: ">") { probe = probe.dropFirst() }
            if probe.starts(with: from) { output.append(UInt8(ascii: ">")) }
            output += line
            output.append(UInt8(ascii: "\n"))
        }
        output.append(UInt8(ascii: "\n"))
        return output
    }

    /// `Thu Jan  1 00:00:00 1970`, in UTC.
    static func asctime(_ milliseconds: Int64) -> String {
        var time = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a %b %e %H:%M:%S %Y", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
