// Real mail no one here wrote: CPython's email test corpus (Lib/test/test_email/data/msg_*.txt),
// parsed by RFC822.parse and MessageContent.extract, with Python's `email` package as the oracle
// for the decoded text/plain content, attachment file names, Date and Subject. The oracle is a
// Python script kept below as a string (so the test target needs no resource files) and run
// once with `python3 -c`; it also locates the corpus. Without python3 or the corpus the test is
// skipped with a message saying so.
import Foundation
import Testing
@testable import HudsonMail

@Suite("CPython email corpus agrees with Python's email package")
struct PythonEmailCorpusTests {
    @Test(
        "each corpus message parses, and its text, file names, date and subject match Python's",
        .enabled(if: PythonEmailOracle.records != nil,
                 "skipped: python3 or CPython's email test corpus (Lib/test/test_email/data) is not on this machine"),
        arguments: PythonEmailOracle.records ?? []
    )
    func agreesWithPython(record: PythonEmailOracle.Record) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: record.path)))
        let root = RFC822.parse(bytes: bytes)
        let content = MessageContent.extract(from: root)
        let text = normalized(content.text ?? "")

        // Python marks bytes it cannot decode with U+FFFD where Hudson falls back to
        // Windows-1252 by design (gmail-api.md §8), so those parts are not compared.
        let comparable = record.plain.map(normalized).filter { !$0.isEmpty && !$0.contains("\u{FFFD}") }
        if record.plain.contains(where: { !normalized($0).isEmpty }) {
            #expect(!text.isEmpty, "Python finds text/plain content; Hudson found no text")
        }
        for expected in comparable {
            #expect(text.contains(expected), "text/plain content Python decodes is missing: \(expected.prefix(80))")
        }
        let names = content.attachments.map(\.filename).filter { !$0.isEmpty }.sorted()
        #expect(names == record.filenames.sorted())
        if let expectedDate = record.date {
            #expect(root.header("Date").flatMap(MailDate.parse) == expectedDate)
        }
        if let subject = record.subject {
            #expect(normalized(EncodedWords.decode(root.header("Subject") ?? "")) == normalized(subject))
        }
    }

    @Test(
        "each corpus message cut short anywhere still parses and extracts",
        .enabled(if: PythonEmailOracle.records != nil,
                 "skipped: python3 or CPython's email test corpus (Lib/test/test_email/data) is not on this machine"),
        arguments: PythonEmailOracle.records ?? []
    )
    func truncatedMessages(record: PythonEmailOracle.Record) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: record.path)))
        for end in stride(from: 0, to: bytes.count, by: 61) {
            _ = MessageContent.extract(from: RFC822.parse(bytes: Array(bytes[..<end])))
        }
    }

    /// Whitespace runs collapsed, so line-ending and wrapping differences do not count.
    private func normalized(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// Runs the oracle script once per test process.
enum PythonEmailOracle {
    struct Record: Decodable, Sendable, CustomTestStringConvertible {
        var path: String
        var plain: [String]
        var filenames: [String]
        var date: Int64?
        var subject: String?
        var testDescription: String { URL(fileURLWithPath: path).lastPathComponent }
    }

    /// One record per corpus message, or nil when python3 or the corpus is missing.
    static let records: [Record]? = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let decoder = JSONDecoder()
        let records = data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Record.self, from: Data($0)) }
        return records.isEmpty ? nil : records
    }()

    /// Locates the corpus (the `test.test_email` package, else a search of the usual library
    /// roots) and prints, per message, Python's view of it as one JSON object: the decoded
    /// text/plain parts a reader would see (following the same alternative/signed/related
    /// choices as MessageContent), every part's file name, the Date as epoch seconds
    /// (`email.utils.parsedate_tz`), and the decoded Subject. Exit status 3: no corpus.
    static let script = #"""
import sys, os, glob, json, email, email.utils
from email import policy
from email.header import decode_header, make_header

def find_corpus():
    try:
        import test.test_email as t
        d = os.path.join(os.path.dirname(t.__file__), 'data')
        if glob.glob(os.path.join(d, 'msg_*.txt')):
            return d
    except Exception:
        pass
    roots = [sys.base_prefix, sys.prefix, '/usr/lib', '/usr/local/lib']
    roots += glob.glob(os.path.expanduser('~/.pyenv/versions/*'))
    for root in roots:
        for d in sorted(glob.glob(os.path.join(root, '**', 'test', 'test_email', 'data'), recursive=True)):
            if glob.glob(os.path.join(d, 'msg_*.txt')):
                return d
    return None

def header_text(value):
    if value is None:
        return None
    try:
        return str(make_header(decode_header(str(value))))
    except Exception:
        return str(value)

def filename(part):
    name = part.get_filename()
    if name and '=?' in name:
        name = header_text(name)
    return name

def is_attachment(part):
    return bool(filename(part)) or (part.get_content_disposition() == 'attachment')

def text_of(part):
    payload = part.get_payload(decode=True) or b''
    charset = part.get_content_charset() or 'us-ascii'
    try:
        return payload.decode(charset, errors='replace')
    except LookupError:
        return payload.decode('ascii', errors='replace')

def has_plain(part):
    if part.is_multipart():
        return any(has_plain(p) for p in part.get_payload())
    return part.get_content_type() == 'text/plain' and not is_attachment(part) and text_of(part).strip() != ''

def plain_parts(part, out):
    ctype = part.get_content_type()
    # Python parses these bodies as header blocks or messages; they are not text a reader sees.
    if ctype in ('message/delivery-status', 'message/external-body', 'multipart/encrypted'):
        return
    if part.is_multipart():
        children = part.get_payload()
        if not isinstance(children, list) or not children:
            return
        if ctype == 'multipart/alternative':
            chosen = [c for c in children if has_plain(c)]
            children = chosen[-1:]
        elif ctype == 'multipart/signed':
            children = children[:1]
        elif ctype == 'multipart/related':
            start = part.get_param('start')
            root = children[0]
            if start:
                for c in children:
                    if (c.get('content-id') or '').strip() == start.strip():
                        root = c
            children = [root]
        for child in children:
            plain_parts(child, out)
    elif ctype == 'text/plain' and not is_attachment(part):
        out.append(text_of(part))

def main():
    corpus = find_corpus()
    if corpus is None:
        sys.exit(3)
    for path in sorted(glob.glob(os.path.join(corpus, 'msg_*.txt'))):
        with open(path, 'rb') as f:
            msg = email.message_from_binary_file(f, policy=policy.compat32)
        texts = []
        plain_parts(msg, texts)
        names = [filename(p) for p in msg.walk() if filename(p)]
        date = None
        if msg['date']:
            parsed = email.utils.parsedate_tz(str(msg['date']))
            if parsed:
                date = email.utils.mktime_tz(parsed)
        print(json.dumps({'path': path, 'plain': texts, 'filenames': names, 'date': date,
                          'subject': header_text(msg['subject'])}))

main()
"""#
}
