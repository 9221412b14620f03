// Issue 42 in the store: list headers kept per message (migration 035, filled from stored
// sources), the address book kept by its triggers (migration 036), the unsubscribe rule.
import HudsonStore
import SQLite
import Testing

/// The address book counted again from scratch from message_addresses (written apart from the triggers).
private func addressBookCountedAgain(_ db: Connection) throws -> [String] {
    try db.map("""
        SELECT m.account_id, lower(a.address),
               sum(a.role <> 'from' AND EXISTS (SELECT 1 FROM message_labels AS l WHERE l.message_id = m.id AND l.label = 'SENT')),
               sum(a.role = 'from' AND NOT EXISTS (SELECT 1 FROM message_labels AS l WHERE l.message_id = m.id AND l.label = 'SENT')),
               count(*)
          FROM message_addresses AS a JOIN messages AS m ON m.id = a.message_id
         GROUP BY 1, 2 ORDER BY 1, 2
        """) { "\($0.int64(0)) \($0.string(1)) \($0.int(2)) \($0.int(3)) \($0.int(4))" }
}

private func addressBookStored(_ db: Connection) throws -> [String] {
    try db.map("SELECT account_id, lower(address), sent, received, seen FROM address_book ORDER BY 1, 2") {
        "\($0.int64(0)) \($0.string(1)) \($0.int(2)) \($0.int(3)) \($0.int(4))"
    }
}

private let signedSource = """
    From: News <news@lists.example.org>\r
    To: ann@example.com\r
    Subject: weekly\r
    DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s1;\r
     h=from:to:subject:list-unsubscribe:list-unsubscribe-post; bh=abc; b=def\r
    Authentication-Results: mx.google.com;\r
     dkim=pass header.i=@example.org header.s=s1 header.b=xyz\r
    List-Unsubscribe: <mailto:leave@lists.example.org?subject=unsubscribe>,\r
     <https://lists.example.org/u/123>\r
    List-Unsubscribe-Post: List-Unsubscribe=One-Click\r
    \r
    body\r

    """

@Suite("Senders in the store: list headers, the address book, unsubscribe offers")
struct SendersStoreTests {
    @Test("the address book follows snapshots, re-snapshots and deletions, as counted again from scratch")
    func addressBookKept() throws {
        let f = try StoreFixture()
        let report = try f.apply(f.snapshot("a", from: "Bob <bob@example.org>"),
                    f.snapshot("b", minute: 1, from: "Bob B <BOB@example.org>"),
                    f.snapshot("s", minute: 2, labels: ["SENT"], from: "Ann <ann@example.com>",
                               to: "Bob <bob@example.org>, Carol <carol@example.net>"))
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(try addressBookStored(f.db) == addressBookCountedAgain(f.db))
        let bob = try #require(try f.store.addresses(prefix: "bo", accountID: nil, limit: 10).first)
        #expect(bob.sent == 1 && bob.received == 2 && bob.name == "Bob")
        // A newer version of a message changes its addresses.
        try f.apply(f.snapshot("a", history: 200, from: "Dave <dave@example.org>"))
        #expect(try addressBookStored(f.db) == addressBookCountedAgain(f.db))
        _ = try f.store.deleteVanishedMessage(gmailID: "s", accountID: f.account.id)
        _ = try f.store.deleteVanishedMessage(gmailID: "b", accountID: f.account.id)
        #expect(try addressBookStored(f.db) == addressBookCountedAgain(f.db))
        #expect(try f.store.addresses(prefix: "carol", accountID: nil, limit: 10).isEmpty)
    }

    @Test("a SENT label added to a stored message, then its addresses rewritten or the message deleted: the snapshot and the deletion are stored, no count goes below zero")
    func sentLabelAddedLater() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("m", from: "Ann <ann@example.com>", to: "Bob <bob@example.org>"))
        // Gmail now says it is SENT, and another recipient: labels are written before addresses.
        let report = try f.apply(f.snapshot("m", history: 300, labels: ["SENT"], from: "Ann <ann@example.com>",
                                            to: "Carol <carol@example.net>"))
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(try f.db.scalarInt("SELECT count(*) FROM messages WHERE gmail_id = 'm' AND history_id = 300") == 1)
        #expect(try f.db.scalarInt("SELECT count(*) FROM address_book WHERE sent < 0 OR received < 0 OR seen < 0") == 0)
        _ = try f.store.deleteVanishedMessage(gmailID: "m", accountID: f.account.id)
        #expect(try f.db.scalarInt("SELECT count(*) FROM messages") == 0)
    }

    @Test("ranking: sent to, then received from, then recency; a prefix matches an address or a word of a name")
    func ranking() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("1", from: "Al Often <al.often@example.org>"),
                    f.snapshot("2", minute: 1, from: "Al Often <al.often@example.org>"),
                    f.snapshot("3", minute: 2, labels: ["SENT"], from: "Ann <ann@example.com>", to: "Alice Written <alice@example.net>"),
                    f.snapshot("4", minute: 3, from: "Alan Recent <alan@example.com>"))
        let ranked = try f.store.addresses(prefix: "al", accountID: f.account.id, limit: 10).map(\.address)
        #expect(ranked == ["alice@example.net", "al.often@example.org", "alan@example.com"])
        #expect(try f.store.addresses(prefix: "writ", accountID: nil, limit: 10).map(\.address) == ["alice@example.net"])
        #expect(try f.store.addresses(prefix: "%", accountID: nil, limit: 10).isEmpty)
        #expect(try f.store.addresses(prefix: "al", accountID: nil, limit: 1).count == 1)
    }

    @Test("a recipient never written to, one edit from one who was, is a near miss; one written to is not")
    func nearMisses() throws {
        let f = try StoreFixture()
        try f.apply(f.snapshot("s", labels: ["SENT"], from: "Ann <ann@example.com>", to: "alice@example.org"),
                    f.snapshot("r", minute: 1, from: "alise@example.org"))
        let misses = try f.store.nearMisses(["alise@example.org", "ALICE@example.org", "zed@example.org", "laice@example.org"],
                                            accountID: nil)
        #expect(misses == [NearMiss(typed: "alise@example.org", known: "alice@example.org"),
                           NearMiss(typed: "laice@example.org", known: "alice@example.org")])
    }

    @Test("a snapshot's list headers are stored and known; the migration fills them from stored sources and leaves the rest unknown")
    func listHeadersBackfilled() throws {
        let f = try StoreFixture()
        var snapshot = f.snapshot("kept")
        snapshot.headers.list = ListHeaders(unsubscribe: "<https://x.example.org/u>", unsubscribePost: "List-Unsubscribe=One-Click")
        try f.apply(snapshot, f.snapshot("sourced", minute: 1), f.snapshot("unknown", minute: 2))
        try f.store.saveSources([(gmailID: "sourced", source: Array(signedSource.utf8))], accountID: f.account.id)
        #expect(try f.store.listHeaderCoverage(accountID: nil) == ListHeaderCoverage(known: 3, unknown: 0))
        // Back to a store of before migrations 035 and 036, as an older Hudson left it.
        try f.db.execute("""
            DROP TRIGGER address_book_insert; DROP TRIGGER address_book_delete; DROP TRIGGER address_book_message_delete;
            DROP TABLE address_book; DROP TABLE unsubscribes;
            ALTER TABLE messages DROP COLUMN list_unsubscribe; ALTER TABLE messages DROP COLUMN list_unsubscribe_post;
            ALTER TABLE messages DROP COLUMN authentication_results; ALTER TABLE messages DROP COLUMN dkim_signatures;
            ALTER TABLE messages DROP COLUMN list_headers_known;
            DELETE FROM hudson_migrations WHERE id IN ('035_list_headers', '036_address_book');
            """)
        let store = try Store.open(path: f.path, access: .readWrite)
        #expect(try store.listHeaderCoverage(accountID: nil) == ListHeaderCoverage(known: 1, unknown: 2))
        let row = try #require(try store.db.first("""
            SELECT list_unsubscribe, list_unsubscribe_post, authentication_results, dkim_signatures FROM messages WHERE gmail_id = 'sourced'
            """) { [$0.optionalString(0), $0.optionalString(1), $0.optionalString(2), $0.optionalString(3)] })
        #expect(row[0] == "<mailto:leave@lists.example.org?subject=unsubscribe>, <https://lists.example.org/u/123>")
        #expect(row[1] == "List-Unsubscribe=One-Click")
        #expect(row[2] == "mx.google.com; dkim=pass header.i=@example.org header.s=s1 header.b=xyz")
        #expect(row[3] == "d=example.org; s=s1; h=from:to:subject:list-unsubscribe:list-unsubscribe-post")
        #expect(try addressBookStored(store.db) == addressBookCountedAgain(store.db))
        #expect(try !addressBookStored(store.db).isEmpty)
    }

    @Test("one-click only with both headers, a safe https URI and a passing DKIM signature that covers both")
    func oneClickConditions() {
        let good = ListHeaders(source: Array(signedSource.utf8))
        let from = "news@lists.example.org"
        let offer = UnsubscribeOffer(good, from: from)
        #expect(offer.oneClick == "https://lists.example.org/u/123")
        #expect(offer.methods == [.oneClick, .https, .mailto])
        #expect(offer.mailto == MailtoRequest(address: "leave@lists.example.org", subject: "unsubscribe", body: nil))

        func variant(_ change: (inout ListHeaders) -> Void) -> UnsubscribeOffer {
            var headers = good
            change(&headers)
            return UnsubscribeOffer(headers, from: from)
        }
        #expect(variant { $0.unsubscribePost = nil }.oneClick == nil)
        #expect(variant { $0.unsubscribePost = "List-Unsubscribe=Yes" }.oneClick == nil)
        #expect(variant { $0.authenticationResults = nil }.oneClick == nil)
        #expect(variant { $0.authenticationResults = "mx.google.com; dkim=fail header.i=@example.org header.s=s1" }.oneClick == nil)
        #expect(variant { $0.authenticationResults = "evil.example; dkim=pass header.i=@example.org header.s=s1" }.oneClick == nil)
        #expect(variant { $0.authenticationResults = "mx.google.com; dkim=pass header.i=@other.example header.s=s1" }.oneClick == nil)
        #expect(variant { $0.authenticationResults = "mx.google.com; dkim=pass header.i=@example.org header.s=s2" }.oneClick == nil)
        #expect(variant { $0.dkimSignatures = "d=example.org; s=s1; h=from:to:list-unsubscribe" }.oneClick == nil)
        #expect(variant { $0.dkimSignatures = nil }.oneClick == nil)
        // A subdomain of the signing domain passed (header.i=@lists.example.org, the From's) is covered.
        #expect(variant { $0.authenticationResults = "mx.google.com; dkim=pass (good) header.i=@lists.example.org header.s=s1" }
            .oneClick != nil)
        // The https URI must be safe to request.
        for uri in ["javascript:alert(1)", "file:///etc/passwd", "http://lists.example.org/u", "https://127.0.0.1/u",
                    "https://[::1]/u", "https://user:pw@lists.example.org/u", "https://lists.example.org@evil.example/u",
                    "https://0x7f000001/u", "https://localhost/u", "https://lists.example.org:99999/u",
                    "https://" + String(repeating: "a", count: 2100) + ".example.org/", "https://lists.example.org/\u{1B}[2J"] {
            let offer = variant { $0.unsubscribe = "<\(uri)>" }
            #expect(offer.oneClick == nil && offer.https == nil, "\(uri)")
        }
        #expect(UnsubscribeOffer(ListHeaders(unsubscribe: "<http://127.0.0.1:8080/u>"), from: from).https == nil)
        #expect(UnsubscribeOffer(ListHeaders(unsubscribe: "<http://127.0.0.1:8080/u>"), from: from, allowLoopbackHTTP: true).https != nil)
    }

    @Test("no one-click and no mailto unless the passing signature aligns with From, every signature of its domain and selector covers both headers, and each header occurs once")
    func oneClickAgainstForgery() {
        let good = ListHeaders(source: Array(signedSource.utf8))
        #expect(UnsubscribeOffer(good, from: "news@lists.example.org").methods == [.oneClick, .https, .mailto])
        // From a domain the signature does not vouch for (mail signed by the attacker's own
        // domain claiming to be the bank's), or unknown: the page only.
        for from in ["news@bank.example.com", "news@example.org.evil.example", nil] as [String?] {
            let offer = UnsubscribeOffer(good, from: from)
            #expect(offer.oneClick == nil && offer.mailto == nil && offer.https != nil, "\(from ?? "nil")")
        }
        // A forged second signature of the same d= and s= that does not cover the headers.
        var forged = good
        forged.dkimSignatures = (good.dkimSignatures ?? "") + "\nd=example.org; s=s1; h=from:to:subject"
        #expect(UnsubscribeOffer(forged, from: "news@lists.example.org").oneClick == nil)
        // A List-Unsubscribe prepended above a signed message: two of them, no offer at all.
        let prepended = "List-Unsubscribe: <https://attacker.example.net/x>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"
            + signedSource
        let twice = ListHeaders(source: Array(prepended.utf8))
        #expect(twice.unsubscribe == nil && UnsubscribeOffer(twice, from: "news@lists.example.org").methods.isEmpty)
        // A mailto to a domain other than the sender's is not sent.
        var elsewhere = good
        elsewhere.unsubscribe = "<mailto:ceo@victim-corp.example.net?subject=hi>, <https://lists.example.org/u/123>"
        #expect(UnsubscribeOffer(elsewhere, from: "news@lists.example.org").mailto == nil)
        // Ports and names that point inside the user's network.
        for uri in ["https://lists.example.org:8443/u", "https://lists.example.org:443/u", "https://x.localhost/u",
                    "https://printer.local/u", "https://admin.corp/u", "https://router.home.arpa/u", "https://db.internal/u"] {
            #expect(UnsubscribeOffer.isSafeHTTPS(uri) == (uri == "https://lists.example.org:443/u"), "\(uri)")
        }
    }

    @Test("an Authentication-Results or DKIM summary over the bound is not kept cut: a cut inside a longer domain is no pass")
    func overlongVerdictNotCut() {
        // Cut at the bound, `header.i=@news.example.org.attacker.example` would end `@news.example.org`.
        let pass = "dkim=pass header.i=@news.example.org"
        let filler = "mx.google.com; " + String(repeating: "dkim=fail header.i=@x.example; ", count: 100)
        let padding = String(repeating: " ", count: ListHeaders.maximumValueBytes - filler.utf8.count - pass.utf8.count)
        let results = filler + padding + pass + ".attacker.example header.s=s1"
        let headers = ListHeaders(headers: [
            (name: "List-Unsubscribe", value: "<https://news.example.org/u>"),
            (name: "List-Unsubscribe-Post", value: "List-Unsubscribe=One-Click"),
            (name: "Authentication-Results", value: results),
            (name: "DKIM-Signature", value: "v=1; d=news.example.org; s=s1; h=from:list-unsubscribe:list-unsubscribe-post; b=x"),
        ])
        #expect(headers.authenticationResults == nil)
        #expect(headers.unsubscribe == "<https://news.example.org/u>" && headers.dkimSignatures != nil)
        #expect(UnsubscribeOffer(headers, from: "news@news.example.org").oneClick == nil)
        // Signatures whose summaries together pass the bound: none kept.
        let many = (0..<100).map { (name: "DKIM-Signature", value: "d=s\($0).news.example.org; s=s1; h=" + String(repeating: "from:", count: 20)) }
        #expect(ListHeaders(headers: [(name: "List-Unsubscribe", value: "<https://news.example.org/u>")] + many).dkimSignatures == nil)
    }

    @Test("migration 038 empties the verdicts an earlier Hudson kept cut at the bound, and leaves shorter ones")
    func verdictsKeptCutEmptied() throws {
        let f = try StoreFixture()
        var cut = f.snapshot("cut")
        cut.headers.list = ListHeaders(unsubscribe: "<https://news.example.org/u>", authenticationResults: "mx.google.com; x")
        var whole = f.snapshot("whole", minute: 1)
        whole.headers.list = ListHeaders(unsubscribe: "<https://news.example.org/u>", authenticationResults: "mx.google.com; y",
                                         dkimSignatures: "d=news.example.org; s=s1; h=from")
        try f.apply(cut, whole)
        // As the earlier rule kept it: the first 4,096 bytes.
        let kept = String(String(repeating: "mx.google.com; dkim=pass header.i=@news.example.org", count: 100).utf8.prefix(4096))!
        try f.db.execute("UPDATE messages SET authentication_results = ?, dkim_signatures = ? WHERE gmail_id = 'cut'", kept, kept)
        try f.db.execute("DELETE FROM hudson_migrations WHERE id = '038_list_verdicts_never_cut'")
        let store = try Store.open(path: f.path, access: .readWrite)
        let rows = try store.db.map("SELECT gmail_id, authentication_results, dkim_signatures FROM messages ORDER BY gmail_id") {
            "\($0.string(0)) \($0.optionalString(1) ?? "-") \($0.optionalString(2) ?? "-")"
        }
        #expect(rows == ["cut - -", "whole mx.google.com; y d=news.example.org; s=s1; h=from"])
    }

    @Test("mailto: one plain address, subject and body decoded, nothing else taken from the URI")
    func mailtoURIs() {
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org?subject=Stop%20it&body=bye&cc=x@example.org&bcc=y@example.org")
            == MailtoRequest(address: "a@example.org", subject: "Stop it", body: "bye"))
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org,b@example.org") == nil)
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org?subject=x%0D%0ABcc:%20z@example.org") == MailtoRequest(address: "a@example.org"))
        #expect(UnsubscribeOffer.mailto("mailto:%3Ca@example.org%3E") == nil)
        #expect(UnsubscribeOffer.mailto("mailto:a@127.0.0.1") == nil)
        #expect(UnsubscribeOffer.mailto("https://example.org") == nil)
    }

    @Test("mailto: line breaks (RFC 6068 %0D%0A) kept in the body as CRLF, refused in the subject; other controls refused")
    func mailtoBodyLineBreaks() {
        #expect(UnsubscribeOffer.mailto("mailto:stop@body.example.org?subject=remove&body=unsubscribe%20list%0D%0Aaddress%20demo")
            == MailtoRequest(address: "stop@body.example.org", subject: "remove", body: "unsubscribe list\r\naddress demo"))
        // A lone LF or CR is a line break too, written as CRLF.
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org?body=one%0Atwo%0Dthree%0D%0A%0D%0Afour")?.body
            == "one\r\ntwo\r\nthree\r\n\r\nfour")
        // In the subject a line break is still refused (the subject only: the rest is kept).
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org?subject=x%0D%0ABcc:%20z@example.org&body=a%0D%0Ab")
            == MailtoRequest(address: "a@example.org", body: "a\r\nb"))
        // Other controls, in the body too.
        for control in ["%00", "%1B", "%7F", "%0B", "%0C"] {
            #expect(UnsubscribeOffer.mailto("mailto:a@example.org?body=a\(control)b")?.body == nil, "\(control)")
        }
        #expect(UnsubscribeOffer.mailto("mailto:a@example.org%0D%0A?body=x") == nil)
    }

    @Test("one-click's address rule: a name resolving to this machine or a private network, or to nothing, is refused")
    func privateAddresses() {
        func v6(_ groups: [UInt16]) -> [UInt8] { groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }
        let privateV4: [[UInt8]] = [[0, 0, 0, 0], [10, 1, 2, 3], [127, 0, 0, 1], [127, 255, 255, 254], [169, 254, 169, 254],
                                    [172, 16, 0, 1], [172, 31, 255, 255], [192, 168, 1, 1], [100, 64, 0, 1], [100, 127, 255, 255],
                                    [192, 0, 0, 8], [198, 18, 0, 1], [224, 0, 0, 1], [255, 255, 255, 255]]
        let publicV4: [[UInt8]] = [[8, 8, 8, 8], [172, 15, 255, 255], [172, 32, 0, 1], [100, 63, 255, 255], [100, 128, 0, 1],
                                   [169, 253, 1, 1], [192, 169, 0, 1], [93, 184, 216, 34], [11, 0, 0, 1]]
        for address in privateV4 { #expect(UnsubscribeOffer.isPrivate(v4: address), "\(address)") }
        for address in publicV4 { #expect(!UnsubscribeOffer.isPrivate(v4: address), "\(address)") }
        let privateV6 = [v6([0, 0, 0, 0, 0, 0, 0, 0]), v6([0, 0, 0, 0, 0, 0, 0, 1]), v6([0xFC00, 0, 0, 0, 0, 0, 0, 1]),
                         v6([0xFD12, 0x3456, 0, 0, 0, 0, 0, 1]), v6([0xFE80, 0, 0, 0, 0, 0, 0, 1]), v6([0xFEBF, 0, 0, 0, 0, 0, 0, 1]),
                         v6([0xFF02, 0, 0, 0, 0, 0, 0, 1]),
                         // IPv4-mapped: ::ffff:127.0.0.1, ::ffff:10.0.0.1, ::ffff:169.254.169.254
                         v6([0, 0, 0, 0, 0, 0xFFFF, 0x7F00, 0x0001]), v6([0, 0, 0, 0, 0, 0xFFFF, 0x0A00, 0x0001]),
                         v6([0, 0, 0, 0, 0, 0xFFFF, 0xA9FE, 0xA9FE])]
        let publicV6 = [v6([0x2001, 0x4860, 0x4860, 0, 0, 0, 0, 0x8888]), v6([0xFEC0, 0, 0, 0, 0, 0, 0, 1]),
                        v6([0, 0, 0, 0, 0, 0xFFFF, 0x0808, 0x0808]), v6([0x2606, 0x2800, 0x220, 1, 0x248, 0x1893, 0x25C8, 0x1946])]
        for address in privateV6 { #expect(UnsubscribeOffer.isPrivate(v6: address), "\(address)") }
        for address in publicV6 { #expect(!UnsubscribeOffer.isPrivate(v6: address), "\(address)") }
        // A malformed address counts as private: never requested.
        #expect(UnsubscribeOffer.isPrivate(v4: [1, 2, 3]) && UnsubscribeOffer.isPrivate(v6: [0xFE]))
        // The refusal: nothing resolved, or any one address inside, is enough to refuse.
        #expect(UnsubscribeOffer.privateAddressRefusal([]) == "the name does not resolve")
        #expect(UnsubscribeOffer.privateAddressRefusal([[93, 184, 216, 34], publicV6[0]]) == nil)
        for inside in [[127, 0, 0, 1], [10, 0, 0, 1], privateV6[1], privateV6[7]] as [[UInt8]] {
            #expect(UnsubscribeOffer.privateAddressRefusal([[93, 184, 216, 34], inside])?.contains("private network") == true, "\(inside)")
        }
    }

    @Test("generated header values: no crash, bounded values, and only safe URIs offered (seed printed)")
    func generatedHeaders() {
        var state: UInt64 = 4242
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let pieces = ["<", ">", ",", "https://", "http://", "mailto:", "a@b.example", "news.example.org", "/u", "?", "&",
                      "subject=", "%0D%0A", "%", "%zz", "javascript:", "file:///", "@", ":", "443", "[::1]", "127.0.0.1",
                      " ", "\r\n ", "\u{1B}[2J", "é", "(c)", ";", "=", "d=news.example.org", "s=s1", "h=list-unsubscribe:list-unsubscribe-post",
                      "mx.google.com", "dkim=pass", "header.i=@news.example.org", "List-Unsubscribe=One-Click",
                      String(repeating: "x", count: 3000)]
        for round in 0..<500 {
            func value() -> String { (0..<Int(next() % 12)).map { _ in pieces[Int(next() % UInt64(pieces.count))] }.joined() }
            let headers = ListHeaders(headers: [
                (name: "List-Unsubscribe", value: value()), (name: "List-Unsubscribe-Post", value: value()),
                (name: "Authentication-Results", value: "mx.google.com; " + value()),
                (name: "DKIM-Signature", value: value()), (name: "DKIM-Signature", value: value()),
            ])
            for field in [headers.unsubscribe, headers.unsubscribePost, headers.authenticationResults, headers.dkimSignatures] {
                #expect((field?.utf8.count ?? 0) <= ListHeaders.maximumValueBytes, "seed 4242 round \(round)")
                #expect(!(field ?? "").contains("\r") && !(field ?? "").contains("\u{1B}"), "seed 4242 round \(round)")
            }
            let offer = UnsubscribeOffer(headers, from: "a@news.example.org")
            for uri in [offer.oneClick, offer.https].compactMap({ $0 }) {
                #expect(UnsubscribeOffer.isSafeHTTPS(uri) && uri.lowercased().hasPrefix("https://"), "seed 4242 round \(round): \(uri)")
            }
            if let mailto = offer.mailto {
                #expect(!mailto.address.contains(",") && !(mailto.subject ?? "").contains("\n"), "seed 4242 round \(round)")
            }
        }
    }
}
