// Temporary directories for tests that need real files (WAL needs a real file).
import Foundation

public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL

    public init() {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hudson-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        url = base
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
