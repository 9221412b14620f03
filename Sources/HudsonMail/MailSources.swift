/*!
 Readers of mail kept outside Gmail, for `hd-import`: an mbox (mboxrd or mboxo, as Google
 Takeout, mutt and mu write them), a Maildir (cur/ and new/, flags in the file name), and
 `.eml` files or trees of them. Each message is handed over as its bytes, where it came from
 and, for a Maildir file, its flags; nothing here knows Gmail.

 - a source named by the user (a file, or `-` for standard input) is judged by its start:
   an mbox when, after any empty lines, it starts with `From `; one message when it starts
   with a header holding a field of a message (RFC822.looksLikeMessage: From, Date, Received…,
   not just any `name: value` line); an empty source holds no message; anything
   else is refused as not mail (`MailSourceError.Kind.notMail`): nothing in it is dropped
   without a word.
 - mbox: a message starts at a line beginning `From ` at the start of the file or after an
   empty line (the separator mbox writers put there; a `From ` line inside a paragraph is
   text, as mutt reads it) and followed by a header field: a `From ` line after an empty
   line of a body that an mboxo writer did not quote is followed by more text, not by a
   header, and stays in the body. One `>` is taken off every line matching `^>+From `
   (mboxrd's unquoting, which also undoes mboxo's single quoting; an mboxo line that was
   `>From ` in the original cannot be told apart from a quoted `From ` and loses its `>`,
   which mboxo itself made ambiguous). The empty line before the next separator belongs to
   the mbox, not to the message. Read in chunks, so a Takeout file of many gigabytes is
   never held whole. The last message is handed over marked truncated when the file ends
   inside a line, inside its header, or before its multipart body's close delimiter (a
   download or a copy cut short); a `From ` line with nothing after it is a message that
   never came, handed over empty and truncated. Text before the first message is not
   mail and is reported.
 - Maildir (a directory with `cur/` or `new/`): every file of `cur/` and `new/` not starting
   with a dot; `tmp/` is skipped (maildir(5): files there are still being written). The
   flags are the letters after `:2,` in the name (`S` seen, `F` flagged, `T` trashed, `R`
   replied, `D` draft, `P` passed). Subfolders (Maildir++ `.Name`) are read too.
 - any other directory: every `.eml` file below it, and every Maildir below it.
 - every file is opened the one way (InputFiles): a regular file only, so a FIFO or a
   device is refused in words and never blocks the read; in a directory tree, a symbolic
   link is followed only to a target inside the tree the user gave, and each directory is
   walked once (a link back up the tree is no loop).
 In a directory, entries are read in name order, so two runs see the same order.
 */
import Glibc
import DirectoryListing

/// One message read from a source.
public struct SourceMessage: Sendable {
    /// Where it came from: the file, and for an mbox the message's number (`old.mbox:12`).
    public var origin: String
    /// The message as stored (for an mbox, unquoted). Empty for a message too large to
    /// hold (`defect` says so).
    public var raw: [UInt8]
    /// The Maildir flags (`"FS"`) of a file in a Maildir; nil elsewhere.
    public var maildirFlags: String?
    /// Why the message must not be imported as it is, when the reader can tell.
    public var defect: SourceDefect?

    public init(origin: String, raw: [UInt8], maildirFlags: String? = nil, defect: SourceDefect? = nil) {
        self.origin = origin
        self.raw = raw
        self.maildirFlags = maildirFlags
        self.defect = defect
    }
}

/// What is wrong with a message the reader handed over.
public enum SourceDefect: Equatable, Sendable, CustomStringConvertible {
    /// Larger than Gmail takes (`MailSources.maximumMessageBytes`).
    case tooLarge
    /// The mbox ends inside it: why it looks cut short.
    case truncated(String)

    public var description: String {
        switch self {
        case .tooLarge: return "larger than Gmail's 150 MB limit for one message"
        case .truncated(let why): return "truncated: the mbox ends inside this message (\(why))"
        }
    }
}

/// A source that cannot be read, with its path and the reason in words.
public struct MailSourceError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// Missing, unreadable, or a read failed.
        case unreadable
        /// A FIFO, socket, device or directory where a file was wanted.
        case notRegularFile
        /// Larger than a message may be.
        case tooLarge
        /// A symbolic link out of the directory tree the user gave.
        case outsideTree
        /// Neither an mbox nor a message (or text in an mbox that is no message).
        case notMail
    }

    public var path: String
    public var reason: String
    public var kind: Kind

    public init(path: String, reason: String, kind: Kind = .unreadable) {
        self.path = path
        self.reason = reason
        self.kind = kind
    }

    init(_ error: InputFileError) {
        let kind: Kind
        switch error.kind {
        case .missing, .unreadable: kind = .unreadable
        case .notRegularFile: kind = .notRegularFile
        case .tooLarge: kind = .tooLarge
        case .outsideTree: kind = .outsideTree
        }
        self.init(path: error.path, reason: error.reason, kind: kind)
    }

    public var description: String { "\(path): \(reason)" }
}

public enum MailSources {
    /// The largest single message read (Gmail's import takes at most 150 MB, gmail.v1.json
    /// `mediaUpload.maxSize`). A bigger one in an mbox is handed over empty and marked, so
    /// the caller reports it by its origin instead of the reader running out of memory.
    public static let maximumMessageBytes = 157_286_400
    static let tooLargeText = "Gmail's 150 MB limit for one message"

    /// What a source holds, judged by its first bytes.
    public enum Content: Equatable, Sendable {
        case empty, mbox, message, notMail
    }

    /// How many bytes are looked at to judge a source.
    static let sniffBytes = 1 << 16

    /// What a source starting with `head` holds (see the file comment).
    public static func content(startingWith head: [UInt8]) -> Content {
        var index = 0
        while index < head.count {
            if head[index] == 10 { index += 1; continue }
            if head[index] == 13, index + 1 < head.count, head[index + 1] == 10 { index += 2; continue }
            break
        }
        if index == head.count { return .empty }
        if head[index...].starts(with: "From ".utf8) { return .mbox }
        // Empty lines before a header are no message (RFC 5322 §2.1: the header comes first).
        if index == 0 && RFC822.looksLikeMessage(head) { return .message }
        return .notMail
    }

    /// Whether `path` is a Maildir: a directory with `cur/` or `new/`.
    public static func isMaildir(_ path: String) -> Bool {
        isDirectory(path + "/cur") || isDirectory(path + "/new")
    }

    /// The flags of a Maildir file name: the letters after `:2,` (maildir(5)); `""` for none.
    public static func flags(ofMaildirName name: String) -> String {
        let bytes = Array(name.utf8)
        var index = bytes.count - 3
        while index >= 0 {
            if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "2") && bytes[index + 2] == UInt8(ascii: ",") {
                return String(decoding: bytes[(index + 3)...].filter { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) },
                              as: UTF8.self)
            }
            index -= 1
        }
        return ""
    }

    /// A file found in a tree, read whole: it must be a message.
    static func readMessageFile(_ path: String) throws -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try InputFiles.readRegular(path, limit: maximumMessageBytes, what: tooLargeText)
        } catch {
            throw MailSourceError(error)
        }
        guard !bytes.isEmpty else { throw MailSourceError(path: path, reason: "empty: not a message", kind: .notMail) }
        guard RFC822.looksLikeMessage(bytes) else {
            throw MailSourceError(path: path, reason: "not an RFC 822 message (it does not start with a header of a message)", kind: .notMail)
        }
        return bytes
    }

    static func entries(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw MailSourceError(path: path, reason: errnoText()) }
        defer { closedir(dir) }
        return DirectoryListing.names(in: dir).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

/// Reads the messages of sources in order, one at a time: `next()` until nil. A source is an
/// mbox, a Maildir, an .eml file or a directory of them; `-` is standard input (an mbox or
/// one message). Directories are listed when reached, mbox files read a chunk at a time.
public final class MailSourceReader {
    private enum Item {
        /// A source as the user named it.
        case operand(String)
        /// A file found in the tree `root` (canonical); `flags` for a Maildir's.
        case file(String, maildirFlags: String?, root: String)
        case directory(String, root: String)
        /// An entry of a tree that is refused: reported when its turn comes.
        case refused(MailSourceError)
    }

    private struct OpenMbox {
        var fd: Int32
        var name: String
        var splitter = MboxSplitter()
        var number = 0
        var done = false
    }

    private var items: [Item]
    private var mbox: OpenMbox?
    private var ready: [(raw: [UInt8], truncation: String?)] = []
    /// Directories walked, by device and inode: each is walked once.
    private var walked = Set<[UInt64]>()
    private let standardInput: Int32

    /// `standardInput`: the descriptor `-` reads (the tests give a pipe of their own).
    public init(paths: [String], standardInput: Int32 = 0) {
        items = paths.reversed().map { Item.operand($0) }
        self.standardInput = standardInput
    }

    deinit {
        if let mbox, mbox.fd != standardInput { close(mbox.fd) }
    }

    /// The next message, or nil after the last. Throws `MailSourceError` for a source that
    /// cannot be read; the sources before it have been read, and `next()` goes on after it.
    public func next() throws -> SourceMessage? {
        while true {
            if let message = try nextFromMbox() { return message }
            guard let item = items.popLast() else { return nil }
            switch item {
            case .operand(let path):
                if let message = try open(operand: path) { return message }
            case .file(let path, let flags, let root):
                try checkInside(path, root: root)
                return SourceMessage(origin: path, raw: try MailSources.readMessageFile(path), maildirFlags: flags)
            case .directory(let path, let root):
                items += try expand(path, root: root).reversed()
            case .refused(let error):
                throw error
            }
        }
    }

    /// A named source: a directory is queued for walking, an mbox is opened and read on,
    /// a message is read whole and returned.
    private func open(operand path: String) throws -> SourceMessage? {
        let name = path == "-" ? "standard input" : path
        let fd: Int32
        if path == "-" {
            fd = standardInput
        } else {
            var info = stat()
            guard stat(path, &info) == 0 else { throw MailSourceError(path: path, reason: MailSources.errnoText()) }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                let root = InputFiles.resolved(path) ?? path
                if walked.insert(Self.identity(info)).inserted { items.append(.directory(path, root: root)) }
                return nil
            }
            do {
                fd = try InputFiles.openRegular(path)
            } catch {
                throw MailSourceError(error)
            }
        }
        var keep = false
        defer { if !keep && fd != standardInput { close(fd) } }
        let head: [UInt8]
        do {
            head = try InputFiles.readHead(fd, path: name, count: MailSources.sniffBytes)
        } catch {
            throw MailSourceError(error)
        }
        switch MailSources.content(startingWith: head) {
        case .empty:
            return nil
        case .mbox:
            var opened = OpenMbox(fd: fd, name: path)
            try opened.splitter.feed(head) { ready.append(($0, nil)) }
            mbox = opened
            keep = true
            return nil
        case .message:
            do {
                let raw = try InputFiles.readAll(fd, path: name, limit: MailSources.maximumMessageBytes,
                                                 what: MailSources.tooLargeText, prefix: head)
                return SourceMessage(origin: path, raw: raw)
            } catch {
                throw MailSourceError(error)
            }
        case .notMail:
            throw MailSourceError(path: name, reason: "neither an mbox (From_ lines) nor an RFC 822 message (a header with From, Date or another field of a message)",
                                  kind: .notMail)
        }
    }

    private func nextFromMbox() throws -> SourceMessage? {
        guard var current = mbox else { return nil }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while ready.isEmpty && !current.done {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(current.fd, $0.baseAddress!, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                let reason = MailSources.errnoText()
                if current.fd != standardInput { close(current.fd) }
                mbox = nil
                throw MailSourceError(path: current.name == "-" ? "standard input" : current.name, reason: reason)
            }
            if got == 0 {
                try current.splitter.finish { ready.append(($0, nil)) }
                if let truncation = current.splitter.lastTruncation, !ready.isEmpty {
                    ready[ready.count - 1].truncation = truncation
                }
                current.done = true
            } else {
                try current.splitter.feed(chunk[0..<got]) { ready.append(($0, nil)) }
            }
        }
        if ready.isEmpty {
            if current.fd != standardInput { close(current.fd) }
            mbox = nil
            let discarded = current.splitter.discardedLines
            if discarded > 0 {
                throw MailSourceError(path: current.name == "-" ? "standard input" : current.name,
                                      reason: "\(discarded) line(s) outside any message (a From_ line not followed by a header); not imported",
                                      kind: .notMail)
            }
            return nil
        }
        current.number += 1
        mbox = current
        let (raw, truncation) = ready.removeFirst()
        let defect: SourceDefect? = truncation.map { .truncated($0) } ?? (raw.isEmpty ? .tooLarge : nil)
        return SourceMessage(origin: "\(current.name):\(current.number)", raw: raw, defect: defect)
    }

    /// A directory's messages: a Maildir's cur/ and new/ files (and its Maildir++ folders),
    /// otherwise its .eml files and the directories below it. Entries that are refused
    /// (a link out of the tree, a FIFO named like mail) come back as `.refused`.
    private func expand(_ path: String, root: String) throws -> [Item] {
        var out: [Item] = []
        if MailSources.isMaildir(path) {
            for sub in ["cur", "new"] where MailSources.isDirectory(path + "/" + sub) {
                for name in try MailSources.entries(path + "/" + sub) where !name.hasPrefix(".") {
                    let file = path + "/" + sub + "/" + name
                    out += entry(file, root: root, asFile: { .file(file, maildirFlags: MailSources.flags(ofMaildirName: name), root: root) },
                                 directories: false)
                }
            }
            for name in try MailSources.entries(path) where name.hasPrefix(".") && name != "." && name != ".." {
                if MailSources.isMaildir(path + "/" + name) {
                    out += entry(path + "/" + name, root: root, asFile: nil, directories: true)
                }
            }
            return out
        }
        for name in try MailSources.entries(path) where !name.hasPrefix(".") {
            let child = path + "/" + name
            let isEml = name.lowercased().hasSuffix(".eml")
            out += entry(child, root: root, asFile: isEml ? { .file(child, maildirFlags: nil, root: root) } : nil, directories: true)
        }
        return out
    }

    /// What one directory entry becomes: a directory to walk (once), a file to read (when
    /// `asFile` says how), nothing (a file that is not mail by its name), or a refusal.
    private func entry(_ path: String, root: String, asFile: (() -> Item)?, directories: Bool) -> [Item] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            // Gone since the listing, or a link to nothing: worth a word only where mail was expected.
            return asFile == nil ? [] : [.refused(MailSourceError(path: path, reason: MailSources.errnoText()))]
        }
        let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        guard isDirectory ? directories : asFile != nil else { return [] }
        // The whole path resolved, not only its last name: a `cur` that is a link out of
        // the tree takes its files out with it.
        guard let target = InputFiles.resolved(path), InputFiles.isInside(target, root: root) else {
            return [.refused(MailSourceError(path: path, reason: "a symbolic link out of \(root); not followed", kind: .outsideTree))]
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            guard walked.insert(Self.identity(info)).inserted else { return [] }
            return [.directory(path, root: root)]
        case S_IFREG:
            return asFile.map { [$0()] } ?? []
        default:
            // A FIFO, socket or device named like mail: reading it could wait for ever or act on a device.
            return [.refused(MailSourceError(InputFiles.notRegular(path, mode: info.st_mode)))]
        }
    }

    /// A file of a tree is read only if it is still inside it (it may have been swapped for
    /// a link since the directory was listed).
    private func checkInside(_ path: String, root: String) throws {
        guard let target = InputFiles.resolved(path) else { throw MailSourceError(path: path, reason: MailSources.errnoText()) }
        guard InputFiles.isInside(target, root: root) else {
            throw MailSourceError(path: path, reason: "a symbolic link out of \(root); not followed", kind: .outsideTree)
        }
    }

    private static func identity(_ info: stat) -> [UInt64] {
        [UInt64(info.st_dev), UInt64(info.st_ino)]
    }
}

/// The mbox rules over a stream of bytes: fed in chunks of any size, hands over each message.
public struct MboxSplitter: Sendable {
    private var line: [UInt8] = []
    private var message: [UInt8] = []
    private var inMessage = false
    /// The previous line was empty (or there was none): a `From ` line here may start a message.
    private var afterBlank = true
    /// An empty line held back: it belongs to the message unless a separator follows.
    private var heldBlank: [UInt8]?
    /// A `From ` line after an empty line, held until the next line says whether it is a
    /// separator (a header field follows) or text of the body.
    private var candidate: [UInt8]?
    private var tooLarge = false
    /// The line being read grew past any message Gmail takes: the rest of it is not kept
    /// (a line of gigabytes without a line end is never held whole).
    private var lineOverflowed = false
    /// Lines that belong to no message: text before the first one.
    public private(set) var discardedLines = 0
    /// After `finish`: why the last message handed over looks cut short, if it does.
    public private(set) var lastTruncation: String?

    public init() {}

    public mutating func feed(_ bytes: some Collection<UInt8>, _ deliver: ([UInt8]) throws -> Void) throws {
        let chunk = Array(bytes)
        try chunk.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            // memchr finds each line end: a Takeout mbox runs to gigabytes.
            while start < buffer.count, let found = memchr(base + start, 10, buffer.count - start) {
                let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                keep(UnsafeBufferPointer(rebasing: buffer[start..<end]))
                try takeLine(deliver)
                line.removeAll(keepingCapacity: true)
                start = end
            }
            if start < buffer.count { keep(UnsafeBufferPointer(rebasing: buffer[start...])) }
        }
    }

    /// Adds to the line being read, up to one byte past the largest message: a longer line
    /// makes its message too large whatever the rest holds (`takeLine`).
    private mutating func keep(_ bytes: UnsafeBufferPointer<UInt8>) {
        let room = MailSources.maximumMessageBytes + 1 - line.count
        if bytes.count > room {
            lineOverflowed = true
            if room > 0 { line.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<room])) }
        } else {
            line.append(contentsOf: bytes)
        }
    }

    public mutating func finish(_ deliver: ([UInt8]) throws -> Void) throws {
        lastTruncation = nil
        var endedInsideLine = false
        if !line.isEmpty {
            try takeLine(deliver)
            line.removeAll()
            endedInsideLine = candidate == nil
        }
        if candidate != nil {
            // The file ends just after a From_ line: the previous message is whole (its
            // separator came), and the one announced never came.
            candidate = nil
            heldBlank = nil
            if inMessage { try deliver(tooLarge ? [] : message) }
            inMessage = false
            message.removeAll()
            lastTruncation = "the file ends just after its From_ line"
            try deliver([])
            return
        }
        let closedByBlank = heldBlank != nil
        heldBlank = nil   // the mbox's own trailing separator line
        if inMessage {
            if !tooLarge {
                if endedInsideLine {
                    lastTruncation = "the file ends inside a line"
                } else if !closedByBlank && !RFC822.headerBlockIsClosed(message) {
                    lastTruncation = "the file ends inside its header"
                } else {
                    lastTruncation = RFC822.unclosedMultipart(message)
                }
            }
            try deliver(tooLarge ? [] : message)
        }
        inMessage = false
        message.removeAll()
    }

    private static let from = Array("From ".utf8)

    /// Whether `line` (with its line end) starts with a header field name and its colon.
    private static func isHeaderField(_ line: [UInt8]) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return false }
        return line[..<colon].allSatisfy { $0 > 32 && $0 < 127 }
    }

    private mutating func takeLine(_ deliver: ([UInt8]) throws -> Void) throws {
        if lineOverflowed {
            // Longer than any message: not a header field, so a From_ line before it was body
            // text, and the message it is in is too large; before the first message it is
            // text that is not mail.
            lineOverflowed = false
            candidate = nil
            afterBlank = false
            heldBlank = nil
            if inMessage {
                tooLarge = true
                message.removeAll()
            } else {
                discardedLines += 1
            }
            return
        }
        let isBlank = line == [10] || line == [13, 10]
        if let from = candidate {
            candidate = nil
            if Self.isHeaderField(line) {
                // A separator: the empty line before it was the mbox's.
                heldBlank = nil
                if inMessage { try deliver(tooLarge ? [] : message) }
                message.removeAll(keepingCapacity: true)
                inMessage = true
                tooLarge = false
            } else if inMessage {
                // Text of the body (mboxo left it unquoted): it stays, with the empty line.
                if let held = heldBlank { append(held) }
                heldBlank = nil
                append(from)
            } else {
                discardedLines += 1
            }
            afterBlank = false
        } else if afterBlank && line.starts(with: Self.from) {
            candidate = line
            return
        }
        afterBlank = isBlank
        guard inMessage else {   // text before the first separator is not mail
            if !isBlank { discardedLines += 1 }
            return
        }
        if let held = heldBlank {
            append(held)
            heldBlank = nil
        }
        if isBlank {
            heldBlank = line
            return
        }
        // mboxrd: ">From ", ">>From " ... lose one ">".
        var quotes = 0
        while quotes < line.count && line[quotes] == UInt8(ascii: ">") { quotes += 1 }
        if quotes > 0 && line[quotes...].starts(with: Self.from) {
            append(line[1...])
        } else {
            append(line[...])
        }
    }

    private mutating func append(_ bytes: some Collection<UInt8>) {
        guard !tooLarge else { return }
        if message.count + bytes.count > MailSources.maximumMessageBytes {
            tooLarge = true
            message.removeAll()
            return
        }
        message.append(contentsOf: bytes)
    }
}
