// What the commands say about a store file they cannot use as they need (issue 10's
// files suite found these).
import Foundation
import HudsonTestSupport
import Testing

@Suite("Store files the commands cannot use", .serialized)
struct StoreFileTests {
    @Test("r10_empty_store_file_is_refused_by_writers: every command refuses an empty store file with 78 and leaves it empty")
    func r10_empty_store_file_is_refused_by_writers() throws {
        let f = CLIFixture()
        FileManager.default.createFile(atPath: f.storePath, contents: Data())
        for command in [["hd-ls"], ["hd-mark", "--no-flush", "star", "message:a1"], ["hd-undo", "--no-flush"], ["hd-sync"]] {
            let result = try CommandRunner.run(BuiltProducts.executable(command[0]), Array(command.dropFirst()),
                                               environment: f.environment)
            #expect(result.status == 78, "\(command): \(result)")
            #expect(result.stderr == "\(command[0]): \(f.storePath): the file is empty\n")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: f.storePath)[.size] as? Int == 0)
    }
}
