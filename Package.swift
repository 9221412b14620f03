// swift-tools-version:6.0
//
// Hudson: a local-first Gmail toolkit of small Unix commands over one SQLite file.
// Dependencies point one way only (docs/architecture.md):
//
//   CSQLite <- SQLite <- HudsonStore -> HudsonMail
//
// No outside packages: this machine fetches none, and a user's should not have to.
import PackageDescription

let package = Package(
    name: "Hudson",
    products: [
        .library(name: "HudsonCore", targets: ["SQLite", "HudsonMail", "HudsonStore"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "HudsonMail"),
        .target(name: "HudsonStore", dependencies: ["SQLite", "HudsonMail"]),

        // Test tooling: a tiny executable the store tests start as separate processes
        // (two migrators racing, a writer holding the lock). Not installed.
        .executableTarget(
            name: "hudson-store-helper",
            dependencies: ["HudsonStore", "SQLite"],
            path: "Tests/Helpers/hudson-store-helper"
        ),

        .target(name: "HudsonTestSupport", path: "Tests/HudsonTestSupport"),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "HudsonTestSupport"]),
        .testTarget(
            name: "HudsonStoreTests",
            dependencies: ["HudsonStore", "SQLite", "HudsonTestSupport"],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
