/*!
 Records of `hd-address` (issue 42): one address with its name and how much mail went
 each way (docs/json.md `address`), and the same as a line of mutt's `query_command`
 format (`address<TAB>name<TAB>info`, mutt's manual, "External Address Queries").
 */
import HudsonCLI
import HudsonOutput
import HudsonStore

extension Records {
    /// `alice@example.org  Alice  sent 3  received 12  2026-11-30`
    public static func address(_ entry: AddressEntry) -> Record {
        Record(
            type: "address", id: entry.address,
            fields: [
                ("name", entry.name.map { .string($0) } ?? .null),
                ("sent", .int(Int64(entry.sent))),
                ("received", .int(Int64(entry.received))),
                ("last_seen", .string(DateText.rfc3339UTC(milliseconds: entry.lastAt))),
            ],
            columns: [entry.name ?? "", "sent \(entry.sent)", "received \(entry.received)",
                      String(DateText.rfc3339UTC(milliseconds: entry.lastAt).prefix(10))])
    }

    /// One line of mutt's query format; each field is one line without TAB or anything a
    /// terminal would act on, so a name from mail can neither add a field nor a line.
    public static func muttQueryLine(_ entry: AddressEntry) -> String {
        let info = "sent \(entry.sent), received \(entry.received)"
        return [entry.address, entry.name ?? "", info].map(TerminalSafety.field).joined(separator: "\t") + "\n"
    }
}
