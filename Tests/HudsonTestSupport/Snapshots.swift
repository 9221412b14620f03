// Golden files, after swift-argument-parser's assertSnapshot: the expected text lives in
// a Snapshots/ directory beside the test file. A missing snapshot is recorded and the
// test fails, so it gets reviewed and committed; HUDSON_RECORD_SNAPSHOTS=1 re-records.
import Foundation

public enum Snapshot {
    /// Compares `actual` with Snapshots/`name`.txt next to `filePath`; returns a failure
    /// message, or nil when they agree.
    public static func check(_ actual: String, named name: String, filePath: String) -> String? {
        let directory = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
        let file = directory.appendingPathComponent(name + ".txt")
        let record = ProcessInfo.processInfo.environment["HUDSON_RECORD_SNAPSHOTS"] == "1"
        if !record, let expected = try? String(contentsOf: file, encoding: .utf8) {
            return expected == actual ? nil : "snapshot \(name) differs:\n--- expected\n\(expected)--- actual\n\(actual)"
        }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? actual.write(to: file, atomically: true, encoding: .utf8)
        return record ? nil : "recorded new snapshot \(file.path); review and commit it"
    }
}
