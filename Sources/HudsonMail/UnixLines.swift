/*!
 Files written for Unix mail tools end their lines in LF (issue 38 §4): a Maildir file, an
 `.eml` file, `hd-show --raw`, as mboxrd (Mbox) always has. Gmail keeps a source with CRLF,
 as it came over SMTP; notmuch, mu, mutt and git read either, but a file whose lines end
 in CR LF shows `^M` in an editor and in `grep` or `diff` of it. A line end is LF with
 the CRs right before it (`CR CR LF` too, so that converting twice changes nothing: a
 relabel rewrites a Maildir file from the one there); a CR anywhere else is content and
 stays.
 */
public enum UnixLines {
    /// `bytes` with every line end (LF and the CRs right before it) turned into LF.
    public static func from(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(of: 13) else { return bytes }
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        output += bytes[..<first]
        var index = first
        while index < bytes.count {
            if bytes[index] == 13 {
                var end = index
                while end < bytes.count && bytes[end] == 13 { end += 1 }
                if end < bytes.count && bytes[end] == 10 {
                    index = end  // the CRs of a line end go; its LF is copied next
                    continue
                }
                output += bytes[index..<end]
                index = end
                continue
            }
            output.append(bytes[index])
            index += 1
        }
        return output
    }
}
