// swift-tools-version:6.0
//
// Hudson: a local-first Gmail toolkit of small Unix commands over one SQLite file.
// Dependencies point one way only (docs/architecture.md):
//
//   HudsonText <- HudsonOutput;  HudsonText <- HudsonStore
//   CSQLite <- SQLite <- HudsonStore -> HudsonMail, HudsonQuery, HudsonText, GmailIDShape
//   GmailIDShape <- HudsonGmail
//   HudsonStore, HudsonGmail, HudsonMail, HudsonQuery, GmailIDShape <- HudsonSync
//   HudsonOutput, HudsonStore, HudsonMail <- HudsonCLI
//   SQLite, HudsonGmail <- HudsonQuotaLedger
//   SQLite, HudsonStore, HudsonMail, GmailIDShape <- HudsonExport
//   HudsonCLI <- HudsonCommands
//   HudsonCLI, HudsonGmail, HudsonSync, HudsonQuotaLedger, HudsonExport <- HudsonNetworkCommands
//   HudsonCLI, HudsonStore, HudsonMail, HudsonQuery, HudsonOutput <- HudsonMCP <- HudsonCommands (hd-mcp)
//
// The local commands link HudsonCLI only, so they start without Foundation; the
// commands that talk to Gmail are HudsonNetworkCommands. No outside packages: this machine
// fetches none, and a user's should not have to.
import PackageDescription

// The local commands (the read commands, hd-show, hd-mark, hd-undo) link nothing beyond the
// Swift runtime, SQLite and the C library, so their release builds are fully static
// executables: no dynamic loader, no shared library to map or relocate. `hd-ls --version` then starts in under a millisecond,
// faster than `sqlite3 :memory: 'select 1'` (docs/performance.md). The
// commands that talk to Gmail need the system's libcurl and stay dynamic executables
// (with the Swift runtime linked in by --static-swift-stdlib).
let localCommandLinking: [LinkerSetting] = [
    .unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release)),
]

let package = Package(
    name: "Hudson",
    products: [
        .library(name: "HudsonCore", targets: [
            "SQLite", "DirectoryListing", "GmailIDShape", "HudsonQuery", "HudsonMail", "HudsonText", "HudsonStore", "HudsonOutput", "HudsonCLI", "HudsonGmail", "HudsonExport",
            "HudsonSync", "HudsonQuotaLedger", "HudsonMCP", "HudsonNetworkCommands",
        ]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "HudsonQuery"),
        // A directory's names read in place (readdir's records are shorter than `dirent`):
        // the one listing every command's directory reads go through.
        .target(name: "DirectoryListing"),
        .target(name: "HudsonMail", dependencies: ["DirectoryListing"]),
        // The shape of a Gmail id (issue 37 §1): the one rule for the ids users type (the
        // store's references), the ids put in requests and the ids read from answers.
        .target(name: "GmailIDShape"),
        // What text is safe to show, and text as the index holds it (TerminalSafety,
        // IndexText): below both the store, whose index holds text as a terminal shows it
        // (migrations 009 and 013, frozen as SQL functions), and the output, so a change to
        // how output is formatted cannot change what the index holds.
        .target(name: "HudsonText"),
        .target(name: "HudsonStore", dependencies: ["SQLite", "HudsonMail", "HudsonQuery", "HudsonText", "GmailIDShape"]),
        .target(name: "HudsonOutput", dependencies: ["HudsonText"]),
        .target(name: "HudsonGmail", dependencies: ["GmailIDShape", "DirectoryListing"]),
        .target(name: "HudsonSync", dependencies: ["HudsonStore", "HudsonGmail", "HudsonMail", "HudsonQuery", "GmailIDShape"]),
        // The per-user quota shared by every process of an account: a small SQLite file that
        // HudsonGmail's QuotaBucket consults through its QuotaLedger protocol.
        .target(name: "HudsonQuotaLedger", dependencies: ["SQLite", "HudsonGmail"]),
        .target(name: "HudsonCLI", dependencies: ["HudsonStore", "HudsonOutput", "HudsonQuery", "HudsonMail", "SQLite", "DirectoryListing"]),
        // hd-export's engine (issue 24 §2): Maildir, mboxrd and .eml exports, incremental by
        // the change sequence; the sources it lacks come from its caller.
        .target(name: "HudsonExport", dependencies: ["SQLite", "HudsonStore", "HudsonMail", "GmailIDShape", "DirectoryListing"]),

        // hd-mcp's protocol and tools (issue 40): MCP over stdio, each tool a thin layer over
        // what the commands call. Local, like them: it links no network code.
        .target(name: "HudsonMCP", dependencies: ["HudsonCLI", "HudsonStore", "HudsonMail", "HudsonQuery", "HudsonOutput"]),

        // The commands' bodies: the local commands, which link no network code, one file each
        // (Sources/HudsonCommands/hd-ls.swift...); and those that talk to Gmail (only they link
        // Foundation's networking), one folder each holding the command's declaration and
        // everything only it uses (Sources/HudsonNetworkCommands/hd-import/), what several
        // share in Shared/.
        .target(name: "HudsonCommands", dependencies: ["HudsonCLI", "HudsonMail", "HudsonOutput", "HudsonQuery", "HudsonStore", "HudsonMCP"]),
        .target(name: "HudsonNetworkCommands", dependencies: ["HudsonCLI", "HudsonGmail", "HudsonSync", "HudsonStore", "HudsonOutput",
                                                              "HudsonMail", "HudsonQuery", "HudsonQuotaLedger", "GmailIDShape",
                                                              "HudsonExport"]),

        // The commands: each one short main.swift that runs its body (STYLE.md rule 1). These
        // are what `swift build` and the tests run.
        .executableTarget(name: "hd-ls", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-search", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-labels", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-pending", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        // hd-mark and hd-undo hand their flush to `hd-sync --push` (HudsonCLI/QueuePush.swift),
        // and hd-show what it must fetch to `hd-sync --fetch` (HudsonCLI/FetchHelper.swift), so
        // they link no network code and are static like the read commands.
        .executableTarget(name: "hd-mark", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-undo", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-show", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-mcp", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-snooze", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-address", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-senders", dependencies: ["HudsonCommands"], linkerSettings: localCommandLinking),
        .executableTarget(name: "hd-auth", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-sync", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-send", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-drafts", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-filters", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-export", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-import", dependencies: ["HudsonNetworkCommands"]),
        .executableTarget(name: "hd-unsubscribe", dependencies: ["HudsonNetworkCommands"]),

        // What scripts/install installs: one multi-call binary per kind, each hd-* a link to
        // it (HudsonCLI/MultiCall.swift). One copy of the Swift runtime (and of Foundation)
        // per binary instead of one per command (docs/performance.md, "Installed size").
        .executableTarget(name: "hudson-local", dependencies: ["HudsonCLI", "HudsonCommands"],
                          linkerSettings: localCommandLinking),
        .executableTarget(name: "hudson-network", dependencies: ["HudsonCLI", "HudsonNetworkCommands"]),

        // Benchmark tooling (bench/): builds a store from NDJSON without HTTP, for sizes
        // the fake Gmail cannot hold. Not installed.
        .executableTarget(
            name: "hudson-bench-import",
            dependencies: ["HudsonStore", "HudsonSync", "HudsonGmail"],
            path: "bench/import"
        ),
        // A full-text index rebuilt as a batched migration, timed on a copy of a store
        // (bench/README.md). Not installed.
        .executableTarget(
            name: "hudson-bench-reindex",
            dependencies: ["SQLite", "HudsonText"],
            path: "bench/reindex"
        ),
        // What one admission of the shared quota costs (bench/README.md): a measurement,
        // not a test. Not installed.
        .executableTarget(
            name: "hudson-bench-quota",
            dependencies: ["HudsonQuotaLedger", "HudsonGmail"],
            path: "bench/quota"
        ),

        // Test tooling: a tiny executable the store tests start as separate processes
        // (two migrators racing, a writer holding the lock). Not installed.
        .executableTarget(
            name: "hudson-store-helper",
            dependencies: ["HudsonStore", "SQLite"],
            path: "Tests/Helpers/hudson-store-helper"
        ),

        // Test tooling for the reliability suite: a process it can kill mid-write. Not installed.
        .executableTarget(
            name: "hudson-reliability-helper",
            dependencies: ["HudsonGmail"],
            path: "Tests/Helpers/hudson-reliability-helper"
        ),

        .target(name: "HudsonTestSupport", path: "Tests/HudsonTestSupport"),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "HudsonTestSupport"]),
        .testTarget(name: "HudsonQueryTests", dependencies: ["HudsonQuery"]),
        .testTarget(name: "HudsonCLITests", dependencies: ["HudsonCLI", "HudsonCommands", "HudsonOutput", "HudsonText", "HudsonStore"]),
        .testTarget(name: "HudsonMailTests", dependencies: ["HudsonMail", "DirectoryListing"]),
        .testTarget(name: "HudsonExportTests", dependencies: ["HudsonExport", "HudsonStore", "HudsonTestSupport"]),
        .testTarget(name: "HudsonGmailTests", dependencies: ["HudsonGmail", "GmailIDShape"]),
        .testTarget(name: "HudsonQuotaLedgerTests", dependencies: ["HudsonQuotaLedger", "HudsonGmail", "SQLite", "HudsonTestSupport"]),
        .testTarget(name: "HudsonSyncTests", dependencies: ["HudsonSync", "HudsonGmail", "HudsonStore", "HudsonQuery", "HudsonTestSupport", "GmailIDShape", "HudsonMail"]),
        .testTarget(name: "CLITests", dependencies: ["SQLite", "HudsonStore", "HudsonMail", "HudsonTestSupport"], exclude: ["Snapshots"]),
        // Concurrency, crash, fault, file and hostile-input suites (docs/reliability.md).
        .testTarget(name: "ReliabilityTests", dependencies: ["HudsonStore", "SQLite", "HudsonTestSupport", "DirectoryListing"]),
        .testTarget(
            name: "HudsonStoreTests",
            dependencies: ["HudsonStore", "HudsonQuery", "SQLite", "HudsonTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
