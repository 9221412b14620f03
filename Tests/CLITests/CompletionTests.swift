import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

/// Every hd-* command, from the sources.
let commandNames: [String] = {
    let sources = FakeGmail.repositoryRoot.appendingPathComponent("Sources")
    return ((try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []).filter { $0.hasPrefix("hd-") }.sorted()
}()

func repositoryFile(_ path: String) -> String? {
    try? String(contentsOf: FakeGmail.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
}

/// The long options a command declares (its own and the common ones), hidden ones left out,
/// per subcommand ("" for a command without subcommands).
func declaredOptions(_ command: String) throws -> [String: [String]] {
    let result = try CommandRunner.run(BuiltProducts.executable(command), ["--declaration"], environment: [:])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    func options(_ spec: [String: Any]) -> [String] {
        (spec["options"] as? [[String: Any]] ?? []).filter { ($0["hidden"] as? Bool) != true }.compactMap { $0["long"] as? String }
    }
    let subcommands = object["subcommands"] as? [[String: Any]] ?? []
    if subcommands.isEmpty { return ["": options(object)] }
    var all: [String: [String]] = [:]
    for sub in subcommands { all[sub["name"] as? String ?? ""] = options(sub) }
    return all
}

@Suite("Completions and declarations")
struct CompletionTests {
    /// A store with the labels and account the completions offer.
    func fixture() throws -> CLIFixture {
        let f = CLIFixture()
        try f.standardMailbox()
        f.environment["PATH"] = BuiltProducts.directory.path + ":/usr/bin:/bin"
        return f
    }

    @Test("the checked-in completion scripts are exactly what the declarations generate")
    func checkedInMatchesGenerated() throws {
        #expect(commandNames.count >= 9)
        for command in commandNames {
            for (shell, path) in [("bash", "completions/bash/\(command)"), ("zsh", "completions/zsh/_\(command)"),
                                  ("fish", "completions/fish/\(command).fish")] {
                let generated = try CommandRunner.run(BuiltProducts.executable(command), ["--generate-completion", shell], environment: [:])
                #expect(generated.status == 0)
                #expect(repositoryFile(path) == generated.stdout, "\(path) is stale: run scripts/completions")
            }
        }
    }

    @Test("every declared option is in --help and in the bash, zsh and fish completions")
    func optionsEverywhere() throws {
        for command in commandNames {
            for (subcommand, options) in try declaredOptions(command) {
                let help = try CommandRunner.run(BuiltProducts.executable(command), (subcommand.isEmpty ? [] : [subcommand]) + ["--help"],
                                                 environment: [:]).stdout
                let scripts = ["completions/bash/\(command)", "completions/zsh/_\(command)", "completions/fish/\(command).fish"]
                    .map { repositoryFile($0) ?? "" }
                for option in options {
                    #expect(help.contains("--\(option)"), "\(command) \(subcommand) --help lacks --\(option)")
                    #expect(scripts[0].contains("--\(option)"), "bash completion of \(command) lacks --\(option)")
                    #expect(scripts[1].contains("--\(option)"), "zsh completion of \(command) lacks --\(option)")
                    #expect(scripts[2].contains("-l \(option)"), "fish completion of \(command) lacks --\(option)")
                }
            }
        }
    }

    /// Runs a completion function in a real bash and returns COMPREPLY.
    func bashComplete(_ f: CLIFixture, _ command: String, _ line: String, words: [String]) throws -> [String] {
        let function = "_hudson_" + command.replacingOccurrences(of: "-", with: "_")
        let script = """
            source '\(FakeGmail.repositoryRoot.path)/completions/bash/\(command)'
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
            \(function); printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try f.shell(script)
        #expect(result.status == 0, "\(result)")
        return result.lines
    }

    @Test("bash completes an option, an action, a label action and label names from the store")
    func bash() throws {
        let f = try fixture()
        #expect(try bashComplete(f, "hd-search", "hd-search --li", words: ["hd-search", "--li"]) == ["--limit"])
        #expect(try bashComplete(f, "hd-mark", "hd-mark ar", words: ["hd-mark", "ar"]) == ["archive"])
        #expect(try bashComplete(f, "hd-mark", "hd-mark +Wo", words: ["hd-mark", "+Wo"]) == ["+Work"])
        #expect(try bashComplete(f, "hd-ls", "hd-ls --label Tra", words: ["hd-ls", "--label", "Tra"]) == ["Travel/2026"])
        // ':' is a word break in bash: "label:Tra" arrives as three words, and the reply leaves out "label:".
        #expect(try bashComplete(f, "hd-search", "hd-search label:Tra", words: ["hd-search", "label", ":", "Tra"]) == ["Travel/2026"])
        #expect(try bashComplete(f, "hd-search", "hd-search is:un", words: ["hd-search", "is", ":", "un"]) == ["unread"])
        #expect(try bashComplete(f, "hd-auth", "hd-auth l", words: ["hd-auth", "l"]) == ["login", "list"])
    }

    @Test("the zsh scripts load in a real zsh, and fish completes from the same declarations")
    func zshAndFish() throws {
        let f = try fixture()
        let root = FakeGmail.repositoryRoot.path
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") {
            let load = try f.shell("""
                zsh -c 'fpath=(\(root)/completions/zsh $fpath); autoload -Uz compinit; compinit -u -d "$HOME/.zcompdump"; \
                for f in \(root)/completions/zsh/_hd-*; do zsh -n "$f" || exit 1; autoload -Uz ${f:t} || exit 1; done; \
                (( $+_comps[hd-search] )) && (( $+_comps[hd-mark] )) && echo loaded'
                """)
            #expect(load.stdout == "loaded\n", "\(load)")
        } else {
            Issue.record("zsh is not installed (apt-get install zsh): the zsh scripts were not checked")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") {
            let fish = try f.shell("""
                fish -c 'for f in \(root)/completions/fish/*.fish; source $f; or exit 1; end; \
                complete -C "hd-search --li"; complete -C "hd-search label:Tra"; complete -C "hd-mark ar"; complete -C "hd-mark +Wo"'
                """)
            #expect(fish.status == 0, "\(fish)")
            #expect(fish.lines.map { String($0.split(separator: "\t")[0]) } == ["--limit", "label:Travel/2026", "archive", "+Work"])
        } else {
            Issue.record("fish is not installed (apt-get install fish): the fish scripts were not checked")
        }
    }
}
