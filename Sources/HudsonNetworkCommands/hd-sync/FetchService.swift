/*!
 `hd-sync --fetch ITEM...`: what `hd-show` asks of Gmail when the store does not have
 it (HudsonCLI/FetchHelper.swift reads the answers). Items, answered in order on
 standard output:

     body:ID:EMAIL                        fetch and store the body: stored | deleted
     raw:ID:EMAIL                         the RFC 822 source: bytes N, then the bytes
     attachment:ID:PART:ATTACHMENT:EMAIL  an attachment's bytes (ATTACHMENT may be empty)

 An item that fails is answered `failed STATUS<TAB>MESSAGE<TAB>TEXT` and the rest still
 run, so `hd-show` decides, as before, which failures are notes and which end it.
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

public enum FetchService {
    @MainActor
    public static func serve(_ cli: Invocation, items: [String]) async throws -> ExitStatus {
        // Once hd-show is gone (killed), nobody reads the answers: the work still waiting is
        // cancelled rather than left to spend the user's quota (ReaderWatch).
        let work = Task { @MainActor in try await answer(items, cli) }
        let watch = ReaderWatch.start(descriptor: 1) { work.cancel() }
        defer { watch?.stop() }
        return try await work.value
    }

    @MainActor
    static func answer(_ items: [String], _ cli: Invocation) async throws -> ExitStatus {
        let fetch = OnDemand(invocation: cli)
        for item in items {
            if Task.isCancelled { return .success }
            let fields = item.split(separator: ":", maxSplits: 1).map(String.init)
            guard fields.count == 2 else { throw UsageError("--fetch \(item): not KIND:ID:EMAIL") }
            var rest = fields[1]
            func take() -> String {
                let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                rest = parts.count == 2 ? String(parts[1]) : ""
                return String(parts.first ?? "")
            }
            let messageID = take()
            do {
                switch fields[0] {
                case "body":
                    try cli.stdout.write(try await fetch.hydrate(messageID: messageID, email: rest) ? "stored\n" : "deleted\n")
                case "raw":
                    try answer(try await fetch.raw(messageID: messageID, email: rest), cli)
                case "attachment":
                    let partID = take(), attachmentID = take()
                    let info = AttachmentInfo(partID: partID, filename: "", mimeType: "", size: 0,
                                              attachmentID: attachmentID.isEmpty ? nil : attachmentID, contentID: nil, isInline: false)
                    try answer(try await fetch.attachment(info, messageID: messageID, email: rest), cli)
                default:
                    throw UsageError("--fetch \(item): KIND is body, raw or attachment")
                }
            } catch let error as UsageError {
                throw error
            } catch is OutputClosed {
                return .success
            } catch is CancellationError where Task.isCancelled {
                return .success
            } catch {
                let classified = NetworkExit.classify(error) ?? Exit.classify(error, debug: cli.debug)
                try cli.stdout.write("failed \(classified.status.rawValue)\t\(oneField(classified.message))\t\(oneField(String(describing: error)))\n")
            }
        }
        return .success
    }

    static func answer(_ bytes: [UInt8], _ cli: Invocation) throws {
        try cli.stdout.write("bytes \(bytes.count)\n")
        try cli.stdout.write(bytes: bytes)
    }

    /// The text on one line with no tab, as a field of a `failed` answer.
    static func oneField(_ text: String) -> String {
        String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
