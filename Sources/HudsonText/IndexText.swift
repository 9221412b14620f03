/*!
 Text as the full-text index holds it, and words as a search looks them up. FTS5's
 `unicode61` tokenizer splits on spaces and punctuation, so a Japanese or Chinese
 sentence, written without spaces, was one token: `資料` did not find 会議の資料を明日送ります,
 where Gmail finds it. Hudson indexes each run of Han, Hiragana and Katakana as its
 overlapping bigrams plus its last character (the CJK bigram scheme of Lucene's
 CJKBigramFilter), and looks a word of those scripts up as the phrase of its bigrams: a
 word of two or more characters is found wherever it occurs in a run, and one character
 by a prefix query (every character of a run starts a token). Hangul is written with
 spaces between words and stays as it is; so does every other script.

 `forIndex` is what `hudson_indexed_v1` answers (Store.open defines it; the index's
 triggers and content view call it, migration 013): its answers must never change, or the
 index would no longer agree with its content. A change needs a new function name and a
 migration that rebuilds the index (StoreOpenTests pins its answers).
 */
public enum IndexText {
    /// Han (with its extensions and compatibility ideographs and 々〆〇), Hiragana and
    /// Katakana (full and half width): the scripts written without spaces between words.
    public static func isBigrammed(_ value: UInt32) -> Bool {
        switch value {
        case 0x3005...0x3007, 0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xF900...0xFAFF, 0xFF66...0xFF9F, 0x20000...0x323AF:
            return true
        default:
            return false
        }
    }

    /// The text with each run of bigrammed characters replaced by its bigrams and its last
    /// character, space-separated and set apart from the text around it by spaces.
    public static func forIndex(_ text: String) -> String {
        segmented(text, lastCharacter: true)
    }

    /// A search word or phrase the same way, but without the single last character of its
    /// final run: `会議資料` is the phrase `会議 議資 資料`, which the index holds in that
    /// order wherever the word occurs, also inside a longer run. A run followed by more
    /// text keeps its last character, as the index has it before what follows (`資料A` is
    /// `資料 料 A`, `"東京 大阪"` is `東京 京 大阪`). A run of one character stays one.
    public static func forQuery(_ text: String) -> String {
        segmented(text, lastCharacter: false)
    }

    /// Whether the last token of `forQuery`'s answer is a single bigrammed character,
    /// which only a prefix query finds inside a run.
    public static func endsWithLoneCharacter(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.suffix(2))
        guard let last = scalars.last, isBigrammed(last.value) else { return false }
        return scalars.count == 1 || !isBigrammed(scalars[0].value)
    }

    /// `lastCharacter`: whether the final run ends with its last character too (every
    /// other run always does: text follows it).
    private static func segmented(_ text: String, lastCharacter: Bool) -> String {
        // Most text has nothing to do: one pass over the UTF-8 bytes finds no lead byte of
        // a three- or four-byte sequence at or above U+3005.
        guard text.utf8.contains(where: { $0 >= 0xE3 }) else { return text }
        var result = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        var separate = false  // the text after a run needs a space before it
        func flush(final: Bool) {
            guard !run.isEmpty else { return }
            if let last = result.last, !last.properties.isWhitespace { result.append(" ") }
            if run.count == 1 {
                result.append(run[0])
            } else {
                for index in 0..<(run.count - 1) {
                    if index > 0 { result.append(" ") }
                    result.append(run[index])
                    result.append(run[index + 1])
                }
                if lastCharacter || !final {
                    result.append(" ")
                    result.append(run[run.count - 1])
                }
            }
            run.removeAll(keepingCapacity: true)
            separate = true
        }
        for scalar in text.unicodeScalars {
            if isBigrammed(scalar.value) {
                run.append(scalar)
                continue
            }
            flush(final: false)
            if separate && !scalar.properties.isWhitespace { result.append(" ") }
            separate = false
            result.append(scalar)
        }
        flush(final: true)
        return String(result)
    }
}
