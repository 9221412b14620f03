// hudson-bench-import: builds a store from Gmail-API NDJSON (mkcorpus.py --gmail-ndjson)
// without the network, for benchmark sizes the fake Gmail cannot serve (a million
// messages would need ~10 GB of memory in the fake). Bench-only: not installed, not a
// user command. Every message goes through the same mapping (SnapshotMapping,
// BodyMapping) and the same store writes a catch-up uses (Store.applyHydrations, in
// transactions of 500, a savepoint each), then the same full-text merge.
//
//   hudson-bench-import STORE NDJSON LABELS_JSON EMAIL
import Foundation
import HudsonGmail
import HudsonStore
import HudsonSync

struct LabelList: Decodable { var labels: [GmailLabel] }

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: hudson-bench-import STORE NDJSON LABELS_JSON EMAIL\n".utf8))
    exit(64)
}
let (storePath, ndjsonPath, labelsPath, email) = (arguments[1], arguments[2], arguments[3], arguments[4])

let store = try Store.open(path: storePath, access: .create, cacheKiB: 64 * 1024)
let account = try store.account(email: email) ?? store.addAccount(email: email, consentedAt: Int64(Date().timeIntervalSince1970), lookbackDays: 0)
let listed = try JSONDecoder().decode(LabelList.self, from: Data(contentsOf: URL(fileURLWithPath: labelsPath))).labels
try store.replaceLabels(accountID: account.id, with: listed.map {
    LabelInfo(id: $0.id, name: $0.name, kind: $0.type.flatMap(LabelInfo.Kind.init(rawValue:)))
})
try store.setBulkIndexing(true)

guard let input = fopen(ndjsonPath, "r") else {
    FileHandle.standardError.write(Data("hudson-bench-import: \(ndjsonPath): cannot open\n".utf8))
    exit(66)
}
let decoder = JSONDecoder()
var batch: [Hydration] = []
var total = 0
let started = Date()
@MainActor func flush() throws {
    guard !batch.isEmpty else { return }
    let report = try store.applyHydrations(batch, accountID: account.id)
    total += report.saved.count
    batch.removeAll(keepingCapacity: true)
    if total % 50_000 < 500 {
        FileHandle.standardError.write(Data("hudson-bench-import: \(total) messages, \(Int(Double(total) / Date().timeIntervalSince(started)))/s\n".utf8))
    }
}
var line: UnsafeMutablePointer<CChar>?
var capacity = 0
while getline(&line, &capacity, input) > 0 {
    let message = try decoder.decode(GmailMessage.self, from: Data(bytes: line!, count: strlen(line!)))
    batch.append(Hydration(gmailID: message.id, snapshot: SnapshotMapping.snapshot(from: message), body: BodyMapping.body(from: message)))
    if batch.count == 500 { try flush() }
}
try flush()
try store.setBulkIndexing(false)
while try store.mergeFullTextStep() {}
print("hudson-bench-import: \(total) messages in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
