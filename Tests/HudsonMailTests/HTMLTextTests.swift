// HTML to readable text: what is dropped, how blocks, lists, links and images read, entity
// decoding, and bounded work on hostile markup.
import Testing
@testable import HudsonMail

@Suite("HTMLText.render")
struct HTMLTextTests {
    @Test("script, style, head, title and comments are dropped")
    func invisibleContent() {
        let html = """
        <!DOCTYPE html><html><head><title>T</title><style>p { color: red }</style>
        <script>var x = "<p>no</p>";</script></head>
        <body><!-- a comment <p>no</p> --><p>Hello</p><script>alert(1)</script></body></html>
        """
        #expect(HTMLText.render(html) == "Hello")
    }

    @Test("a script with markup-looking strings ends only at its own end tag")
    func rawTextEndsAtEndTag() {
        #expect(HTMLText.render("<script>if (a </b) { x = '</p>' }</SCRIPT >after") == "after")
    }

    @Test("hidden preheaders are dropped; an unclosed hidden element is kept")
    func hiddenContent() {
        let html = """
        <div style="display: none; max-height:0">Preheader text &#847;&zwnj;&nbsp;</div>
        <span hidden>also hidden</span><p>Visible</p>
        """
        #expect(HTMLText.render(html) == "Visible")
        #expect(HTMLText.render("<p>a</p><div style=\"display:none\"><div>b</div>") == "a\n\nb")
    }

    @Test("block elements break lines; paragraphs and headings leave a blank line")
    func blocks() {
        let html = "<h1>Title</h1><p>One</p><p>Two<br>Three</p><div>Four</div><div>Five</div>"
        #expect(HTMLText.render(html) == "Title\n\nOne\n\nTwo\nThree\n\nFour\nFive")
    }

    @Test("whitespace collapses within lines; at most two blank lines in a row")
    func whitespace() {
        #expect(HTMLText.render("  a \n\t b   &nbsp; c  ") == "a b c")
        #expect(HTMLText.render("a<br><br><br><br><br><br>b") == "a\n\n\nb")
    }

    @Test("list items read as '- ' lines, nested lists indent")
    func lists() {
        let html = "<p>Items:</p><ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul><ol><li>first"
        #expect(HTMLText.render(html) == "Items:\n\n- one\n- two\n  - inner\n\n- first")
    }

    @Test("table rows are lines and cells are separated")
    func tables() {
        let html = "<table><tr><td>Name</td><td>Qty</td></tr><tr><th>Pen</th><td>2</td></tr></table>after"
        #expect(HTMLText.render(html) == "Name Qty\nPen 2\n\nafter")
    }

    @Test("blockquotes are prefixed with '> '")
    func blockquotes() {
        let html = "<p>Reply</p><blockquote>quoted<br>text<blockquote>deeper</blockquote></blockquote>"
        #expect(HTMLText.render(html) == "Reply\n\n> quoted\n> text\n\n> > deeper")
    }

    @Test("links read 'label <url>', and the URL is left out when it repeats the label")
    func links() {
        #expect(HTMLText.render("<a href=\"https://example.com/x?a=1&amp;b=2\">the docs</a>.")
                == "the docs <https://example.com/x?a=1&b=2>.")
        #expect(HTMLText.render("<a href=\"https://www.example.com/\">example.com</a>") == "example.com")
        #expect(HTMLText.render("<a href=\"mailto:ann@example.com\">ann@example.com</a>") == "ann@example.com")
        #expect(HTMLText.render("<a href=\"mailto:ann@example.com?subject=hi\">Write</a>") == "Write <ann@example.com>")
        #expect(HTMLText.render("<a href=\"#top\">Top</a> <a href=\"javascript:void(0)\">JS</a>") == "Top JS")
        #expect(HTMLText.render("<a href=\"https://t.example/p\"><img src=x width=1 height=1></a>end") == "end")
    }

    @Test("images read as [alt]; tracking pixels and alt-less images vanish")
    func images() {
        #expect(HTMLText.render("<img src=\"logo.png\" alt=\"ACME  Corp\"> news") == "[ACME Corp] news")
        #expect(HTMLText.render("a<img src=\"https://t.example/o.gif\" width=\"1\" height=\"1\" alt=\"\">b") == "ab")
        #expect(HTMLText.render("a<img src=\"x.gif\" width=\"1\" alt=\"pixel\">b") == "ab")
        #expect(HTMLText.render("<a href=\"https://shop.example\"><img alt=\"Shop now\" src=x></a>")
                == "[Shop now] <https://shop.example>")
    }

    @Test("named, decimal and hex references decode; bad numbers become U+FFFD")
    func entities() {
        #expect(HTMLText.render("&amp; &lt;&gt; &quot;&apos; &copy; &eacute;&Eacute; &mdash;&hellip;&rsquo;&euro;")
                == "& <> \"' © éÉ —…’€")
        #expect(HTMLText.render("&#233;&#xE9;&#XE9;&#128512;&#x1F600;") == "ééé😀😀")
        #expect(HTMLText.render("&#0;&#xD800;&#x110000;&#99999999999;") == "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}")
        #expect(HTMLText.render("&#150;&#x93;") == "–“")
        #expect(HTMLText.render("&nosuch; &amp &copy2024 AT&T") == "&nosuch; & ©2024 AT&T")
        #expect(HTMLText.decodeReferences("a&nbsp;b") == "a\u{A0}b")
    }

    @Test("attribute values need the semicolon, so URLs with &copy= survive")
    func attributeReferences() {
        #expect(HTMLText.render("<a href=\"https://x.example/?a=1&copy=2\">go</a>") == "go <https://x.example/?a=1&copy=2>")
    }

    @Test("pre keeps its spacing and line breaks")
    func preformatted() {
        #expect(HTMLText.render("<p>code:</p><pre>  let x = 1\n\n  x  += 2</pre>done") == "code:\n\n  let x = 1\n\n  x  += 2\n\ndone")
    }

    @Test("a < that opens no tag is text; a tag cut off by the end is dropped")
    func strayAngles() {
        #expect(HTMLText.render("1 < 2 and 3 <= 4 <3") == "1 < 2 and 3 <= 4 <3")
        #expect(HTMLText.render("text <b class=\"x") == "text")
        #expect(HTMLText.render("a</>b<//x>c") == "abc")
    }

    @Test("hostile input: 10 MB of <, deep nesting, unclosed tags stay bounded")
    func hostileInput() {
        let angles = String(repeating: "<", count: 10_000_000)
        #expect(HTMLText.render(angles).count == 10_000_000)
        let deep = String(repeating: "<div><blockquote><ul><li><a href=x>", count: 20_000) + "bottom"
        let deepText = HTMLText.render(deep)
        #expect(deepText.contains("bottom"))
        #expect(deepText.split(separator: "\n").allSatisfy { $0.count < 100 })
        let unclosed = String(repeating: "<p><b><i>", count: 50_000) + "end"
        #expect(HTMLText.render(unclosed) == "end")
        let comment = "<!--" + String(repeating: "-", count: 100_000)
        #expect(HTMLText.render(comment) == "")
    }

    @Test("zero-width and soft-hyphen padding disappears")
    func invisibleCharacters() {
        #expect(HTMLText.render("ab&shy;c&#8203;d\u{034F}e&zwnj;f") == "abcdef")
    }
}
