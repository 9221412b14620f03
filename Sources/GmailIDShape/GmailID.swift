/*!
 The one rule for what a Gmail id may look like (issue 37 §1), for every id Hudson puts in
 a request, takes from Gmail's answers or accepts from a user: messages, threads, drafts,
 labels, filters and attachments.

 Gmail's ids are opaque (gmail-api.md §1 "IDs"), but every kind it documents or shows is a
 short run of letters, digits, `-` and `_`, the base64url alphabet: message and thread ids
 are lowercase hex (`18c9a4f0e2b1d3c7`), label ids upper-case words or `Label_12`, draft ids
 `r-123456789`, attachment ids long opaque strings (`ANGjdJ8w…`). An id becomes one segment
 of a URL path (`/drafts/{id}`), where percent-encoding `/ ? # %` is not enough: `.` and
 `..` are dot-segments that URL resolution removes (RFC 3986 §5.2.4), so `draft:..` sent
 `DELETE /gmail/v1/users/me/`. An id in this alphabet is a plain segment that needs no
 encoding, cannot be empty, and cannot reach another resource.

 No dependencies: HudsonStore (the references users type) and HudsonGmail (requests and
 answers) both import it, and neither can import the other.
 */

public enum GmailID {
    /// What an id names; only the length bound differs between kinds.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case message, thread, draft, label, filter, attachment

        public var description: String { rawValue }
    }

    /// The longest id of a kind, in bytes. Message, thread, draft, label and filter ids are
    /// a few dozen characters; attachment ids are long (hundreds of characters), so they get
    /// room to spare while a request line stays bounded.
    public static func maximumLength(of kind: Kind) -> Int {
        kind == .attachment ? 4096 : 256
    }

    /// Whether `id` has the shape of a Gmail id of this kind.
    public static func isWellFormed(_ id: String, as kind: Kind) -> Bool {
        problem(with: id, as: kind) == nil
    }

    /// Why `id` is not a Gmail id of this kind, in words that follow the id in a message
    /// ("…: is empty"); nil when it is one.
    public static func problem(with id: String, as kind: Kind) -> String? {
        if id.isEmpty { return "a Gmail \(kind) id cannot be empty" }
        if id.utf8.count > maximumLength(of: kind) {
            return "a Gmail \(kind) id has at most \(maximumLength(of: kind)) characters"
        }
        guard id.utf8.allSatisfy(isIDByte) else {
            return "a Gmail \(kind) id has only letters, digits, '-' and '_'"
        }
        return nil
    }

    /// The base64url alphabet, as bytes (ASCII only: a non-ASCII scalar's UTF-8 bytes are
    /// all 0x80 or above, so they fail here).
    private static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
