/*!
 Opening the consent page in the user's browser, when there is one: `$BROWSER`, else
 `xdg-open`. Best effort and detached: the URL is printed either way.
 */
import Foundation

public enum Browser {
    public static func open(_ url: URL) {
        let environment = ProcessInfo.processInfo.environment
        let command = environment["BROWSER"].flatMap { $0.isEmpty ? nil : $0 } ?? "xdg-open"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command, url.absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
