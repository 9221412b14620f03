// hd-send's --to, --cc and --bcc complete from hd-address in bash, zsh and fish (issue
// 42); the wrong-recipient warning.
import Foundation
import HudsonTestSupport
import Testing

@Suite("Address completion for hd-send, and the near-miss warning")
struct AddressCompletionTests {
    func fixture() throws -> CLIFixture {
        let f = CLIFixture()
        try f.addressMailbox()
        f.environment["PATH"] = BuiltProducts.directory.path + ":/usr/bin:/bin"
        return f
    }

    @Test("bash: --to completes addresses, best first, and the word after a comma keeps the list before it")
    func bash() throws {
        let f = try fixture()
        func complete(_ line: String, _ words: [String]) throws -> [String] {
            let script = """
                source '\(FakeGmail.repositoryRoot.path)/completions/bash/hd-send'
                COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
                _hudson_hd_send; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try f.shell(script)
            #expect(result.status == 0, "\(result)")
            return result.lines
        }
        #expect(try complete("hd-send --to ali", ["hd-send", "--to", "ali"]) == ["alice@example.net"])
        #expect(try complete("hd-send --cc al", ["hd-send", "--cc", "al"]).first == "alice@example.net")
        #expect(try complete("hd-send --bcc x@example.org,ali", ["hd-send", "--bcc", "x@example.org,ali"])
            == ["x@example.org,alice@example.net"])
    }

    @Test("fish completes --to, --cc and --bcc from hd-address, after a comma too; the zsh script loads")
    func fishAndZsh() throws {
        let f = try fixture()
        let root = FakeGmail.repositoryRoot.path
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") {
            let fish = try f.shell("fish -c 'source \(root)/completions/fish/hd-send.fish; complete -C \"hd-send --to ali\"'")
            #expect(fish.lines.map { String($0.split(separator: "\t")[0]) } == ["alice@example.net"], "\(fish)")
            // After a comma, the word after it is completed and the list before it kept, as in bash and zsh.
            for option in ["to", "cc", "bcc"] {
                let list = try f.shell("fish -c 'source \(root)/completions/fish/hd-send.fish; complete -C \"hd-send --\(option) x@example.org,ali\"'")
                #expect(list.lines.map { String($0.split(separator: "\t")[0]) } == ["x@example.org,alice@example.net"], "--\(option): \(list)")
            }
        } else {
            Issue.record("fish is not installed (apt-get install fish)")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") {
            let zsh = try f.shell("zsh -n \(root)/completions/zsh/_hd-send && echo ok")
            #expect(zsh.stdout == "ok\n", "\(zsh)")
        }
    }

    @Test("zsh: the --to, --cc and --bcc actions of _hd-send offer hd-address's addresses, and keep a list before a comma",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is not installed (apt-get install zsh)"))
    func zsh() throws {
        let f = try fixture()
        let script = try String(contentsOfFile: FakeGmail.repositoryRoot.path + "/completions/zsh/_hd-send", encoding: .utf8)
        for option in ["to", "cc", "bcc"] {
            // The action as the script declares it: '--to[...]:ADDRESS:{ACTION}'.
            let line = try #require(script.split(separator: "\n").first { $0.contains("'--\(option)[") && $0.contains(":ADDRESS:{") })
            let start = try #require(line.range(of: ":ADDRESS:{"))
            let end = try #require(line.range(of: "}'", options: .backwards))
            let action = String(line[start.upperBound..<end.lowerBound])
            // Run in a real zsh with the two completion builtins it calls stood in for:
            // compset -P moves the longest matching prefix to IPREFIX, compadd -a prints
            // what would be inserted.
            func offered(_ prefix: String) throws -> [String] {
                let result = try f.shell("""
                    zsh -f -c 'compset() { local p=${(M)PREFIX##$~2}; IPREFIX+=$p; PREFIX=${PREFIX#$p} }
                    compadd() { local -a items; items=("${(@P)2}"); (( $#items )) && print -rl -- $IPREFIX${^items}; return 0 }
                    PREFIX=$1 IPREFIX=; \(action.replacingOccurrences(of: "'", with: "'\\''"))' zsh '\(prefix)'
                    """)
                #expect(result.status == 0 && result.stderr.isEmpty, "\(option): \(result)")
                return result.lines
            }
            #expect(try offered("ali") == ["alice@example.net"], "--\(option)")
            #expect(try offered("x@example.org,ali") == ["x@example.org,alice@example.net"], "--\(option)")
            #expect(try offered("zzz").isEmpty, "--\(option)")
        }
    }

    @Test("hd-send warns on standard error, --dry-run too, of a recipient one edit from one written to; not of one written to")
    func nearMiss() throws {
        let f = try fixture()
        let warned = try f.run("hd-send", "--dry-run", "--to", "alise@example.net", "--cc", "alice@example.net",
                               "--subject", "s", stdin: "Body.\n")
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.stderr == "hd-send: alise@example.net: never written to, one letter from alice@example.net, written to before; is it the one you meant?\n",
                "\(warned)")
        let fine = try f.run("hd-send", "--dry-run", "--to", "alice@example.net", "--bcc", "zed@example.org",
                             "--subject", "s", stdin: "Body.\n")
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine)")
    }
}
