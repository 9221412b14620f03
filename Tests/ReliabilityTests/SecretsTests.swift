// Secrets (issue 10): no token in any output, log or the store. Every test of this
// target ends with Rig.expectNoSecretsLeaked (every token the fake ever issued, and the
// client secret, searched for in every output of every command it ran, in the store
// and its WAL, and in the logs); this suite adds the paths most likely to leak: debug
// output, verbose progress, and errors whose server text quotes the token itself.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Secrets: no token in any output, log or the store", .serialized)
struct SecretsTests {
    @Test("with HUDSON_DEBUG=1 and --verbose, through errors that quote the token back, no token is printed or stored")
    func tokensNeverLeak() throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 80))
        try rig.connect()
        let loud = ["HUDSON_DEBUG": "1"]
        #expect(try rig.run("hd-sync", ["--verbose"] + catchUp, environment: loud).status == 0)
        let credential = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rig.credentialsPath)))
                                      as? [String: Any])
        let access = try #require(credential["access_token"] as? String)

        // The server quotes the access token and the refresh token in its error messages.
        try fake.faults([
            ["path": "/history$", "status": 500, "message": "backend failed for Bearer \(access)", "times": 2],
            ["path": "/messages/[0-9a-f]+$", "status": 403, "reason": "insufficientPermissions",
             "message": "token \(access) lacks a scope", "times": 1],
        ])
        let message = try #require(try rig.run("hd-search", "--messages", "--ids", "-n", "1", "in:anywhere").lines.first)
        for command in [["hd-sync", "--verbose"], ["hd-sync", "--json"], ["hd-show", message], ["hd-show", "--raw", message],
                        ["hd-mark", "star", message], ["hd-undo"], ["hd-pending", "--json"], ["hd-auth", "list", "--json"]] {
            rig.runForOutput(command[0], Array(command.dropFirst()), environment: loud)
        }
        // A 400 whose message the client keeps for the error line.
        try fake.faults([["path": "/messages/[0-9a-f]+$", "status": 400, "message": "invalid id for \(access) and Bearer \(access)"]])
        let refused = rig.runForOutput("hd-show", ["--raw", message], environment: loud)
        #expect(refused?.stderr.contains("invalid id for") == true, "the server's message is not in the error: \(refused?.stderr ?? "")")
        try fake.admin("DELETE", "faults")

        // An expired access token, then a token endpoint that fails quoting the refresh token.
        try fake.admin("POST", "expire-access-tokens")
        try fake.faults([["path": "^/token$", "status": 503, "message": "cannot refresh \(fake.refreshToken) now", "times": 3]])
        rig.runForOutput("hd-sync", ["--verbose"], environment: loud)
        try fake.faults([["path": "^/token$", "status": 400, "reason": "invalid_grant", "message": "revoked: \(fake.refreshToken)"]])
        let revoked = try rig.run("hd-sync", environment: loud)
        #expect(revoked.status == 77, "\(revoked)")
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync", ["--verbose"] + catchUp, environment: loud).status == 0)

        // The credentials file is the one place a token may be, and it is private.
        let mode = (try FileManager.default.attributesOfItem(atPath: rig.credentialsPath)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
        try rig.expectNoSecretsLeaked()
    }
}

extension Rig {
    /// Runs a command for its output only (kept for the secrets check).
    @discardableResult
    func runForOutput(_ command: String, _ arguments: [String], environment extra: [String: String]) -> CommandResult? {
        try? run(command, arguments, stdin: nil, environment: extra, timeout: 120)
    }
}
