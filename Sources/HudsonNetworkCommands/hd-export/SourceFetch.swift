/*!
 What `hd-export` needs from Gmail: the RFC 822 sources the store does not keep, fetched
 in batches (`format=raw`, 5 quota units each, gmail-api.md §3) on the background lane —
 an export is bulk work, and a person's `hd-show` meanwhile goes first — and its progress
 line on a terminal.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import HudsonMail
import HudsonOutput

@MainActor
public final class SourceFetch {
    let invocation: Invocation
    let email: String
    private var access: GmailAccess?

    public init(invocation: Invocation, email: String) {
        self.invocation = invocation
        self.email = email
    }

    /// Sources by Gmail id, or the error each failed with (one message's failure is its own).
    /// Throws what fails for the whole account — no credentials, a token Gmail or Google
    /// refuses, a 403 that is not a rate limit (`GmailError.isAccountWide`) — and the
    /// network being down (every fetch failed so), so hd-export exits through the exit
    /// table (77, 75) rather than naming each message.
    public func sources(_ ids: [String]) async throws -> [String: Result<[UInt8], any Error>] {
        var answers: [String: Result<[UInt8], any Error>] = [:]
        if access == nil {
            access = try GmailAccess(email: email, configDirectory: try invocation.configDirectory(),
                                     endpoints: try GmailEndpoints(environment: invocation.environment), patience: .unattended)
        }
        let client = access!.background
        for start in stride(from: 0, to: ids.count, by: 100) {
            let chunk = Array(ids[start..<min(start + 100, ids.count)])
            let results = await client.getMessages(ids: chunk, format: "raw")
            for id in chunk {
                switch results[id] {
                case .success(let message)?:
                    answers[id] = Self.source(of: message, requested: id)
                case .failure(let error)?:
                    if error.isAccountWide { throw error }
                    answers[id] = .failure(error)
                case nil: answers[id] = .failure(GmailError.invalidResponse("Gmail's batch answer left it out"))
                }
            }
        }
        let transport = answers.values.compactMap { answer -> GmailError? in
            if case .failure(let error as GmailError) = answer, case .network = error.unwrapped { return error }
            return nil
        }
        if !ids.isEmpty, transport.count == ids.count, let first = transport.first { throw first }
        return answers
    }

    /// The source a `format=raw` answer carries, or why it cannot be one: an answer about
    /// another message (the id is the only thing that says whose source it is, gmail-api.md
    /// §2.3), or one without `raw`, or whose `raw` decodes to nothing.
    static func source(of message: GmailMessage, requested id: String) -> Result<[UInt8], any Error> {
        guard message.id == id else {
            return .failure(GmailError.invalidResponse("Gmail answered with another message's source"))
        }
        guard let raw = message.raw else { return .failure(GmailError.invalidResponse("no raw message in the response")) }
        let source = Base64.decode(raw)
        guard !source.isEmpty else { return .failure(GmailError.invalidResponse("an empty raw message in the response")) }
        return .success(source)
    }
}

/// "exported 1200 · fetched 300" drawn over itself on a terminal's standard error (nothing
/// in a pipe, a line per update with --verbose), like hd-sync's (ProgressLine).
public final class CountProgress {
    let enabled: Bool
    let verbose: Bool
    let command: String
    private var lastDraw = Date.distantPast
    private var shown = false

    public init(command: String, verbose: Bool) {
        self.command = command
        self.verbose = verbose && !Terminal.stderrIsTerminal
        self.enabled = Terminal.stderrIsTerminal || verbose
    }

    public func update(_ line: String) {
        guard enabled else { return }
        let now = Date()
        guard verbose || now.timeIntervalSince(lastDraw) >= 0.25 else { return }
        lastDraw = now
        if verbose {
            writeError("\(command): \(line)\n")
        } else {
            shown = true
            writeTerminalControl("\r\u{1B}[K" + TerminalSafety.field(line))
        }
    }

    public func finish() {
        if shown { writeTerminalControl("\r\u{1B}[K") }
        shown = false
    }
}
