/*!
 What every answer's fields must be before anything past the wire types sees them (issue 37
 §2): the one layer that validates Gmail's answers, at decode time, so the sync engine never
 holds an unvalidated value. Two kinds of fault, two outcomes:

 - A field of the wrong JSON type, a required field missing, or a number out of its range
   (a history id that is not a positive uint64 within the store's INTEGER, an `internalDate`
   before 1970 or after 9999, a negative size) means the answer cannot be read as Gmail
   documents it (gmail-api.md §1, §2; the discovery document's `format`s): decoding throws,
   and the client reports `GmailError.invalidResponse` naming the field, never its value.
 - An id of the right type but not of a Gmail id's shape (GmailIDShape: `..`, `a/b`, `%2e`,
   empty, too long) can never be requested, so it must not be; yet one such id must not make
   a whole list or history page unreadable, or polling would stop for as long as Gmail
   served it. Decoding throws `UnusableID`; the lists that can go on without the element
   (`messages.list` entries, history changes, labels, drafts) skip it and keep its id in
   their `unusableIDs`, which sync counts and reports. A single message's answer with such
   an id is unreadable like any other.
 */
import Foundation
import GmailIDShape

/// An id in an answer that has not the shape of a Gmail id of its kind.
struct UnusableID: Error {
    var id: String
    var kind: GmailID.Kind
    var codingPath: [any CodingKey]
}

/// A coding key made at run time, for the paths of errors found after decoding a list.
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

enum WireRange {
    /// The `debugDescription` of a number out of its range, which `decodeBody` words as such.
    static let outOfRange = "out of range"

    /// History ids: uint64 (§5), kept in a SQLite INTEGER, and never 0 (no mailbox has it).
    static let historyID: ClosedRange<UInt64> = 1...UInt64(Int64.max)
    /// `internalDate`, epoch milliseconds (§2.3): from year 1 to the last millisecond of 9999.
    /// Before 1970 is possible (a message imported with an old Date header); the store and
    /// the export clamp where a date must not be negative. Past 9999 no date is.
    static let internalDate: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999
    /// int32 counts and sizes (§1: `sizeEstimate`, `body.size`, totals) can only be 0 or more.
    static let count: ClosedRange<Int> = 0...Int(Int32.max)

    static func error(_ path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: outOfRange))
    }
}

extension KeyedDecodingContainer {
    /// A required id: a string (else a `DecodingError`) of a Gmail id's shape (else `UnusableID`).
    func decodeID(_ key: Key, _ kind: GmailID.Kind) throws -> String {
        let id = try decode(String.self, forKey: key)
        guard GmailID.isWellFormed(id, as: kind) else { throw UnusableID(id: id, kind: kind, codingPath: codingPath + [key]) }
        return id
    }

    /// An optional id, checked as `decodeID` when present.
    func decodeIDIfPresent(_ key: Key, _ kind: GmailID.Kind) throws -> String? {
        guard let id = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard GmailID.isWellFormed(id, as: kind) else { throw UnusableID(id: id, kind: kind, codingPath: codingPath + [key]) }
        return id
    }

    /// Label ids, each of a label id's shape; a label named twice counts once.
    func decodeLabelIDs(_ key: Key) throws -> [String] {
        guard let ids = try decodeIfPresent([String].self, forKey: key) else { return [] }
        var seen = Set<String>()
        var kept: [String] = []
        for (index, id) in ids.enumerated() {
            guard GmailID.isWellFormed(id, as: .label) else {
                throw UnusableID(id: id, kind: .label, codingPath: codingPath + [key, WireKey(intValue: index)])
            }
            if seen.insert(id).inserted { kept.append(id) }
        }
        return kept
    }

    /// A history id (a decimal string, §1) within `WireRange.historyID`, when present.
    func decodeHistoryIDIfPresent(_ key: Key) throws -> String? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let value = WireInteger.unsigned(text), WireRange.historyID.contains(value) else {
            throw WireRange.error(codingPath + [key])
        }
        return text
    }

    /// An int64 decimal string within `range`, when present.
    func decodeInt64StringIfPresent(_ key: Key, in range: ClosedRange<Int64>) throws -> String? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let value = WireInteger.signed(text), range.contains(value) else { throw WireRange.error(codingPath + [key]) }
        return text
    }

    /// A page token: a string when present; an empty one is absent, as proto3 JSON leaves
    /// out empty strings (§1), and sending it back would list the first page again.
    func decodePageToken(_ key: Key) throws -> String? {
        guard let token = try decodeIfPresent(String.self, forKey: key), !token.isEmpty else { return nil }
        return token
    }

    /// A JSON number within `WireRange.count`, when present.
    func decodeCountIfPresent(_ key: Key) throws -> Int? {
        guard let value = try decodeIfPresent(Int.self, forKey: key) else { return nil }
        guard WireRange.count.contains(value) else { throw WireRange.error(codingPath + [key]) }
        return value
    }
}

/// One element of a list that can go on without it: the element, or the id that made it
/// unusable (see the file's comment). Only `UnusableID` is caught; any other fault of the
/// element makes the whole answer unreadable.
struct Skippable<T: Decodable>: Decodable {
    var value: T?
    var unusable: UnusableID?

    init(from decoder: any Decoder) throws {
        do {
            value = try T(from: decoder)
        } catch let error as UnusableID {
            unusable = error
        }
    }
}

extension Array where Element: Decodable {
    /// The elements decoded, in order, and the ids of those skipped.
    static func kept(_ elements: [Skippable<Element>]?) -> (values: [Element], unusable: [String]) {
        var values: [Element] = []
        var unusable: [String] = []
        for element in elements ?? [] {
            if let value = element.value { values.append(value) }
            if let skipped = element.unusable { unusable.append(skipped.id) }
        }
        return (values, unusable)
    }
}
