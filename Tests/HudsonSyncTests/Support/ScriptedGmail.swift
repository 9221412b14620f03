// An in-process Gmail for the sync engine's tests (sync-engine-reference.md: "The seam
// that lets tests script a server instead of mocking HTTP"). It keeps a mailbox and a
// history log with the semantics of gmail-api.md: one mailbox-wide history counter,
// records after startHistoryId in order, the current historyId on every page, 404 for an
// expired cursor, newest-first listing with after:/before: in epoch seconds, `rfc822msgid:`
// search, and `send`, which stores the message labelled SENT with a messageAdded record.
// Tests change it "on another device", inject failures before any call (or, for a send,
// after it took effect: a lost answer), and read the call log.
import Foundation
import HudsonGmail
import Synchronization

final class ScriptedGmail: GmailAPI {
    struct Mail: Sendable {
        var id: String
        var threadID: String
        var labels: Set<String>
        var historyID: UInt64
        var internalDate: Int64
        var subject: String
        var from: String
        var body: String
        var snippet: String
        /// Served without a threadId (a message the engine cannot map).
        var malformed = false
        /// The Message-ID header; `<id@example.org>` when nil.
        var messageIDHeader: String? = nil
    }

    enum Call: Sendable, Equatable {
        case getProfile
        case listMessages(pageToken: String?, query: String?)
        case getMessage(id: String, format: String)
        case listHistory(start: String, pageToken: String?)
        case listLabels
        case modify(id: String, add: [String], remove: [String])
        case batchModify(ids: [String], add: [String], remove: [String])
        case send(threadID: String?)
    }

    struct State {
        var mailbox: [String: Mail] = [:]
        var historyID: UInt64 = 100_000
        var records: [HistoryRecord] = []
        var oldestHistory: UInt64 = 0
        var calls: [Call] = []
        var sentCount = 0
        var labels: [GmailLabel] = [
            GmailLabel(id: "INBOX", name: "INBOX", type: "system"), GmailLabel(id: "UNREAD", name: "UNREAD", type: "system"),
            GmailLabel(id: "STARRED", name: "STARRED", type: "system"), GmailLabel(id: "SENT", name: "SENT", type: "system"),
            GmailLabel(id: "CATEGORY_PROMOTIONS", name: "CATEGORY_PROMOTIONS", type: "system"),
            GmailLabel(id: "Label_1", name: "Work", type: "user"),
        ]
    }

    let state = Mutex(State())
    let historyPageSize: Int
    /// Runs before every call; throw to fail it, or change the mailbox meanwhile.
    let hook = Mutex<(@Sendable (Call) async throws -> Void)?>(nil)
    /// Runs after a send has stored its message, before the answer: throw to lose the answer.
    let afterSendHook = Mutex<(@Sendable () async throws -> Void)?>(nil)
    /// Rewrites each history page before it is answered (a malformed field, say).
    let historyPageHook = Mutex<(@Sendable (HistoryPage) -> HistoryPage)?>(nil)
    /// Rewrites each getProfile answer.
    let profileHook = Mutex<(@Sendable (Profile) throws -> Profile)?>(nil)
    /// Runs after a modify or batchModify took effect, before the answer: throw to lose it.
    let afterModifyHook = Mutex<(@Sendable () async throws -> Void)?>(nil)
    /// Search's index lags: `rfc822msgid:` finds nothing (gmail-api.md §4: search may not
    /// show a message the moment it is stored).
    let searchLags = Mutex(false)
    /// When set, every getMessages batch fails as a whole with it (`.batchFailed`).
    let batchFailure = Mutex<GmailError?>(nil)

    init(historyPageSize: Int = 100) {
        self.historyPageSize = historyPageSize
    }

    // MARK: - The server side

    /// Adds a message as if it had arrived before the test began (no history record).
    func seed(_ id: String, thread: String? = nil, daysAgo: Double, labels: Set<String> = ["INBOX", "UNREAD"],
              subject: String = "Subject", body: String = "Body text", now: Int64 = ScriptedGmail.now) {
        state.withLock {
            $0.mailbox[id] = Mail(id: id, threadID: thread ?? id, labels: labels, historyID: $0.historyID,
                                  internalDate: now - Int64(daysAgo * 86_400_000), subject: subject,
                                  from: "Bob <bob@example.org>", body: body, snippet: String(body.prefix(30)))
        }
    }

    /// New mail arriving: a messageAdded record.
    func deliver(_ id: String, thread: String? = nil, labels: Set<String> = ["INBOX", "UNREAD"], subject: String = "New") {
        state.withLock { state in
            state.historyID += 1
            let mail = Mail(id: id, threadID: thread ?? id, labels: labels, historyID: state.historyID,
                            internalDate: ScriptedGmail.now, subject: subject, from: "Carol <carol@example.org>",
                            body: "fresh", snippet: "fresh")
            state.mailbox[id] = mail
            state.records.append(HistoryRecord(
                id: String(state.historyID), messagesAdded: [HistoryMessageChange(message: Self.ref(mail))]))
        }
    }

    /// A change made on another device: labelAdded/labelRemoved records.
    @discardableResult
    func change(_ id: String, add: [String] = [], remove: [String] = []) -> UInt64 {
        state.withLock { state in Self.apply(&state, id: id, add: add, remove: remove) }
    }

    func delete(_ id: String) {
        state.withLock { state in
            guard let mail = state.mailbox.removeValue(forKey: id) else { return }
            state.historyID += 1
            state.records.append(HistoryRecord(
                id: String(state.historyID), messagesDeleted: [HistoryMessageChange(message: Self.ref(mail))]))
        }
    }

    /// History before now ages out: listHistory from an older start is a 404.
    func expireHistory() {
        state.withLock { $0.oldestHistory = $0.historyID }
    }

    func labels(of id: String) -> Set<String>? { state.withLock { $0.mailbox[id]?.labels } }
    var calls: [Call] { state.withLock { $0.calls } }
    var currentHistoryID: UInt64 { state.withLock { $0.historyID } }
    func resetCalls() { state.withLock { $0.calls = [] } }
    func setHook(_ body: (@Sendable (Call) async throws -> Void)?) { hook.withLock { $0 = body } }
    func setAfterSendHook(_ body: (@Sendable () async throws -> Void)?) { afterSendHook.withLock { $0 = body } }
    /// How many stored messages carry this Message-ID (what "sent twice" would show).
    func copies(of messageID: String) -> Int {
        state.withLock { $0.mailbox.values.filter { $0.messageIDHeader == messageID }.count }
    }
    var sendCalls: Int { calls.filter { if case .send = $0 { return true }; return false }.count }

    static let now: Int64 = 1_767_225_600_000  // 2026-01-01, the tests' "now"

    private static func apply(_ state: inout State, id: String, add: [String], remove: [String]) -> UInt64 {
        guard var mail = state.mailbox[id] else { return state.historyID }
        let added = add.filter { !mail.labels.contains($0) }
        let removed = remove.filter { mail.labels.contains($0) }
        guard !added.isEmpty || !removed.isEmpty else { return state.historyID }
        mail.labels.formUnion(added)
        mail.labels.subtract(removed)
        if !added.isEmpty {
            state.historyID += 1
            state.records.append(HistoryRecord(id: String(state.historyID),
                                               labelsAdded: [HistoryLabelChange(message: ref(mail), labelIds: added)]))
        }
        if !removed.isEmpty {
            state.historyID += 1
            state.records.append(HistoryRecord(id: String(state.historyID),
                                               labelsRemoved: [HistoryLabelChange(message: ref(mail), labelIds: removed)]))
        }
        mail.historyID = state.historyID
        state.mailbox[id] = mail
        return state.historyID
    }

    private static func ref(_ mail: Mail) -> GmailMessage {
        GmailMessage(id: mail.id, threadId: mail.threadID)
    }

    private func record(_ call: Call) async throws {
        state.withLock { $0.calls.append(call) }
        if let hook = hook.withLock({ $0 }) { try await hook(call) }
    }

    // MARK: - GmailAPI

    func getProfile() async throws -> Profile {
        try await record(.getProfile)
        let profile = state.withLock { Profile(emailAddress: "ann@example.com", historyId: String($0.historyID)) }
        return try profileHook.withLock { $0 }?(profile) ?? profile
    }

    func listMessages(pageToken: String?, maxResults: Int, query: String?) async throws -> MessageListPage {
        try await record(.listMessages(pageToken: pageToken, query: query))
        var after: Int64?
        var before: Int64?
        var messageID: String?
        for term in (query ?? "").split(separator: " ") {
            if term.hasPrefix("after:") { after = Int64(term.dropFirst(6)).map { $0 * 1000 } }
            if term.hasPrefix("before:") { before = Int64(term.dropFirst(7)).map { $0 * 1000 } }
            if term.hasPrefix("rfc822msgid:") { messageID = String(term.dropFirst(12)) }
        }
        let all = state.withLock { state in
            state.mailbox.values
                .filter { mail in (after.map { mail.internalDate >= $0 } ?? true) && (before.map { mail.internalDate < $0 } ?? true) }
                .filter { mail in messageID.map { !searchLags.withLock { $0 } && mail.messageIDHeader == $0 } ?? true }
                .sorted { ($0.internalDate, $0.id) > ($1.internalDate, $1.id) }
        }
        let start = Int(pageToken ?? "0") ?? 0
        let page = all.dropFirst(start).prefix(maxResults)
        let next = start + page.count < all.count ? String(start + page.count) : nil
        return MessageListPage(messages: page.map { MessageRef(id: $0.id, threadId: $0.threadID) },
                               nextPageToken: next, resultSizeEstimate: all.count)
    }

    func getMessage(id: String, format: String) async throws -> GmailMessage {
        try await record(.getMessage(id: id, format: format))
        guard let mail = state.withLock({ $0.mailbox[id] }) else { throw GmailError.notFound }
        return Self.message(mail, format: format)
    }

    static func message(_ mail: Mail, format: String) -> GmailMessage {
        var headers = [
            MessagePartHeader(name: "Subject", value: mail.subject), MessagePartHeader(name: "From", value: mail.from),
            MessagePartHeader(name: "To", value: "Ann <ann@example.com>"),
            MessagePartHeader(name: "Message-ID", value: mail.messageIDHeader ?? "<\(mail.id)@example.org>"),
        ]
        var payload: MessagePart?
        if format == "metadata" {
            payload = MessagePart(partId: "", mimeType: "text/plain", headers: headers)
        } else if format == "full" {
            headers.append(MessagePartHeader(name: "Content-Type", value: "text/plain; charset=UTF-8"))
            payload = MessagePart(partId: "", mimeType: "text/plain", headers: headers,
                                  body: MessagePartBody(size: mail.body.utf8.count, data: base64URL(Array(mail.body.utf8))))
        }
        var raw: String?
        if format == "raw" {
            let text = headers.map { "\($0.name): \($0.value)\r\n" }.joined()
                + "Content-Type: text/plain; charset=UTF-8\r\n\r\n" + mail.body
            raw = base64URL(Array(text.utf8))
        }
        return GmailMessage(id: mail.id, threadId: mail.malformed ? nil : mail.threadID, labelIds: mail.labels.sorted(),
                            snippet: mail.snippet, historyId: String(mail.historyID),
                            internalDate: String(mail.internalDate), sizeEstimate: 100 + mail.body.utf8.count, payload: payload,
                            raw: raw)
    }

    func listHistory(startHistoryID: String, pageToken: String?, labelID: String?) async throws -> HistoryPage {
        try await record(.listHistory(start: startHistoryID, pageToken: pageToken))
        guard let start = UInt64(startHistoryID) else { throw GmailError.badRequest(message: "Missing/invalid parameter: startHistoryId") }
        return try state.withLock { state in
            if start < state.oldestHistory { throw GmailError.notFound }
            // labelId: only records about messages carrying the label (gmail-api.md §2.9).
            let all = state.records.filter { record in
                guard (record.idValue ?? 0) > start else { return false }
                guard let labelID else { return true }
                let ids = record.messagesAdded.compactMap { $0.message?.id } + record.labelsAdded.compactMap { $0.message?.id }
                    + record.labelsRemoved.compactMap { $0.message?.id }
                return ids.contains { state.mailbox[$0]?.labels.contains(labelID) == true }
            }
            let offset = Int(pageToken ?? "0") ?? 0
            let page = Array(all.dropFirst(offset).prefix(historyPageSize))
            let next = offset + page.count < all.count ? String(offset + page.count) : nil
            // The current mailbox history id on every page (gmail-api.md §2.9).
            let answer = HistoryPage(history: page, nextPageToken: next, historyId: String(state.historyID))
            return historyPageHook.withLock { $0 }?(answer) ?? answer
        }
    }

    func listLabels() async throws -> [GmailLabel] {
        try await record(.listLabels)
        return state.withLock { $0.labels }
    }

    func modify(id: String, addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        try await record(.modify(id: id, add: addLabelIDs, remove: removeLabelIDs))
        try state.withLock { state in
            guard state.mailbox[id] != nil else { throw GmailError.notFound }
            for label in addLabelIDs where !state.labels.contains(where: { $0.id == label }) {
                throw GmailError.badRequest(message: "Invalid label: \(label)")
            }
            _ = Self.apply(&state, id: id, add: addLabelIDs, remove: removeLabelIDs)
        }
        if let after = afterModifyHook.withLock({ $0 }) { try await after() }
    }

    func batchModify(ids: [String], addLabelIDs: [String], removeLabelIDs: [String]) async throws {
        try await record(.batchModify(ids: ids, add: addLabelIDs, remove: removeLabelIDs))
        try state.withLock { state in
            for label in addLabelIDs where !state.labels.contains(where: { $0.id == label }) {
                throw GmailError.badRequest(message: "Invalid label: \(label)")
            }
            for id in ids { _ = Self.apply(&state, id: id, add: addLabelIDs, remove: removeLabelIDs) }
        }
        if let after = afterModifyHook.withLock({ $0 }) { try await after() }
    }

    func getMessages(ids: [String], format: String) async -> [String: Result<GmailMessage, GmailError>] {
        var results: [String: Result<GmailMessage, GmailError>] = [:]
        if let failure = batchFailure.withLock({ $0 }) {
            for id in ids { results[id] = .failure(.batchFailed(failure)) }
            return results
        }
        for id in ids {
            do {
                results[id] = .success(try await getMessage(id: id, format: format))
            } catch let error as GmailError {
                results[id] = .failure(error)
            } catch {
                results[id] = .failure(.network(String(describing: error)))
            }
        }
        return results
    }

    func getAttachment(messageID: String, attachmentID: String) async throws -> AttachmentBody {
        throw GmailError.notFound
    }

    /// Stores the message labelled SENT with a messageAdded record; it joins `threadID` when
    /// that thread exists (the fake's simplification of gmail-api.md §2.7).
    func send(raw: [UInt8], threadID: String?) async throws -> GmailMessage {
        try await record(.send(threadID: threadID))
        let text = String(decoding: raw, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        func header(_ name: String) -> String? {
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
        let mail = state.withLock { state in
            state.sentCount += 1
            state.historyID += 1
            let id = "sent\(state.sentCount)"
            let thread = threadID.flatMap { wanted in state.mailbox.values.contains { $0.threadID == wanted } ? wanted : nil } ?? id
            let mail = Mail(id: id, threadID: thread, labels: ["SENT"], historyID: state.historyID, internalDate: ScriptedGmail.now,
                            subject: header("Subject") ?? "", from: header("From") ?? "", body: "sent", snippet: "sent",
                            messageIDHeader: header("Message-ID"))
            state.mailbox[id] = mail
            state.records.append(HistoryRecord(
                id: String(state.historyID), messagesAdded: [HistoryMessageChange(message: Self.ref(mail))]))
            return mail
        }
        if let after = afterSendHook.withLock({ $0 }) { try await after() }
        return GmailMessage(id: mail.id, threadId: mail.threadID, labelIds: ["SENT"])
    }

    func createLabel(name: String) async throws -> GmailLabel {
        throw GmailError.badRequest(message: "not scripted")
    }

    func createLabel(name: String, color: LabelColor?) async throws -> GmailLabel {
        throw GmailError.badRequest(message: "not scripted")
    }

    func patchLabel(id: String, name: String?, color: LabelColor?) async throws -> GmailLabel {
        throw GmailError.badRequest(message: "not scripted")
    }

    func deleteLabel(id: String) async throws {
        throw GmailError.badRequest(message: "not scripted")
    }
}

/// Base64url without padding, as Gmail sends body data.
func base64URL(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var output = ""
    var index = 0
    while index < bytes.count {
        let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
        let value = (UInt32(chunk[0]) << 16) | (UInt32(chunk.count > 1 ? chunk[1] : 0) << 8) | UInt32(chunk.count > 2 ? chunk[2] : 0)
        for position in 0..<(chunk.count + 1) {
            output.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)])
        }
        index += 3
    }
    return output
}
