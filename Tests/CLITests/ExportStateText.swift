import Foundation
import SQLite

/// The state database an export's marker (`.hudson-export`, `hudson-export 2`) names: in
/// `STORE.exports/`, the store being a fixture's `data/hudson.sqlite3` in a directory
/// above the export. Nil for a marker that is not one (a text state, nothing).
func exportStateDatabasePath(_ markerPath: String) -> String? {
    guard let marker = try? String(contentsOfFile: markerPath, encoding: .utf8), marker.hasPrefix("hudson-export 2\n"),
          let line = marker.split(separator: "\n").first(where: { $0.hasPrefix("state ") }) else { return nil }
    let id = line.dropFirst(6)
    var directory = URL(fileURLWithPath: markerPath).deletingLastPathComponent()
    while directory.path != "/" {
        let candidate = directory.path + "/data/hudson.sqlite3.exports/" + id
        if FileManager.default.fileExists(atPath: candidate) { return candidate }
        directory.deleteLastPathComponent()
    }
    return nil
}

/// An export's state in its text form, whichever form it is kept in: the database a run
/// keeps beside the store (ExportStateDatabase: the text part, then an `M`/`K` line per
/// entry), or the earlier text in the export itself. Tests read what a run left as text,
/// and write text (the earlier form, which a run still reads) to give an export a state of
/// their choosing.
func exportStateText(_ markerPath: String) throws -> String {
    guard let path = exportStateDatabasePath(markerPath) else { return try String(contentsOfFile: markerPath, encoding: .utf8) }
    let db = try Connection(path: path, options: ConnectionOptions(access: .readOnly))
    var text = String(decoding: try db.first("SELECT text FROM state") { $0.blob(0) } ?? [], as: UTF8.self)
    try db.forEach("SELECT status, gmail_id, path FROM entries") { row in
        text += "\(row.string(0)) \(row.string(1)) \(row.string(2))\n"
    }
    return text
}
