// What servers and credential files are allowed to make Hudson do (issue 18): a token
// endpoint that answers nonsense, too much, or nothing; a Retry-After of a day; a
// directory, a FIFO or a device where a credentials file or the client JSON should be.
// docs/reliability.md, "What servers are allowed to make Hudson do", says what each does.
import Foundation
import Glibc
import HudsonTestSupport
import SQLite
import Testing

@Suite("Server bounds: the token endpoint, Retry-After, credential paths", .serialized)
struct ServerBoundsTests {
    /// A synced store with one change queued (not sent), and an access token that Gmail no
    /// longer takes, so the next command must ask the token endpoint.
    func prepared() throws -> (Rig, FakeGmail, String) {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 30))
        try rig.connect()
        #expect(try rig.run("hd-sync", catchUp).status == 0)
        let server = try fake.messages()
        let id = try #require(server.first { !$0.value.labels.contains("STARRED") && !$0.value.labels.contains("TRASH") }?.key)
        #expect(try rig.run("hd-mark", "--no-flush", "star", "message:\(id)").status == 0)
        try fake.admin("POST", "expire-access-tokens")
        return (rig, fake, id)
    }

    func credentialsFile(_ rig: Rig) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: rig.credentialsPath)) }

    @Test("a token endpoint that answers 200 with invalid JSON, a list, or members of the wrong type: 75, not 77, and nothing stored",
          arguments: ["invalid_json", "wrong_shape", "wrong_type"])
    func brokenTokenAnswer(_ mode: String) throws {
        let (rig, fake, id) = try prepared()
        let before = try credentialsFile(rig)
        try fake.faults([["path": "^/token$", "mode": mode, "times": -1]])
        let sync = try rig.run("hd-sync")
        #expect(sync.status == 75, "\(sync)")
        #expect(!sync.stderr.contains("hd-auth login"), "a broken endpoint is not a reason to log in again: \(sync.stderr)")
        #expect(try credentialsFile(rig) == before)
        #expect(try rig.queue().map(\.message) == [id], "the change stays queued")
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync").status == 0)
        #expect(try rig.queue().isEmpty)
        try rig.expectNoSecretsLeaked()
    }

    @Test("a 64 MB access token is refused with 75 and never written to the credentials file; the next sync works")
    func hugeAccessToken() throws {
        let (rig, fake, id) = try prepared()
        let before = try credentialsFile(rig)
        try fake.faults([["path": "^/token$", "mode": "oversized", "size": 64 << 20, "times": -1]])
        let sync = try rig.run("hd-sync")
        #expect(sync.status == 75, "\(sync)")
        #expect(sync.stderr.split(separator: "\n").count == 1 && sync.stderr.count < 400, "\(sync.stderr.prefix(400))")
        #expect(try credentialsFile(rig) == before, "the credentials file changed")
        #expect(try rig.queue().map(\.message) == [id])
        try fake.admin("DELETE", "faults")
        // Every command still works: the file was not wedged.
        #expect(try rig.run("hd-auth", "list").status == 0)
        let again = try rig.run("hd-sync")
        #expect(again.status == 0, "\(again)")
        #expect(try rig.queue().isEmpty)
        #expect(try credentialsFile(rig).count < 4096)
    }

    @Test("a token endpoint that never answers holds hd-mark for seconds, not a minute; the change stays queued")
    func hangingTokenEndpoint() throws {
        let (rig, fake, queued) = try prepared()
        try fake.faults([["path": "^/token$", "mode": "hang", "times": -1]])
        // Another message than the one already queued, so that hd-mark has something to send.
        let message = try #require(try fake.messages().first {
            $0.key != queued && !$0.value.labels.contains("STARRED") && !$0.value.labels.contains("TRASH")
        }?.key)
        var started = Date()
        let mark = try rig.run("hd-mark", "star", "message:\(message)", timeout: 90)
        let markSeconds = Date().timeIntervalSince(started)
        #expect(mark.status == 0, "\(mark)")
        #expect(mark.stderr.contains("queued"), "\(mark)")
        #expect(markSeconds < 20, "hd-mark waited \(markSeconds) s on the token endpoint")
        started = Date()
        let sync = try rig.run("hd-sync", timeout: 90)
        let syncSeconds = Date().timeIntervalSince(started)
        #expect(sync.status == 75, "\(sync)")
        #expect(syncSeconds < 30, "hd-sync waited \(syncSeconds) s on the token endpoint")
        Report.note("token endpoint hang: hd-mark \(markSeconds) s, hd-sync \(syncSeconds) s")
        try fake.admin("DELETE", "faults")
        #expect(try rig.run("hd-sync").status == 0)
        #expect(try rig.queue().isEmpty)
    }

    @Test("a Retry-After of a day is cut to 15 minutes, and hd-sync says so")
    func retryAfterIsCapped() throws {
        let (rig, fake, id) = try prepared()
        try fake.faults([["path": "odify$", "status": 429, "retry_after": 86_400, "times": -1]])
        let sync = try rig.run("hd-sync")
        #expect(sync.status == 0, "\(sync)")
        #expect(sync.stderr.contains("Retry-After") && sync.stderr.contains("15 minutes"), "\(sync.stderr)")
        #expect(try rig.queue().map(\.message).contains(id))
        let db = try Connection(path: rig.storePath, options: ConnectionOptions(access: .readOnly))
        let wait = try #require(try db.scalarInt("SELECT max(next_attempt_at) FROM mutation_queue")) - Int64(Date().timeIntervalSince1970 * 1000)
        #expect(wait <= 16 * 60 * 1000, "the change waits \(wait / 1000) s")
        let pending = try rig.run("hd-pending", "--json")
        #expect(pending.stdout.contains("at most 900 s"), "\(pending.stdout)")
        try rig.expectNoSecretsLeaked()
    }

    /// A credentials file replaced by something that is not a regular file.
    enum Replacement: String, CaseIterable, CustomTestStringConvertible {
        case directory, fifo, device
        var testDescription: String { rawValue }

        func make(at path: String) throws -> Bool {
            try? FileManager.default.removeItem(atPath: path)
            switch self {
            case .directory: return mkdir(path, 0o700) == 0
            case .fifo: return mkfifo(path, 0o600) == 0
            // A copy of /dev/null (needs root, as CI and this machine run; skipped otherwise).
            case .device: return mknod(path, S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0
            }
        }
    }

    @Test("a directory, a FIFO or a device as the credentials file: 78 with the fix, from hd-sync, hd-sync --push and hd-auth status",
          arguments: Replacement.allCases)
    func credentialsNotARegularFile(_ replacement: Replacement) throws {
        let (rig, _, id) = try prepared()
        guard try replacement.make(at: rig.credentialsPath) else { return }
        for command in [["hd-sync"], ["hd-sync", "--push"], ["hd-auth", "status"]] {
            let result = try rig.run(command[0], Array(command.dropFirst()), timeout: 30)
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr.contains("not a regular file"), "\(command): \(result.stderr)")
        }
        #expect(try rig.queue().map(\.message) == [id])
    }

    @Test("the configuration directory is a device or a file: 78 from hd-sync --push, not 75")
    func configurationDirectoryNotADirectory() throws {
        let (rig, _, _) = try prepared()
        for path in ["/dev/null", rig.credentialsPath] {
            let push = try rig.run("hd-sync", ["--push"], environment: ["HUDSON_CONFIG_DIR": path], timeout: 30)
            #expect(push.status == 78, "\(path): \(push)")
        }
    }

    @Test("a directory, a FIFO or a device as the client JSON or the refresh-token file: 78, and nothing stored",
          arguments: Replacement.allCases)
    func clientFilesNotRegular(_ replacement: Replacement) throws {
        let rig = Rig()
        let fake = try rig.startFake(pinnedMailbox(count: 5))
        try fake.clientSecretJSON.write(toFile: rig.dir.path("client_secret.json"), atomically: true, encoding: .utf8)
        try fake.refreshToken.write(toFile: rig.dir.path("refresh_token"), atomically: true, encoding: .utf8)
        let odd = rig.dir.path("odd")
        guard try replacement.make(at: odd) else { return }
        for (secret, token) in [(odd, rig.dir.path("refresh_token")), (rig.dir.path("client_secret.json"), odd)] {
            let add = try rig.run("hd-auth", ["add", fake.email, "--client-secret", secret, "--refresh-token-file", token], timeout: 30)
            #expect(add.status == 78, "\(add)")
        }
        let login = try rig.run("hd-auth", ["login", "--no-browser", "--client-secret", odd], timeout: 30)
        #expect(login.status == 78, "\(login)")
        #expect(!FileManager.default.fileExists(atPath: rig.credentialsPath))
    }
}
