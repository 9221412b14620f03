// A kill during a credentials write leaves the old file or the new one, never a
// partial one (CONTRACT.md "Files": "written atomically (temporary file, fsync,
// rename)"). A helper process saves version after version of a large credential
// until it is killed at a random moment; the file must then be one whole version.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Crash and resume: credentials killed mid-write", .serialized)
struct CredentialsCrashTests {
    @Test("kill -9 during credential writes: the file is always one whole version, 0600")
    func killDuringWrites() throws {
        let rig = Rig()
        let email = "writer@hudson.test"
        let path = rig.configDirectory + "/credentials/\(email).json"
        var generator = SeededGenerator(seed: 7)
        var versions = Set<Int>()
        for _ in 0..<Scale.pick(25, long: 200) {
            let started = Date()
            let helper = try rig.start(BuiltProducts.executable("hudson-reliability-helper").path,
                                       ["save-credentials", rig.configDirectory, email])
            // Wait until this helper's first version is on disk (it prints "saving"; the file
            // itself is there from the previous helper), then let it run a random while: up
            // to twice as long as it took to start and save once, and to 80 ms at least, so
            // that on a machine busy with builds and parallel suites kills still land in the
            // later versions too.
            let deadline = Date().addingTimeInterval(60)
            while (try? String(contentsOfFile: helper.outPath, encoding: .utf8))?.hasPrefix("saving") != true,
                  helper.isRunning, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.002)
            }
            let firstSave = Date().timeIntervalSince(started)
            Thread.sleep(forTimeInterval: Double.random(in: 0.001...max(0.08, 2 * firstSave), using: &generator))
            let exit = rig.kill9(helper)
            #expect(exit.killed, "\(exit)")
            let data = try #require(FileManager.default.contents(atPath: path))
            let object = try #require(try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                                      "a partial credentials file (\(data.count) bytes)")
            let refresh = try #require(object["refresh_token"] as? String)
            let version = try #require(Int(refresh.dropFirst("refresh-".count)))
            #expect(object["client_secret"] as? String == "secret-\(version)")
            #expect(object["client_id"] as? String == "client-\(version)")
            #expect((object["scope"] as? String)?.split(separator: " ").allSatisfy { $0 == "scope-\(version)" } == true)
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            #expect(mode == 0o600)
            versions.insert(version)
        }
        #expect(versions.count > 1, "the helper never got past its first version")
        Report.note("\(Scale.pick(25, long: 200)) kills mid-write; versions found after them: \(versions.count) distinct, up to \(versions.max() ?? 0)")
        // hd-auth and every command still read the surviving file.
        let list = try rig.run("hd-auth", "list")
        #expect(list.status == 0 && list.stdout.contains(email), "\(list)")
    }
}
