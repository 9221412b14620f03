// hd-export's targets (issue 37 §3): a target is checked before anything is created, a
// device, FIFO, socket or link is refused, and a refused run leaves the file system exactly
// as it was (names, kinds, modes, sizes of the whole tree around it). The mail comes from
// kept sources, so no Gmail is needed.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

/// A store of four messages with stored sources (one with hostile labels and sender), and a
/// workspace directory for targets.
struct ExportWorkspace {
    let f = CLIFixture()
    var work: String { f.dir.path("work") }

    init() throws {
        let store = try f.standardMailbox()
        let account = try #require(try store.accounts().first)
        var sources: [(gmailID: String, source: [UInt8])] = []
        for id in ["a1", "a2", "b1", "c1", "h1", "s1"] {
            sources.append((id, Array("From: x@example.org\r\nSubject: \(id)\r\nMessage-ID: <\(id)@example.org>\r\n\r\nFrom the body of \(id)\r\n".utf8)))
        }
        try store.saveSources(sources, accountID: account.id)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    func export(_ arguments: String..., timeout: TimeInterval = 60) throws -> CommandResult {
        try export(arguments, timeout: timeout)
    }

    func export(_ arguments: [String], timeout: TimeInterval = 60) throws -> CommandResult {
        try CommandRunner.run(BuiltProducts.executable("hd-export"), arguments, environment: f.environment, timeout: timeout)
    }

    func path(_ name: String) -> String { work + "/" + name }
}

/// Every name under `root` (not following links) with its kind, permission bits and, for a
/// file, its size: what a refused run must leave as it found it. The store's own files
/// (`data/hudson.sqlite3*`), which opening the store may touch, are left out.
func fileTree(_ root: String) -> [String] {
    var lines: [String] = []
    func walk(_ path: String, _ relative: String) {
        var info = stat()
        guard lstat(path, &info) == 0, !relative.hasPrefix("./data/hudson.sqlite3") else { return }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFDIR: kind = "d"
        case S_IFREG: kind = "f \(info.st_size)"
        case S_IFLNK:
            kind = "l -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
        case S_IFIFO: kind = "p"
        case S_IFSOCK: kind = "s"
        default: kind = "other"
        }
        lines.append("\(relative) \(kind) \(String(info.st_mode & 0o7777, radix: 8))")
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                walk(path + "/" + name, relative + "/" + name)
            }
        }
    }
    walk(root, ".")
    return lines
}

/// A UNIX socket bound at `path` (left there when the descriptor closes).
func makeSocket(_ path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #expect(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
}

@Suite("hd-export checks its target before it creates anything; a refused run changes nothing")
struct ExportTargetTests {
    /// One refused target: how to make it in the workspace, the arguments, the exit status
    /// and what standard error says.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var setup: @Sendable (ExportWorkspace) throws -> Void = { _ in }
        var arguments: @Sendable (ExportWorkspace) -> [String]
        var status: Int32
        var says: String
        var testDescription: String { name }
    }

    /// An export of the workspace's mail made first, for the cases that spoil one.
    static func exported(_ w: ExportWorkspace, _ name: String, format: String = "maildir") throws {
        let made = try w.export("--format", format, w.path(name))
        #expect(made.status == 0, "\(made)")
    }

    static let cases: [Case] = [
        Case(name: "a foreign directory (Maildir)", setup: { w in
            try FileManager.default.createDirectory(atPath: w.path("d"), withIntermediateDirectories: true)
            try "mine\n".write(toFile: w.path("d/notes.txt"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("d")] }, status: 64, says: "not empty and not an export"),
        Case(name: "a foreign directory (.eml)", setup: { w in
            try FileManager.default.createDirectory(atPath: w.path("d/sub"), withIntermediateDirectories: true)
        }, arguments: { ["--format", "eml", $0.path("d")] }, status: 64, says: "not empty and not an export"),
        Case(name: "a Maildir of another program (foreign names in cur/)", setup: { w in
            for sub in ["cur", "new", "tmp"] { try FileManager.default.createDirectory(atPath: w.path("d/" + sub), withIntermediateDirectories: true) }
            try "x".write(toFile: w.path("d/cur/1234.host:2,S"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("d")] }, status: 64, says: "not empty and not an export"),
        Case(name: "a file where a directory is expected", setup: { w in
            try "mail\n".write(toFile: w.path("file"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("file")] }, status: 64, says: "a file, not a directory"),
        Case(name: "a directory where an mbox file is expected", setup: { w in
            try FileManager.default.createDirectory(atPath: w.path("d"), withIntermediateDirectories: true)
        }, arguments: { ["--format", "mbox", $0.path("d")] }, status: 64, says: "a directory, not a file"),
        Case(name: "a foreign non-empty file as an mbox", setup: { w in
            try "not mail\n".write(toFile: w.path("other"), atomically: false, encoding: .utf8)
        }, arguments: { ["--format", "mbox", $0.path("other")] }, status: 64, says: "no hd-export wrote"),
        Case(name: "a symbolic link to a foreign directory", setup: { w in
            try FileManager.default.createDirectory(atPath: w.path("real"), withIntermediateDirectories: true)
            try "mine\n".write(toFile: w.path("real/notes.txt"), atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: w.path("link"), withDestinationPath: "real")
        }, arguments: { [$0.path("link")] }, status: 64, says: "not empty and not an export"),
        Case(name: "a symbolic link to a FIFO, as an mbox", setup: { w in
            #expect(mkfifo(w.path("fifo"), 0o600) == 0)
            try FileManager.default.createSymbolicLink(atPath: w.path("link.mbox"), withDestinationPath: "fifo")
        }, arguments: { ["--format", "mbox", $0.path("link.mbox")] }, status: 78, says: "FIFO"),
        Case(name: "a symbolic link to a file, as an mbox", setup: { w in
            try "x\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: w.path("link.mbox"), withDestinationPath: "victim")
        }, arguments: { ["--format", "mbox", $0.path("link.mbox")] }, status: 64, says: "no hd-export wrote"),
        Case(name: "a dangling symbolic link", setup: { w in
            try FileManager.default.createSymbolicLink(atPath: w.path("link"), withDestinationPath: "nowhere")
        }, arguments: { [$0.path("link")] }, status: 78, says: "a symbolic link"),
        Case(name: "a foreign directory reached through a linked parent", setup: { w in
            try FileManager.default.createDirectory(atPath: w.path("real/d"), withIntermediateDirectories: true)
            try "mine\n".write(toFile: w.path("real/d/notes.txt"), atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: w.path("parent"), withDestinationPath: "real")
        }, arguments: { [$0.path("parent/d")] }, status: 64, says: "not empty and not an export"),
        Case(name: "an export whose cur/ is a link out of it", setup: { w in
            try exported(w, "m")
            try FileManager.default.createDirectory(atPath: w.path("outside"), withIntermediateDirectories: true)
            try FileManager.default.removeItem(atPath: w.path("m/cur"))
            try FileManager.default.createSymbolicLink(atPath: w.path("m/cur"), withDestinationPath: "../outside")
        }, arguments: { [$0.path("m")] }, status: 78, says: "cur is a symbolic link"),
        Case(name: "an export whose tmp/ is a link out of it", setup: { w in
            try exported(w, "m")
            try FileManager.default.createDirectory(atPath: w.path("outside"), withIntermediateDirectories: true)
            try FileManager.default.removeItem(atPath: w.path("m/tmp"))
            try FileManager.default.createSymbolicLink(atPath: w.path("m/tmp"), withDestinationPath: "../outside")
        }, arguments: { [$0.path("m")] }, status: 78, says: "tmp is a symbolic link"),
        Case(name: "an export whose new/ is a file", setup: { w in
            try exported(w, "m")
            try FileManager.default.removeItem(atPath: w.path("m/new"))
            try "x".write(toFile: w.path("m/new"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("m")] }, status: 78, says: "new is a file"),
        Case(name: "an export whose state is a link to a state elsewhere", setup: { w in
            try exported(w, "m")
            try FileManager.default.moveItem(atPath: w.path("m/.hudson-export"), toPath: w.path("state"))
            try FileManager.default.createSymbolicLink(atPath: w.path("m/.hudson-export"), withDestinationPath: "../state")
        }, arguments: { [$0.path("m")] }, status: 78, says: ".hudson-export is a symbolic link"),
        Case(name: "an export whose state is a FIFO", setup: { w in
            try exported(w, "m")
            try FileManager.default.removeItem(atPath: w.path("m/.hudson-export"))
            #expect(mkfifo(w.path("m/.hudson-export"), 0o600) == 0)
        }, arguments: { [$0.path("m")] }, status: 78, says: ".hudson-export is a FIFO"),
        Case(name: "an mbox whose state is a link", setup: { w in
            try exported(w, "all.mbox", format: "mbox")
            try FileManager.default.moveItem(atPath: w.path("all.mbox.hudson-export"), toPath: w.path("state"))
            try FileManager.default.createSymbolicLink(atPath: w.path("all.mbox.hudson-export"), withDestinationPath: "state")
        }, arguments: { ["--format", "mbox", $0.path("all.mbox")] }, status: 78, says: "is a symbolic link"),
        Case(name: "an mbox whose lock is a FIFO", setup: { w in
            try exported(w, "all.mbox", format: "mbox")
            try FileManager.default.removeItem(atPath: w.path("all.mbox.hudson-export.lock"))
            #expect(mkfifo(w.path("all.mbox.hudson-export.lock"), 0o600) == 0)
        }, arguments: { ["--format", "mbox", $0.path("all.mbox")] }, status: 78, says: "is a FIFO"),
        Case(name: "an .eml export whose year directory is a link out of it", setup: { w in
            try exported(w, "e", format: "eml")
            try FileManager.default.createDirectory(atPath: w.path("outside"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: w.path("e/2026"), toPath: w.path("outside/2026"))
            try FileManager.default.createSymbolicLink(atPath: w.path("e/2026"), withDestinationPath: "../outside/2026")
        }, arguments: { ["--format", "eml", $0.path("e")] }, status: 78, says: "2026 is not a directory"),
        Case(name: "missing directories under a FIFO", setup: { w in #expect(mkfifo(w.path("fifo"), 0o600) == 0) },
             arguments: { [$0.path("fifo/no/such/d")] }, status: 78, says: "a FIFO, not a directory"),
        Case(name: "missing directories under a dangling link", setup: { w in
            try FileManager.default.createSymbolicLink(atPath: w.path("link"), withDestinationPath: "nowhere")
        }, arguments: { ["--format", "mbox", $0.path("link/no/x.mbox")] }, status: 78, says: "link"),
        Case(name: "a parent that is a file", setup: { w in
            try "x".write(toFile: w.path("file"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("file/d")] }, status: 78, says: "not a directory"),
        Case(name: "the store's directory", arguments: { [$0.f.dir.path("data")] }, status: 78, says: "the store's directory"),
        Case(name: "an mbox named like the store's WAL", arguments: { ["--format", "mbox", $0.f.storePath + "-wal"] },
             status: 78, says: "named like the store's own files"),
        Case(name: "a Maildir named like the store's journal", arguments: { [$0.f.storePath + "-journal"] },
             status: 78, says: "named like the store's own files"),
        Case(name: "a FIFO as an mbox", setup: { w in #expect(mkfifo(w.path("fifo"), 0o600) == 0) },
             arguments: { ["--format", "mbox", $0.path("fifo")] }, status: 78, says: "a FIFO, not a regular file"),
        Case(name: "a FIFO as a Maildir", setup: { w in #expect(mkfifo(w.path("fifo"), 0o600) == 0) },
             arguments: { [$0.path("fifo")] }, status: 78, says: "a FIFO, not a directory"),
        Case(name: "a socket as an mbox", setup: { w in try makeSocket(w.path("sock")) },
             arguments: { ["--format", "mbox", $0.path("sock")] }, status: 78, says: "a socket, not a regular file"),
        Case(name: "a socket as an .eml tree", setup: { w in try makeSocket(w.path("sock")) },
             arguments: { ["--format", "eml", $0.path("sock")] }, status: 78, says: "a socket, not a directory"),
        Case(name: "standard output as -", arguments: { _ in ["--format", "mbox", "-"] }, status: 64, says: "-: an export is read back"),
        Case(name: "an empty name", arguments: { _ in [""] }, status: 64, says: "TARGET: an empty name"),
        Case(name: "a name with control characters, shown escaped", arguments: { ["--format", "eml", $0.path("a\u{1B}[31mb\nc")] },
             status: 64, says: "a\\e[31mb\\nc: a name with control characters"),
        Case(name: "a state whose --mirror removal points outside the export", setup: { w in
            try exported(w, "m")
            try "precious\n".write(toFile: w.path("victim"), atomically: false, encoding: .utf8)
            var state = try exportStateText(w.path("m/.hudson-export"))
            state += "K 18a0000000000001 ../victim\n"
            try state.write(toFile: w.path("m/.hudson-export"), atomically: false, encoding: .utf8)
        }, arguments: { ["--mirror", $0.path("m")] }, status: 64, says: "cannot be read as an export's state"),
        Case(name: "a corrupt state", setup: { w in
            try exported(w, "m")
            try "hudson-export 1\nformat maildir\naccount ann@example.com\nseq twelve\n".write(
                toFile: w.path("m/.hudson-export"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("m")] }, status: 64, says: "cannot be read as an export's state"),
        Case(name: "a state of the wrong type of line", setup: { w in
            try exported(w, "m")
            try "hudson-export 1\nformat maildir\naccount ann@example.com\nseq -5\nM a/b cur/x\n".write(
                toFile: w.path("m/.hudson-export"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("m")] }, status: 64, says: "cannot be read as an export's state"),
        Case(name: "a huge state (in the earlier text form, which is read whole)", setup: { w in
            try exported(w, "m")
            try exportStateText(w.path("m/.hudson-export")).write(toFile: w.path("m/.hudson-export"), atomically: false, encoding: .utf8)
            let handle = try #require(FileHandle(forWritingAtPath: w.path("m/.hudson-export")))
            try handle.truncate(atOffset: 300 << 20)  // sparse: 300 MB read as zeros
            try handle.close()
        }, arguments: { [$0.path("m")] }, status: 64, says: "larger than"),
        Case(name: "a state of another account", setup: { w in
            try exported(w, "m")
            let state = try exportStateText(w.path("m/.hudson-export"))
            try state.replacingOccurrences(of: "account ann@example.com", with: "account eve@example.net")
                .write(toFile: w.path("m/.hudson-export"), atomically: false, encoding: .utf8)
        }, arguments: { [$0.path("m")] }, status: 64, says: "holds the export of eve@example.net"),
        Case(name: "an mbox shorter than its state recorded", setup: { w in
            try exported(w, "all.mbox", format: "mbox")
            try "From x\n".write(toFile: w.path("all.mbox"), atomically: false, encoding: .utf8)
        }, arguments: { ["--format", "mbox", $0.path("all.mbox")] }, status: 64, says: "shorter than its export recorded"),
    ]

    @Test("a refused target leaves the whole tree around it as it was", arguments: cases)
    func refusedChangesNothing(_ c: Case) throws {
        let w = try ExportWorkspace()
        try c.setup(w)
        let before = fileTree(w.f.dir.url.path)
        let result = try w.export(c.arguments(w), timeout: 30)
        #expect(result.status == c.status, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        let first = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        #expect(first.hasPrefix("hd-export: ") && first.contains(c.says), "\(result)")
        #expect(result.stderr.split(separator: "\n").count == (c.status == 64 ? 2 : 1), "one line (and the usage line for 64): \(result)")
        #expect(!result.stderr.unicodeScalars.contains { $0 == "\u{1B}" }, "\(result)")
        #expect(fileTree(w.f.dir.url.path) == before, "\(c.name): the tree changed")
    }

    @Test("/dev/null and /dev/stdout are refused (78) and nothing is created in /dev")
    func devices() throws {
        let w = try ExportWorkspace()
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
        for (format, target, says) in [("mbox", "/dev/null", "a device, not a regular file"), ("maildir", "/dev/null", "a device, not a directory"),
                                       ("mbox", "/dev/stdout", "a symbolic link")] {
            let result = try w.export("--format", format, target, timeout: 30)
            #expect(result.status == 78 && result.stderr.contains(says) && result.stdout.isEmpty, "\(format) \(target): \(result)")
        }
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
        #expect(after.filter { $0.contains("hudson") }.isEmpty && after.subtracting(before).filter { $0.hasPrefix("null") }.isEmpty,
                "\(after.subtracting(before))")
    }

    @Test("a read-only parent directory is refused (78) and left as it was (as root, which may write there, the export is made)")
    func readOnlyParent() throws {
        let w = try ExportWorkspace()
        try FileManager.default.createDirectory(atPath: w.path("ro"), withIntermediateDirectories: true)
        #expect(chmod(w.path("ro"), 0o555) == 0)
        defer { chmod(w.path("ro"), 0o755) }
        for (format, name) in [("maildir", "maildir"), ("mbox", "mbox"), ("eml", "eml"), ("maildir", "missing/below/it")] {
            let before = fileTree(w.f.dir.url.path)
            let result = try w.export("--format", format, w.path("ro/" + name), timeout: 30)
            if geteuid() == 0 {
                #expect(result.status == 0, "\(result)")
            } else {
                #expect(result.status == 78 && result.stderr.contains("Permission denied"), "\(result)")
                #expect(fileTree(w.f.dir.url.path) == before)
            }
        }
    }

    @Test("missing directories above the target are made (mkdir -p), as a nightly hd-export ~/Mail/gmail wants", arguments: ["maildir", "mbox", "eml"])
    func missingParentsAreMade(format: String) throws {
        let w = try ExportWorkspace()
        let target = w.path("new/deeper/" + (format == "mbox" ? "all.mbox" : "out"))
        let result = try w.export("--format", format, target)
        #expect(result.status == 0 && result.stdout.hasPrefix("ann@example.com: 6 written"), "\(result)")
        #expect(FileManager.default.fileExists(atPath: target))
    }

    @Test("a linked parent directory is followed, as the user named the path through it; the target itself is made there")
    func linkedParentIsFollowed() throws {
        let w = try ExportWorkspace()
        try FileManager.default.createDirectory(atPath: w.path("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: w.path("parent"), withDestinationPath: "real")
        let result = try w.export(w.path("parent/Mail/"))
        #expect(result.status == 0 && result.stdout.hasPrefix("ann@example.com: 6 written"), "\(result)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: w.path("real/Mail/cur"))) ?? []).count == 6)
    }

    @Test("a target that is a symbolic link is followed once: the export is made, and later updated, where it points",
          arguments: ["maildir", "mbox", "eml"])
    func linkedTargetIsFollowed(format: String) throws {
        let w = try ExportWorkspace()
        try FileManager.default.createDirectory(atPath: w.path("disk"), withIntermediateDirectories: true)
        if format == "mbox" {
            #expect(FileManager.default.createFile(atPath: w.path("disk/all.mbox"), contents: Data()))
        } else {
            try FileManager.default.createDirectory(atPath: w.path("disk/mail"), withIntermediateDirectories: true)
        }
        let real = format == "mbox" ? "disk/all.mbox" : "disk/mail"
        try FileManager.default.createSymbolicLink(atPath: w.path("link"), withDestinationPath: real)
        for run in 1...2 {
            let result = try w.export("--format", format, w.path("link"))
            #expect(result.status == 0, "run \(run): \(result)")
        }
        let link = try FileManager.default.attributesOfItem(atPath: w.path("link"))
        #expect(link[.type] as? FileAttributeType == .typeSymbolicLink, "the link itself was replaced")
        let made = try FileManager.default.attributesOfItem(atPath: w.path(real))
        #expect((made[.size] as? Int ?? 0) > 0 || format != "mbox", "\(made)")
        if format == "maildir" {
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: w.path("disk/mail/cur"))) ?? []).count == 6)
        }
    }

    @Test("a second export of the same target while one runs: 75, and it changes nothing", arguments: ["maildir", "mbox", "eml"])
    func concurrentExport(format: String) throws {
        let w = try ExportWorkspace()
        let target = w.path(format == "mbox" ? "all.mbox" : "out")
        #expect(try w.export("--format", format, target).status == 0)
        // The lock an export holds while it runs, held here.
        let lockPath = format == "mbox" ? target + ".hudson-export.lock" : target + "/.hudson-export.lock"
        let fd = open(lockPath, O_RDWR)
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        defer { close(fd) }
        let before = fileTree(w.f.dir.url.path)
        let second = try w.export("--format", format, target, timeout: 30)
        #expect(second.status == 75 && second.stderr.contains("another hd-export is writing this export"), "\(second)")
        #expect(fileTree(w.f.dir.url.path) == before)
    }

    @Test("an export the first run of which was killed before its first state resumes (what it left is its own)",
          arguments: ["maildir", "eml", "mbox"])
    func killedBeforeFirstState(format: String) throws {
        let w = try ExportWorkspace()
        // What a run killed between creating its directories and lock and saving its state leaves.
        let target = w.path(format == "mbox" ? "all.mbox" : "out")
        switch format {
        case "maildir":
            for sub in ["cur", "new", "tmp"] { try FileManager.default.createDirectory(atPath: target + "/" + sub, withIntermediateDirectories: true) }
            _ = FileManager.default.createFile(atPath: target + "/.hudson-export.lock", contents: Data())
            _ = FileManager.default.createFile(atPath: target + "/.hudson-export.tmp", contents: Data("hudson-exp".utf8))
        case "eml":
            try FileManager.default.createDirectory(atPath: target + "/.hudson-tmp", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: target + "/.hudson-export.lock", contents: Data())
        default:
            _ = FileManager.default.createFile(atPath: target + ".hudson-export.lock", contents: Data())
        }
        let result = try w.export("--format", format, target)
        #expect(result.status == 0 && result.stdout.hasPrefix("ann@example.com: 6 written"), "\(result)")
    }
}

@Suite("hd-export killed mid-run (kill -9) in every format: a rerun finishes, each message once", .serialized)
struct ExportKilledTests {
    @Test("killed at some point of the run, a rerun completes the export: one copy of each message, nothing half-written",
          arguments: ["mbox", "eml"])
    func killedMidRun(format: String) throws {
        let f = CLIFixture()
        let fake = try fixedFake()
        defer { withExtendedLifetime(fake) {} }
        try f.connect(fake, lookbackDays: 0)
        #expect(try f.run("hd-sync", "--catch-up", "--prefetch-days", "0").status == 0)
        let count = try f.run("hd-search", "--messages", "--ids", "-n", "0", "in:anywhere").lines.count
        try fake.admin("POST", "set", ["latency_ms": 150])  // a run of a second or so, to be killed in
        let target = f.dir.path(format == "mbox" ? "all.mbox" : "eml")
        for delay in ["0.2", "0.5", "0.9"] {
            _ = try f.shell("(hd-export --format \(format) '\(target)' >/dev/null 2>&1 & pid=$!; sleep \(delay); kill -9 $pid; wait $pid) || true")
        }
        try fake.admin("POST", "set", ["latency_ms": 0])
        let rerun = try f.run("hd-export", "--format", format, target)
        #expect(rerun.status == 0, "\(rerun)")
        if format == "mbox" {
            let lines = try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let separators = lines.indices.filter { lines[$0].hasPrefix("From ") && ($0 == 0 || lines[$0 - 1].isEmpty) }.count
            #expect(separators == count, "each message once in the mbox")
        } else {
            let files = FileManager.default.enumerator(atPath: target)?.compactMap { $0 as? String } ?? []
            #expect(files.filter { $0.hasSuffix(".eml") }.count == count)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: target + "/.hudson-tmp")) ?? []).isEmpty)
        }
        let again = try f.run("hd-export", "--format", format, target)
        #expect(again.status == 0 && again.stdout.hasPrefix("demo@hudson.test: 0 written"), "\(again)")
    }
}
