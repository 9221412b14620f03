/*!
 The parts of composing that start from another message: `--reply-all`, `--forward`
 (inline, or `--forward-as-attachment`), `--quote`, and `--edit`, which opens the user's
 editor on the message before it is queued. What is taken from the original and how it is
 written is HudsonMail's `ReplyForward`; here the original is found (its text in the store
 when it is there, else its source from Gmail) and the options are checked.
 */
import Foundation
import HudsonCLI
import HudsonMail
import HudsonOutput
import HudsonStore

extension Composer {
    /// What a forward or a quote takes from the original.
    struct Original {
        var headers: OriginalHeaders
        /// Its readable text.
        var text: String
        /// Its source, exactly as Gmail has it: only a forward needs it (attachments).
        var raw: [UInt8]?
    }

    func checkCombinations(raw: Bool, reply: MessageDetail?, forward: MessageDetail?) throws {
        let given = { (option: String) in arguments.isGiven(option) }
        if raw, let option = ["reply-all", "forward", "forward-as-attachment", "quote", "edit"].first(where: given) {
            throw UsageError("--\(option) composes a message; it cannot be used with a complete message on standard input")
        }
        if reply != nil && forward != nil { throw UsageError("--reply-to and --forward cannot be used together") }
        if given("reply-all") && reply == nil { throw UsageError("--reply-all needs --reply-to REF") }
        if given("quote") && reply == nil { throw UsageError("--quote needs --reply-to REF") }
        if given("forward-as-attachment") && forward == nil { throw UsageError("--forward-as-attachment needs --forward REF") }
    }

    /// The original of `--forward` (its source, from Gmail) or of `--reply-to --quote` (its
    /// text from the store, else from its source); nil when neither is asked for.
    func original(reply: MessageDetail?, forward: MessageDetail?, account: Account) async throws -> Original? {
        if let forward {
            let raw = try await OnDemand(invocation: invocation).raw(messageID: forward.messageID, email: account.email)
            return Original(headers: ReplyForward.headers(ofRaw: raw), text: ReplyForward.readableText(ofRaw: raw), raw: raw)
        }
        guard let reply, arguments.flag("quote") else { return nil }
        if let text = reply.body?.text {
            return Original(headers: Self.originalHeaders(reply), text: text, raw: nil)
        }
        let raw = try await OnDemand(invocation: invocation).raw(messageID: reply.messageID, email: account.email)
        return Original(headers: Self.originalHeaders(reply), text: ReplyForward.readableText(ofRaw: raw), raw: nil)
    }

    static func originalHeaders(_ message: MessageDetail) -> OriginalHeaders {
        let headers = message.headers
        return OriginalHeaders(from: headers.from ?? "", to: headers.to ?? "", cc: headers.cc ?? "", replyTo: headers.replyTo ?? "",
                               subject: headers.subject ?? "", date: headers.date ?? "")
    }

    /// `--edit`: the message in the user's editor; what was saved, or an error when the
    /// file was left empty or unchanged (nothing is sent).
    func edit(_ message: EditableMessage) throws -> EditableMessage {
        let template = EditTemplate.render(message)
        let saved = try Editor.edit(template, invocation: invocation)
        do {
            guard let edited = try EditTemplate.parse(saved, template: template) else {
                throw CommandFailure(.dataError, "cancelled: the message was left empty or unchanged; nothing sent")
            }
            return edited
        } catch let error as EditTemplateError {
            throw CommandFailure(.dataError, "the edited message: \(error); nothing sent")
        }
    }

    /// An address list typed in the editor, read by the strict outgoing rule (65).
    static func addresses(_ text: String, _ header: String) throws -> [MailAddress] {
        do { return try OutgoingAddresses.parse(text) } catch {
            throw CommandFailure(.dataError, "the edited message: \(header) \"\(TerminalSafety.quoted(text))\": \(error); nothing sent")
        }
    }

    /// The Subject typed in the editor: no control character (65).
    static func editedSubject(_ text: String) throws -> String {
        do { try OutgoingHeaderBlock.checkText(text) } catch {
            throw CommandFailure(.dataError, "the edited message: Subject \"\(TerminalSafety.quoted(text))\": \(error); nothing sent")
        }
        return text
    }

    /// Addresses as the editor shows them: a name with specials is quoted, so that the
    /// list reads back the same.
    static func list(_ addresses: [MailAddress]) -> String {
        addresses.map { address in
            guard !address.name.isEmpty else { return address.address }
            let specials = "()<>[]:;@\\,.\""
            guard address.name.contains(where: { specials.contains($0) }) else { return "\(address.name) <\(address.address)>" }
            let escaped = address.name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\" <\(address.address)>"
        }.joined(separator: ", ")
    }

    /// Each address once (the first), compared without case.
    static func once(_ addresses: [MailAddress]) -> [MailAddress] {
        var seen = Set<String>()
        return addresses.filter { seen.insert($0.address.lowercased()).inserted }
    }
}

/// What `--draft` or `--update-draft` asks for: a draft at all, the Gmail draft replaced
/// (its current message, when known), and the queued entry replaced (a draft saved offline).
struct DraftTarget {
    var isDraft: Bool
    var draftID: String?
    /// The draft's current message as the store knows it: what `--edit` starts from, and
    /// what the update is based on (the sender checks Gmail's draft still has it).
    var gmailID: String?
    var threadID: String?
    var accountID: Int64 = 0
    var replacing: Int64?
    /// The draft message a queued offline version (`replacing`) was based on, if any.
    var replacedBase: String?

    /// What the new version is based on, for the sender's check.
    var basedOn: String? { gmailID ?? replacedBase }
}

extension Composer {
    /// The draft `--update-draft` names, as the store knows it (nil with `--draft`), and
    /// whether the message is saved as a draft at all.
    func draftTarget() throws -> DraftTarget {
        guard let text = arguments.string("update-draft") else { return DraftTarget(isDraft: arguments.flag("draft")) }
        let account = try namedAccount() ?? store.accounts().first
        guard let account else { throw CommandFailure(.notAuthorized, "no accounts; run hd-auth login") }
        if text.hasPrefix("outbox:") {
            // A draft saved offline: replaced in the outbox while Gmail has not seen it.
            guard let number = Int64(text.dropFirst("outbox:".count)), let entry = try store.outboxEntry(id: number),
                  entry.accountID == account.id, entry.kind == .draft else {
                throw CommandFailure(.dataError, "--update-draft \(TerminalSafety.quoted(text)): no such draft in the outbox")
            }
            switch entry.state {
            case .sent:
                guard let id = entry.draftID, let gmailID = entry.gmailID else { break }
                let draft = try store.draft(id: id, accountID: account.id)
                return DraftTarget(isDraft: true, draftID: id, gmailID: draft?.gmailID ?? gmailID, threadID: draft?.threadID,
                                   accountID: account.id)
            case .queued where !entry.isClaimed:
                return DraftTarget(isDraft: true, draftID: entry.draftID, threadID: entry.threadID, accountID: account.id,
                                   replacing: entry.id, replacedBase: entry.draftBaseGmailID)
            default:
                break
            }
            throw CommandFailure(.dataError, "--update-draft \(entry.reference): being saved, or failed; run hd-sync, then update its draft:ID")
        }
        let id = try DraftsCommand.draftID(text)
        guard let draft = try store.draft(id: id, accountID: account.id) else {
            throw CommandFailure(.dataError, "draft:\(id): no such draft in the store (hd-sync brings drafts made elsewhere)")
        }
        return DraftTarget(isDraft: true, draftID: draft.draftID, gmailID: draft.gmailID, threadID: draft.threadID,
                           accountID: account.id)
    }

    /// The message a draft being updated replies to, so the new version keeps its
    /// In-Reply-To and References (and with them its thread).
    func draftParent(_ base: MessageDetail) -> MessageDetail? {
        let parents = RawMessage.messageIDs(in: base.headers.inReplyTo ?? "")
        guard let parent = parents.first else { return nil }
        guard let id = try? store.gmailID(messageIDHeader: parent, accountID: base.accountID) else { return nil }
        return try? store.messageDetails(.message(id), accountID: base.accountID).first
    }
}
