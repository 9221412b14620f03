import Foundation
import HudsonTestSupport
import Testing

@Suite("scripts/install into a temporary DESTDIR")
struct InstallTests {
    @Test("install puts binaries, man pages and completions where man and the shells look, and uninstall removes them")
    func installAndUninstall() throws {
        let f = CLIFixture()
        try f.standardMailbox()
        let destdir = f.dir.path("stage")
        let root = FakeGmail.repositoryRoot.path
        let install = try f.shell("'\(root)/scripts/install' --bin-dir '\(BuiltProducts.directory.path)' --destdir '\(destdir)' --prefix /usr/local")
        #expect(install.status == 0, "\(install)")
        let prefix = destdir + "/usr/local"
        for command in commandNames {
            #expect(FileManager.default.isExecutableFile(atPath: "\(prefix)/bin/\(command)"), "\(command)")
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/bash-completion/completions/\(command)"))
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/zsh/site-functions/_\(command)"))
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/fish/vendor_completions.d/\(command).fish"))
            if FileManager.default.fileExists(atPath: "\(root)/man/\(command).1") {
                #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/man/man1/\(command).1"))
            }
        }
        // Two multi-call binaries: each name runs its own command, and the names of one kind
        // are links to one file.
        for command in commandNames {
            let version = try f.shell("'\(prefix)/bin/\(command)' --version")
            #expect(version.stdout.hasPrefix("\(command) (Hudson) "), "\(version)")
        }
        func inode(_ command: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: "\(prefix)/bin/\(command)")[.systemFileNumber] as? Int)
        }
        #expect(try Set(["hd-ls", "hd-search", "hd-show", "hd-mark", "hd-undo", "hd-labels", "hd-pending"].map(inode)).count == 1)
        #expect(try Set(["hd-auth", "hd-sync", "hd-send", "hd-export"].map(inode)).count == 1)
        #expect(try inode("hd-ls") != inode("hd-sync"))
        // A new shell with the installed bin on PATH completes hd-mark ar<TAB> from the installed script.
        let complete = try f.shell("""
            export PATH='\(prefix)/bin':/usr/bin:/bin
            source '\(prefix)/share/bash-completion/completions/hd-mark'
            COMP_LINE='hd-mark ar'; COMP_POINT=10; COMP_WORDS=(hd-mark ar); COMP_CWORD=1
            _hudson_hd_mark; printf '%s\\n' "${COMPREPLY[@]}"; command -v hd-mark
            """)
        #expect(complete.lines == ["archive", "\(prefix)/bin/hd-mark"], "\(complete)")
        if FileManager.default.fileExists(atPath: "\(root)/man/hd-search.1"), FileManager.default.isExecutableFile(atPath: "/usr/bin/man") {
            let man = try f.shell("MANPATH='\(prefix)/share/man' man -w hd-search")
            #expect(man.stdout == "\(prefix)/share/man/man1/hd-search.1\n", "\(man)")
        }
        // Another program's page beside Hudson's: it and its directories stay.
        try "other".write(toFile: "\(prefix)/share/man/man1/other.1", atomically: true, encoding: .utf8)
        let uninstall = try f.shell("'\(root)/scripts/install' --destdir '\(destdir)' --prefix /usr/local --uninstall")
        #expect(uninstall.status == 0)
        // Nothing of Hudson's is left, not even an empty directory it made.
        let left = FileManager.default.enumerator(atPath: prefix)?.compactMap { $0 as? String }.sorted() ?? []
        #expect(left == ["share", "share/man", "share/man/man1", "share/man/man1/other.1"], "left behind: \(left)")
    }
}
