/*!
 Which Gmail message a Maildir file is, when a client gave it a name of its own (issue 39).

 Maildir clients may give a file a new unique part when they move it: mu4e with
 `mu4e-change-filenames-when-moving`, mbsync's `,U=` part, and others rename on every
 flag change or move from new/ to cur/ (cr.yp.to/proto/maildir.html leaves the unique
 part to the writer). Found by its old name, such a file looks removed, and a removal is
 read back as trash; so a file that disappeared is looked for among the files whose
 names the export does not know, in this order:

 1. by the unique part of the name Hudson gave it (a client that keeps it);
 2. by the `X-Hudson-Id: GMAIL-ID EXPORT-ID` header a two-way export writes under its
    `X-Keywords:` (the export's random id in it: mail cannot forge it for another message);
 3. by its Message-ID, when it is the only message exported with it (files written
    before the export was two-way, or by a version without the header; messages sharing
    one are left as they were: MaildirReadBack).

 Only the header block of an unknown file is read (at most 64 KiB), and only on a run
 where some file disappeared: an idle run reads none. A file that is none of the export's
 messages, or a copy of one still in place, is left alone and never causes a change.
 */
import Glibc
import HudsonMail

enum MaildirIdentity {
    static let headerName = "X-Hudson-Id"
    /// The most of an unknown file read to find its header block.
    static let headerLimit = 65_536

    /// `X-Hudson-Id: GMAIL-ID EXPORT-ID` and `newline`; nothing without an export id (a one-way export).
    static func header(gmailID: String, exportID: String, newline: [UInt8]) -> [UInt8] {
        guard !exportID.isEmpty else { return [] }
        return Array("\(headerName): \(gmailID) \(exportID)".utf8) + newline
    }

    /// What the export puts above a message's source: its `X-Keywords:` header, then (two-way) its id.
    static func exportHeaders(tags: [String], gmailID: String, exportID: String, newline: [UInt8]) -> [UInt8] {
        MaildirNames.keywordsHeader(tags, newline: newline) + header(gmailID: gmailID, exportID: exportID, newline: newline)
    }

    /// The source without what the export put above it: `X-Keywords:` (MaildirNames), then
    /// the `X-Hudson-Id:` line right under it when it names this export (a source's own
    /// line of that name, which cannot hold the export's random id, is kept).
    static func strippingExportHeaders(_ file: [UInt8], exportID: String) -> [UInt8] {
        let rest = MaildirNames.strippingKeywords(file)
        guard !exportID.isEmpty, rest.count < file.count, rest.starts(with: Array("\(headerName): ".utf8)),
              let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else { return rest }
        var line = rest[..<newline]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard line.split(separator: UInt8(ascii: " ")).last?.elementsEqual(exportID.utf8) == true else { return rest }
        return Array(rest[(newline + 1)...])
    }

    /// What an unknown file says about itself: the Gmail id its `X-Hudson-Id:` gives for
    /// this export, and its Message-ID (without angle brackets).
    struct Claim: Equatable {
        var gmailID: String?
        var messageID: String?
    }

    /// Reads the claim of a file's header block (`prefix`: the file's first bytes).
    static func claim(_ prefix: [UInt8], exportID: String) -> Claim {
        var claim = Claim()
        for header in RFC822.parseHeaders(prefix) {
            switch header.name.lowercased() {
            case headerName.lowercased() where claim.gmailID == nil && !exportID.isEmpty:
                let parts = header.value.split(separator: " ", omittingEmptySubsequences: true)
                if parts.count == 2, parts[1] == exportID, MaildirNames.isUsableID(String(parts[0])) { claim.gmailID = String(parts[0]) }
            case "message-id" where claim.messageID == nil:
                claim.messageID = NotmuchBatch.messageID(header.value)
            default:
                break
            }
        }
        return claim
    }

    /// Whether `relative` can be the name a client gave a file of the export: a plain name
    /// (no `/`, no control character, not hidden, at most 255 bytes) in cur/ or new/.
    static func isClientPath(_ relative: String) -> Bool {
        let bytes = Array(relative.utf8)
        guard bytes.count > 4, bytes.count <= 259, bytes[3] == UInt8(ascii: "/"),
              bytes[0..<3].elementsEqual("cur".utf8) || bytes[0..<3].elementsEqual("new".utf8) else { return false }
        let name = bytes[4...]
        return name.first != UInt8(ascii: ".")
            && !name.contains(where: { $0 == UInt8(ascii: "/") || $0 < 0x20 || $0 == 0x7F })
    }

    /// Of several files one message may be (a copy), the one read back: in cur/ with Maildir
    /// info before the rest, then by name (a run is reproducible).
    static func preferred(_ paths: [String]) -> String? {
        paths.min { a, b in
            let (ka, kb) = (a.hasPrefix("cur/") && MaildirReadBack.hasInfo(a), b.hasPrefix("cur/") && MaildirReadBack.hasInfo(b))
            return ka != kb ? ka : a < b
        }
    }
}

extension ExportDirectory {
    /// The first `count` bytes of a regular file (fewer when it is shorter).
    func readPrefix(_ name: String, count: Int) throws -> [UInt8] {
        let descriptor = try openRegular(name, flags: O_RDONLY)
        defer { close(descriptor) }
        var output = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = output.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, count - filled) }
            if read < 0 { if errno == EINTR { continue }; throw ExportFileError(child(name)) }
            if read == 0 { break }
            filled += read
        }
        return Array(output[..<filled])
    }
}

extension Exporter.Layout {
    func readPrefix(_ relative: String, count: Int) throws -> [UInt8] {
        guard let (directory, name) = try place(relative, create: false) else { throw ExportFileError(relative, errno: ENOENT) }
        return try directory.readPrefix(name, count: count)
    }
}
