// Test tooling, not a Hudson command: what the reliability suite needs to run as a
// separate process so it can be killed at any moment (Tests/ReliabilityTests).
//
//   hudson-reliability-helper save-credentials DIR EMAIL
//       replaces EMAIL's credentials in the configuration directory DIR again and again
//       with versions 1, 2, 3, ... (each a different, large file whose every secret
//       names its version) until killed; prints "saving" once the first version is on
//       disk. A test kills it at random and checks the file is one whole version.
import Foundation
import HudsonGmail

/// One version of the credential: the version number is in every secret, and the scope
/// is padded so a save takes several writes and a kill often lands in the middle.
func credential(email: String, version: Int) -> OAuthCredential {
    OAuthCredential(
        email: email, clientID: "client-\(version)", clientSecret: "secret-\(version)",
        tokenURI: URL(string: "http://127.0.0.1/token")!, refreshToken: "refresh-\(version)",
        scope: String(repeating: "scope-\(version) ", count: 20_000), createdAt: Date(timeIntervalSince1970: 0))
}

let arguments = CommandLine.arguments
guard arguments.count == 4, arguments[1] == "save-credentials" else {
    FileHandle.standardError.write(Data("usage: hudson-reliability-helper save-credentials DIR EMAIL\n".utf8))
    exit(64)
}
let store = CredentialStore(configDirectory: arguments[2])
var version = 1
do {
    while true {
        try store.save(credential(email: arguments[3], version: version))
        if version == 1 {
            FileHandle.standardOutput.write(Data("saving\n".utf8))
        }
        version += 1
    }
} catch {
    FileHandle.standardError.write(Data("hudson-reliability-helper: \(error)\n".utf8))
    exit(1)
}
