// docs/schema.sql is the store's current schema in one place to read (issue 38 §1): the
// migrations in Sources/HudsonStore/Schema/ say how it came to be, this file says what it
// is. A store made by the migrations must have exactly this schema.
import Foundation
import HudsonStore
import HudsonTestSupport
import Testing

@Suite("docs/schema.sql is the schema a freshly migrated store has")
struct SchemaDocumentTests {
    static let header = """
        -- The schema of a Hudson store after every migration (Sources/HudsonStore/Schema/),
        -- as SQLite keeps it: each table, index, view and trigger, by kind then name.
        -- Checked by Tests/CLITests/SchemaDocumentTests.swift; a new migration updates it.

        """

    /// The schema of a new store, as `sqlite3` reads it from `sqlite_schema`.
    static func freshSchema() throws -> String {
        let dir = TemporaryDirectory()
        let path = dir.path("fresh.sqlite3")
        _ = try Store.open(path: path, access: .create)
        let query = """
            SELECT sql || ';' || char(10) FROM sqlite_schema WHERE sql IS NOT NULL
             ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, name;
            """
        let result = try CommandRunner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-batch", "-readonly", path, query],
                                           environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result)")
        return header + result.stdout
    }

    @Test("the checked-in schema equals the migrated one (on a difference, the new one is written to .build/schema.sql)")
    func schemaMatches() throws {
        let fresh = try Self.freshSchema()
        let documented = FakeGmail.repositoryRoot.appendingPathComponent("docs/schema.sql")
        let checkedIn = try? String(contentsOf: documented, encoding: .utf8)
        if checkedIn != fresh {
            let written = FakeGmail.repositoryRoot.appendingPathComponent(".build/schema.sql")
            try? fresh.write(to: written, atomically: true, encoding: .utf8)
            Issue.record("docs/schema.sql differs from a freshly migrated store: see `diff docs/schema.sql .build/schema.sql`, then copy it")
        }
    }
}
