/*!
 What `hd-show` needs from Gmail, fetched by `hd-sync --fetch` in a child process, so
 that `hd-show` links no network code and starts like the read commands when everything
 asked for is stored (docs/performance.md). The child runs the same pipeline `hd-show`
 ran itself before (HudsonNetworkCommands' OnDemand: hydration into the store, the raw
 source, attachments, on the interactive quota lane) and answers on its standard output,
 one answer per item (HudsonNetworkCommands/hd-sync/FetchService.swift writes them):

     stored | deleted                      a body, now in the store / gone from Gmail
     bytes N, a newline, then N bytes      a raw source or an attachment
     failed STATUS<TAB>MESSAGE<TAB>TEXT    the exit status and message the error means,
                                           and the error's own text
 */
import Glibc
import HudsonStore

public final class FetchHelper {
    let invocation: Invocation

    public init(invocation: Invocation) {
        self.invocation = invocation
    }

    /// An error the helper reported: `description` is the error's own text (what a
    /// warning quotes); `status` and `message` what exiting on it means.
    public struct Failure: Error, CustomStringConvertible {
        public var status: ExitStatus
        public var message: String
        public var description: String
    }

    /// Fetches and stores these bodies in one child process. For each message id: true
    /// when stored, false when Gmail no longer has the message (it is then removed from
    /// the store, as sync would), or the failure.
    public func hydrate(_ messages: [(messageID: String, email: String)]) -> [String: Result<Bool, Failure>] {
        guard !messages.isEmpty else { return [:] }
        var answers = Answers(run(messages.map { "body:\($0.messageID):\($0.email)" }))
        var outcomes: [String: Result<Bool, Failure>] = [:]
        for message in messages {
            switch answers.next() {
            case .stored: outcomes[message.messageID] = .success(true)
            case .deleted: outcomes[message.messageID] = .success(false)
            case .failed(let failure): outcomes[message.messageID] = .failure(failure)
            case .bytes: outcomes[message.messageID] = .failure(Answers.garbled)
            }
        }
        return outcomes
    }

    /// The message's RFC 822 source, exactly as Gmail has it.
    public func raw(messageID: String, email: String) throws -> [UInt8] {
        try bytes("raw:\(messageID):\(email)")
    }

    /// An attachment's bytes: by its attachment id, or from the source when Gmail
    /// delivered it inline.
    public func attachment(_ attachment: AttachmentInfo, messageID: String, email: String) throws -> [UInt8] {
        try bytes("attachment:\(messageID):\(attachment.partID):\(attachment.attachmentID ?? ""):\(email)")
    }

    func bytes(_ item: String) throws -> [UInt8] {
        var answers = Answers(run([item]))
        switch answers.next() {
        case .bytes(let bytes): return bytes
        case .failed(let failure): throw CommandFailure(failure.status, failure.message)
        case .stored, .deleted: throw CommandFailure(Answers.garbled.status, Answers.garbled.message)
        }
    }

    /// The child's whole standard output and how it ended, or nil when it could not be run.
    func run(_ items: [String]) -> (output: [UInt8], status: Int32?)? {
        var arguments: [String] = []
        if let path = try? invocation.storePath() { arguments += ["--db", path] }
        for item in items { arguments += ["--fetch", item] }
        return SiblingCommand.output("hd-sync", arguments: arguments)
    }

    /// The answers in the child's output, in order; a missing or garbled one is a failure.
    struct Answers {
        enum Answer { case stored, deleted, bytes([UInt8]), failed(Failure) }

        static let notRun = Failure(status: .configuration, message: "hd-sync --fetch could not be run (it is installed beside hd-show)",
                                    description: "hd-sync could not be run")
        static let garbled = Failure(status: .temporaryFailure, message: "hd-sync --fetch ended without an answer",
                                     description: "hd-sync --fetch ended without an answer")

        let output: [UInt8]?
        /// The child's exit status, nil when a signal ended it.
        let status: Int32?
        var position = 0

        init(_ run: (output: [UInt8], status: Int32?)?) {
            self.output = run?.output
            self.status = run?.status
        }

        /// No answer where one was due: the child's exit status says why, when it is one of
        /// the contract's failures (its own one-line error is already on standard error).
        static let mismatched = Failure(status: .configuration, message: "the hd-sync installed beside hd-show does not know --fetch; install matching versions",
                                        description: "hd-sync --fetch is not known")
        /// The longest message or description taken from the child's answer.
        static let messageLimit = 300

        var ended: Failure {
            switch status.flatMap(ExitStatus.init(rawValue:)) {
            case .some(.usage):
                return Self.mismatched
            case .some(let code) where code.rawValue >= ExitStatus.dataError.rawValue:
                return Failure(status: code, message: "hd-sync --fetch failed (exit status \(code.rawValue))",
                               description: "hd-sync --fetch failed (exit status \(code.rawValue))")
            default:
                return Self.garbled
            }
        }

        mutating func next() -> Answer {
            guard let output else { return .failed(Self.notRun) }
            guard let newline = output[position...].firstIndex(of: UInt8(ascii: "\n")) else { return .failed(ended) }
            let line = String(decoding: output[position..<newline], as: UTF8.self)
            position = newline + 1
            if line == "stored" { return .stored }
            if line == "deleted" { return .deleted }
            if line.hasPrefix("bytes "), let count = Int(line.dropFirst(6)), count >= 0, count <= output.count - position {
                defer { position += count }
                return .bytes(Array(output[position..<position + count]))
            }
            if line.hasPrefix("failed ") {
                let fields = line.dropFirst(7).split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
                if fields.count == 3, let code = Int32(fields[0]), let status = ExitStatus(rawValue: code) {
                    // Only the contract's failures are an answer: a "failure" of status 0, 1
                    // or 2 would pass for success, and the child's usage error (64) is not
                    // hd-show's (it means a mismatched hd-sync, as `ended` says).
                    if status == .usage { return .failed(Self.mismatched) }
                    guard status.rawValue >= ExitStatus.dataError.rawValue else {
                        position = output.count
                        return .failed(Self.garbled)
                    }
                    // Bounded, as every diagnostic is: the line comes from another process.
                    return .failed(Failure(status: status, message: String(fields[1].prefix(Self.messageLimit)),
                                           description: String(fields[2].prefix(Self.messageLimit))))
                }
            }
            position = output.count
            return .failed(Self.garbled)
        }
    }
}
