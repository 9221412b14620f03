/*!
 Search fidelity for what only a message's structure tells (issue 37 §4). `has:attachment`
 is Gmail's answer once the message's body is stored (a part with a filename, gmail-api.md
 §8) or once Gmail itself has said which messages it calls `has:attachment`
 (`recordAttachmentAnswers`, from HudsonSync's AttachmentCensus); until then it is a guess
 from the top-level Content-Type, and `filename:` cannot be known at all. Search says so:
 `attachmentGuesses` counts the matches that rest on a guess and the messages that may
 match too, as word searches count the messages whose body they could not read.

 `larger:` and `smaller:` need nothing of this: they compare Gmail's `sizeEstimate`, which
 every snapshot carries (format=metadata, gmail-api.md §2.3), body or not.
 */
import HudsonQuery
import SQLite

/// How much of a search's answer rests on guessed attachments.
public struct AttachmentGuesses: Equatable, Sendable {
    /// Matching messages that match only by a guess about their attachments.
    public var guessedMatches: Int
    /// Messages that do not match, but would if a guess about them were wrong.
    public var mayAlsoMatch: Int
    /// The query's operators that read attachments, as written: `has:attachment`, `filename:`.
    public var terms: [String]

    public init(guessedMatches: Int, mayAlsoMatch: Int, terms: [String]) {
        self.guessedMatches = guessedMatches
        self.mayAlsoMatch = mayAlsoMatch
        self.terms = terms
    }
}

extension Store {
    /// How many of the query's matching messages rest on a guess about attachments, and
    /// how many others may match: nil when the query reads no attachment (`has:attachment`,
    /// `filename:`) or nothing rests on a guess. Three counts of the one compiled query
    /// (SearchCompiler.AttachmentReading): as stored, with every unknown answered the way
    /// that matches the fewest, and the most.
    public func attachmentGuesses(_ query: Query, options: SearchOptions) throws -> AttachmentGuesses? {
        let terms = Self.attachmentTerms(query.root)
        guard !terms.isEmpty else { return nil }
        return try db.read {
            // Nothing rests on a guess when every flag is known and every body stored: two
            // seeks on the partial indexes of what is not.
            guard try db.scalarInt("""
                SELECT EXISTS (SELECT 1 FROM messages INDEXED BY messages_attachment_guessed
                                WHERE attachment_known = 0 AND (?1 IS NULL OR account_id = ?1))
                    OR EXISTS (SELECT 1 FROM messages INDEXED BY messages_needing_body
                                WHERE body_state = 0 AND (?1 IS NULL OR account_id = ?1))
                """, options.accountID) == 1 else { return nil }
            func count(_ reading: SearchCompiler.AttachmentReading) throws -> Int {
                var compiler = try searchCompiler(options)
                compiler.attachmentReading = reading
                let compiled = try compiler.compile(query)
                return Int(try db.prepare("SELECT count(*) \(compiled.fromAndWhere)").first(compiled.arguments) { $0.int64(0) } ?? 0)
            }
            let stored = try count(.stored)
            let guesses = AttachmentGuesses(guessedMatches: stored - (try count(.least)), mayAlsoMatch: try count(.most) - stored,
                                            terms: terms)
            return guesses.guessedMatches == 0 && guesses.mayAlsoMatch == 0 ? nil : guesses
        }
    }

    /// `has:attachment` and `filename:`, those of them the query has.
    static func attachmentTerms(_ node: QueryNode) -> [String] {
        var has = false
        var filename = false
        func walk(_ node: QueryNode) {
            switch node {
            case .all: break
            case .not(let child): walk(child)
            case .and(let children), .or(let children): children.forEach(walk)
            case .term(.has(.attachment)): has = true
            case .term(.filename): filename = true
            case .term: break
            }
        }
        walk(node)
        return (has ? ["has:attachment"] : []) + (filename ? ["filename:"] : [])
    }

    /// How many of the account's (or every account's) messages have a guessed attachment flag.
    public func guessedAttachmentCount(accountID: Int64?) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM messages INDEXED BY messages_attachment_guessed
             WHERE attachment_known = 0 AND (?1 IS NULL OR account_id = ?1)
            """, accountID) ?? 0)
    }

    /// Messages whose attachment flag is a guess, newest first, at most `limit`: what to
    /// ask Gmail about next.
    public func messagesWithGuessedAttachment(accountID: Int64, limit: Int) throws -> [(gmailID: String, internalDate: Int64)] {
        try db.map("""
            SELECT gmail_id, internal_date FROM messages INDEXED BY messages_attachment_guessed
             WHERE account_id = ? AND attachment_known = 0 ORDER BY internal_date DESC LIMIT ?
            """, accountID, limit) { (gmailID: $0.string(0), internalDate: $0.int64(1)) }
    }

    /// Records Gmail's answer to `has:attachment`: `with` are messages it lists, `without`
    /// messages it was asked about and did not list. A message whose flag is already known
    /// keeps it (its stored parts say the same thing, more precisely); ids the store does
    /// not have are ignored. A flag that changes changes what lists show (the thread's
    /// rollup) and moves the message in the change sequence. Returns how many were decided.
    @discardableResult
    public func recordAttachmentAnswers(with: Set<String>, without: Set<String>, accountID: Int64) throws -> Int {
        guard !with.isEmpty || !without.isEmpty else { return 0 }
        return try writeTracked { touched in
            var decided = 0
            let find = try db.prepare("""
                SELECT id, thread_id, has_attachment FROM messages WHERE account_id = ? AND gmail_id = ? AND attachment_known = 0
                """)
            let update = try db.prepare("UPDATE messages SET has_attachment = ?, attachment_known = 1 WHERE id = ?")
            for (ids, answer) in [(with, true), (without.subtracting(with), false)] {
                for id in ids.sorted() {
                    guard let row = try find.first([accountID, id], {
                        (key: $0.int64(0), threadID: $0.string(1), guess: $0.bool(2))
                    }) else { continue }
                    try update.execute([answer, row.key])
                    decided += 1
                    guard row.guess != answer else { continue }
                    try bumpSequence(messageKey: row.key)
                    touched.insert(ThreadKey(accountID: accountID, threadID: row.threadID))
                }
            }
            return decided
        }
    }
}
