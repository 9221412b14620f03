/*!
 A Gmail on this machine: `HUDSON_GMAIL_URL` naming a loopback address is the project's fake
 Gmail (the demo's, a test's). When nothing answers there, "connection refused" says less
 than what happened: the server was stopped (issue 38 §4, the demo's hand-off). The CLI
 records the address when it reads the environment, and the error table says so.
 */
import Foundation
import HudsonCLI
import HudsonGmail
import Synchronization

enum LocalServer {
    private static let address = Mutex<URL?>(nil)

    /// Called with the Gmail address the command will use.
    static func note(_ api: URL) {
        // The one loopback rule (the one that lets plain http through, CONTRACT.md):
        // "127.0.0.1.example.com" is not this machine.
        let loopback = api.host.map { OAuthEndpoint.isLoopback(host: $0) } ?? false
        address.withLock { $0 = loopback ? api : nil }
    }

    /// What to say instead of "connection refused" when the Gmail address is on this machine.
    static func refusedMessage() -> String? {
        address.withLock { $0 }.map { StoppedLocalGmail.message(address: $0.absoluteString) }
    }

    /// Whether a `.network` error's words are a refused connection, to Gmail or (through
    /// the client's token refresh) to its token endpoint, which a Gmail on this machine serves too.
    static func isRefusal(_ detail: String) -> Bool {
        detail == "connection refused" || (detail.hasPrefix("token endpoint: ") && detail.hasSuffix(": connection refused; try again later"))
    }
}
