/*!
 The `import` record of `hd-import --json` (docs/json.md): one per message read, named by
 where it came from, with what became of it.
 */
import HudsonCLI
import HudsonOutput

extension Records {
    /// `ORIGIN  status  message:ID  <Message-ID>  error`
    public static func importRecord(origin: String, status: String, messageID: String?, gmailID: String?,
                                    labels: [String], error: String?) -> Record {
        Record(
            type: "import", id: origin,
            fields: [
                ("status", .string(status)),
                ("message", gmailID.map { .string("message:\($0)") } ?? .null),
                ("rfc822_message_id", messageID.map { .string($0) } ?? .null),
                ("labels", .array(labels.map { .string($0) })),
                ("error", error.map { .string($0) } ?? .null),
            ],
            columns: [status, gmailID.map { "message:\($0)" } ?? "", messageID ?? "", error ?? ""])
    }
}
