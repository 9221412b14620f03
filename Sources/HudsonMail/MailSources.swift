/*!
 Readers of mail kept outside Gmail, for `hd-import`: an mbox (mboxrd or mboxo, as Google
 Takeout, mutt and mu write them), a Maildir (cur/ and new/, flags in the file name), and
 `.eml` files or trees of them. Each message is handed over as its bytes, where it came from
 and, for a Maildir file, its flags; nothing here knows Gmail.

 - mbox: a message starts at a line beginning `From ` at the start of the file or after an
   empty line (the separator mbox writers put there; a `From ` line inside a paragraph is
   text, as mutt reads it). One `>` is taken off every line matching `^>+From ` (mboxrd's
   unquoting, which also undoes mboxo's single quoting; an mboxo line that was `>From ` in
   the original cannot be told apart from a quoted `From ` and loses its `>`, which mboxo
   itself made ambiguous). The empty line before the next separator belongs to the mbox,
   not to the message. Read in chunks, so a Takeout file of many gigabytes is never held
   whole.
 - Maildir (a directory with `cur/` or `new/`): every file of `cur/` and `new/` not starting
   with a dot; `tmp/` is skipped (maildir(5): files there are still being written). The
   flags are the letters after `:2,` in the name (`S` seen, `F` flagged, `T` trashed, `R`
   replied, `D` draft, `P` passed). Subfolders (Maildir++ `.Name`) are read too.
 - any other directory: every `.eml` file below it, and every Maildir below it.
 - a file: an mbox when its first line starts with `From `, otherwise one message.
 In a directory, entries are read in name order, so two runs see the same order.
 */
import Glibc

/// One message read from a source.
public struct SourceMessage: Sendable {
    /// Where it came from: the file, and for an mbox the message's number (`old.mbox:12`).
    public var origin: String
    /// The message as stored (for an mbox, unquoted).
    public var raw: [UInt8]
    /// The Maildir flags (`"FS"`) of a file in a Maildir; nil elsewhere.
    public var maildirFlags: String?

    public init(origin: String, raw: [UInt8], maildirFlags: String? = nil) {
        self.origin = origin
        self.raw = raw
        self.maildirFlags = maildirFlags
    }
}

/// A source that cannot be read, with its path and the reason in words.
public struct MailSourceError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

public enum MailSources {
    /// The largest single message read (Gmail's import takes at most 150 MB, gmail.v1.json
    /// `mediaUpload.maxSize`). A bigger one in an mbox is handed over empty, so the caller
    /// reports it by its origin instead of the reader running out of memory.
    public static let maximumMessageBytes = 157_286_400

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

    static func readWhole(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MailSourceError(path: path, reason: errnoText()) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw MailSourceError(path: path, reason: errnoText())
            }
            if got == 0 { return bytes }
            if bytes.count + got > maximumMessageBytes {
                throw MailSourceError(path: path, reason: "larger than Gmail's 150 MB limit for one message")
            }
            bytes.append(contentsOf: chunk[0..<got])
        }
    }

    static func entries(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw MailSourceError(path: path, reason: errnoText()) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

/// Reads the messages of sources in order, one at a time: `next()` until nil. A source is an
/// mbox, a Maildir, an .eml file or a directory of them; `-` is an mbox on standard input.
/// Directories are listed when reached, mbox files read a chunk at a time.
public final class MailSourceReader {
    private enum Item {
        case path(String)
        case file(String, maildirFlags: String?)
        case directory(String)
    }

    private var items: [Item]
    private var mbox: (fd: Int32, name: String, splitter: MboxSplitter, number: Int, done: Bool)?
    private var ready: [[UInt8]] = []

    public init(paths: [String]) {
        items = paths.reversed().map { Item.path($0) }
    }

    deinit {
        if let mbox, mbox.fd > 0 { close(mbox.fd) }
    }

    /// The next message, or nil after the last. Throws `MailSourceError` for a source that
    /// cannot be read; the sources before it have been read, and `next()` goes on after it.
    public func next() throws -> SourceMessage? {
        while true {
            if let message = try nextFromMbox() { return message }
            guard let item = items.popLast() else { return nil }
            switch item {
            case .path(let path):
                if path == "-" {
                    mbox = (0, "-", MboxSplitter(), 0, false)
                    continue
                }
                var info = stat()
                guard stat(path, &info) == 0 else { throw MailSourceError(path: path, reason: MailSources.errnoText()) }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    items.append(.directory(path))
                } else {
                    try openFile(path)
                    if mbox == nil { return SourceMessage(origin: path, raw: try MailSources.readWhole(path)) }
                }
            case .file(let path, let flags):
                return SourceMessage(origin: path, raw: try MailSources.readWhole(path), maildirFlags: flags)
            case .directory(let path):
                items += try expand(path).reversed()
            }
        }
    }

    /// An mbox is opened and read on; any other file is left to be read whole.
    private func openFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MailSourceError(path: path, reason: MailSources.errnoText()) }
        var head = [UInt8](repeating: 0, count: 5)
        let got = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, 5) }
        guard got == 5, head == Array("From ".utf8) else {
            close(fd)
            return
        }
        var splitter = MboxSplitter()
        try splitter.feed(head) { _ in }   // "From " without its line end: nothing is handed over yet
        mbox = (fd, path, splitter, 0, false)
    }

    private func nextFromMbox() throws -> SourceMessage? {
        guard var current = mbox else { return nil }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while ready.isEmpty && !current.done {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(current.fd, $0.baseAddress!, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                let reason = MailSources.errnoText()
                if current.fd > 0 { close(current.fd) }
                mbox = nil
                throw MailSourceError(path: current.name, reason: reason)
            }
            if got == 0 {
                try current.splitter.finish { ready.append($0) }
                current.done = true
            } else {
                try current.splitter.feed(chunk[0..<got]) { ready.append($0) }
            }
        }
        if ready.isEmpty {
            if current.fd > 0 { close(current.fd) }
            mbox = nil
            return nil
        }
        current.number += 1
        mbox = current
        return SourceMessage(origin: "\(current.name):\(current.number)", raw: ready.removeFirst())
    }

    /// A directory's messages: a Maildir's cur/ and new/ files (and its Maildir++ folders),
    /// otherwise its .eml files and the directories below it.
    private func expand(_ path: String) throws -> [Item] {
        var out: [Item] = []
        if MailSources.isMaildir(path) {
            for sub in ["cur", "new"] where MailSources.isDirectory(path + "/" + sub) {
                for name in try MailSources.entries(path + "/" + sub) where !name.hasPrefix(".") {
                    let file = path + "/" + sub + "/" + name
                    if MailSources.isRegularFile(file) { out.append(.file(file, maildirFlags: MailSources.flags(ofMaildirName: name))) }
                }
            }
            for name in try MailSources.entries(path) where name.hasPrefix(".") {
                if MailSources.isMaildir(path + "/" + name) { out.append(.directory(path + "/" + name)) }
            }
            return out
        }
        for name in try MailSources.entries(path) where !name.hasPrefix(".") {
            let entry = path + "/" + name
            if MailSources.isDirectory(entry) {
                out.append(.directory(entry))
            } else if name.lowercased().hasSuffix(".eml"), MailSources.isRegularFile(entry) {
                out.append(.file(entry, maildirFlags: nil))
            }
        }
        return out
    }
}

/// The mbox rules over a stream of bytes: fed in chunks of any size, hands over each message.
public struct MboxSplitter: Sendable {
    private var line: [UInt8] = []
    private var message: [UInt8] = []
    private var inMessage = false
    /// The previous line was empty (or there was none): a `From ` line here starts a message.
    private var afterBlank = true
    /// An empty line held back: it belongs to the message unless a separator follows.
    private var heldBlank: [UInt8]?
    private var tooLarge = false

    public init() {}

    public mutating func feed(_ bytes: some Collection<UInt8>, _ deliver: ([UInt8]) throws -> Void) throws {
        let chunk = Array(bytes)
        try chunk.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            // memchr finds each line end: a Takeout mbox runs to gigabytes.
            while start < buffer.count, let found = memchr(base + start, 10, buffer.count - start) {
                let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<end]))
                try takeLine(deliver)
                line.removeAll(keepingCapacity: true)
                start = end
            }
            if start < buffer.count { line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...])) }
        }
    }

    public mutating func finish(_ deliver: ([UInt8]) throws -> Void) throws {
        if !line.isEmpty {
            try takeLine(deliver)
            line.removeAll()
        }
        heldBlank = nil   // the mbox's own trailing separator line
        if inMessage { try deliver(tooLarge ? [] : message) }
        inMessage = false
        message.removeAll()
    }

    private static let from = Array("From ".utf8)

    private mutating func takeLine(_ deliver: ([UInt8]) throws -> Void) throws {
        let isBlank = line == [10] || line == [13, 10]
        if afterBlank && line.starts(with: Self.from) {
            heldBlank = nil
            if inMessage { try deliver(tooLarge ? [] : message) }
            message.removeAll(keepingCapacity: true)
            inMessage = true
            tooLarge = false
            afterBlank = false
            return
        }
        afterBlank = isBlank
        guard inMessage else { return }   // text before the first separator is not mail
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
