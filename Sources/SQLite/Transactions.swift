/*!
 Transactions, after GRDB's `Database.inTransaction`: begin, run the body, commit on
 return, roll back on throw and rethrow the body's error (the first one).

 - `read {}` is `BEGIN DEFERRED`: a consistent snapshot that never takes the write lock.
 - `write {}` is `BEGIN IMMEDIATE`: the write lock is taken up front, so nothing later in
   the transaction can fail with SQLITE_BUSY_SNAPSHOT, which a busy handler cannot
   absorb (https://sqlite.org/lang_transaction.html; sqlite-notes.md "Transactions").
 - `savepoint {}` nests inside either.
 */
import CSQLite

public enum TransactionKind: String, Sendable {
    case deferred = "DEFERRED"
    case immediate = "IMMEDIATE"
}

extension Connection {
    /// Runs `body` in a deferred (read) transaction. Inside another transaction it just runs.
    public func read<T>(_ body: () throws -> T) throws -> T {
        if transactionKind != nil { return try body() }
        return try transaction(.deferred, body)
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction. Inside a write transaction it
    /// becomes a savepoint, so store operations compose; inside a read transaction it is
    /// a programming error, because the upgrade could fail with SQLITE_BUSY_SNAPSHOT.
    public func write<T>(_ body: () throws -> T) throws -> T {
        switch transactionKind {
        case .immediate?:
            return try savepoint(body)
        case .deferred?:
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "write transaction requested inside a read transaction")
        case nil:
            return try transaction(.immediate, body)
        }
    }

    /// `write`, with a COMMIT that is on disk when this returns, whatever the
    /// connection's `synchronous`: for the few records that must survive an OS crash or
    /// a power cut, not only a killed process (a change that may have reached Gmail,
    /// sqlite-notes.md). In WAL mode NORMAL syncs only at checkpoints; FULL syncs the WAL
    /// at each commit, so the pragma is raised for this one transaction. It cannot run
    /// inside another transaction: the outer commit would decide, not this one.
    public func durableWrite<T>(_ body: () throws -> T) throws -> T {
        guard transactionKind == nil else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "durable write requested inside a transaction")
        }
        guard options.synchronous != .full else { return try write(body) }
        try execute("PRAGMA synchronous = FULL")
        defer { try? execute("PRAGMA synchronous = \(options.synchronous.rawValue)") }
        return try write(body)
    }

    /// Runs `body` inside a savepoint: its writes are undone if it throws, and the
    /// enclosing transaction goes on.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        guard transactionKind != nil else {
            // Outside a transaction a savepoint would start a deferred one; be explicit.
            return try write(body)
        }
        savepointCounter += 1
        let name = "hudson_sp\(savepointCounter)"
        defer { savepointCounter -= 1 }
        try execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try execute("RELEASE SAVEPOINT \(name)")
            return result
        } catch {
            // ROLLBACK TO leaves the savepoint open; RELEASE closes it. If SQLite already
            // rolled the whole transaction back (SQLITE_FULL, for one), both fail: ignore.
            try? execute("ROLLBACK TO SAVEPOINT \(name)")
            try? execute("RELEASE SAVEPOINT \(name)")
            throw error
        }
    }

    private func transaction<T>(_ kind: TransactionKind, _ body: () throws -> T) throws -> T {
        let begin = kind == .immediate && options.testing.deferredWrites ? TransactionKind.deferred : kind
        try execute("BEGIN \(begin.rawValue)")
        transactionKind = kind
        defer { transactionKind = nil }
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        if kind == .immediate { options.testing.afterWriteCommit?() }
        return result
    }

    private func rollbackQuietly() {
        if isInTransaction {
            try? execute("ROLLBACK")
        }
    }
}
