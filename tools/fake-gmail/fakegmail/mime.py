"""RFC 822 <-> Gmail ``MessagePart`` conversion (gmail-api.md §2.3 and §8).

``parse()`` turns the original message bytes into the ``format=full`` payload:
root partId "", children "0", "1", nested "0.0"...; header order and
duplicates kept, values unfolded and RFC 2047-decoded; leaf ``body.data`` is
base64url without padding of the content after its Content-Transfer-Encoding
is undone (bytes still in the part's charset); attachments (a filename or
``Content-Disposition: attachment``) get ``{attachmentId, size}`` instead;
multipart containers get ``{size: 0}`` plus ``parts``; message/rfc822 parts
carry the nested message as their single child part.

``payload_to_raw()`` goes the other way for messages loaded from Gmail NDJSON
that have no ``raw``.
"""
import binascii
import email
import email.errors
import email.header
import email.message
import email.policy
import email.utils
import hashlib
import html
import html.parser
import re
from email.parser import BytesHeaderParser, BytesParser

from .util import b64_lenient, b64url_nopad

_PARSER = BytesParser(policy=email.policy.compat32)
_HPARSER = BytesHeaderParser(policy=email.policy.compat32)
_FOLD = re.compile(r"\r?\n(?=[ \t])")
_MSGID = re.compile(r"<[^<>\s]+>")
_SUBJECT_PREFIX = re.compile(r"^\s*(re|fwd?|aw|wg|sv|vs|tr)\s*(\[\d+\])?\s*:\s*", re.I)
ADDRESS_HEADERS = {"from", "to", "cc", "bcc", "reply-to", "sender", "delivered-to"}
SNIPPET_CHARS = 200

# ------------------------------------------------------------------ headers


def _fix_surrogates(value):
    """compat32 keeps raw 8-bit header bytes as surrogates: read them as UTF-8."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("ascii", "surrogateescape").decode("utf-8", "replace")


def decode_words(value):
    """Decode RFC 2047 encoded-words; leave the text alone when that fails."""
    if "=?" not in value:
        return value
    try:
        return str(email.header.make_header(email.header.decode_header(value)))
    except (ValueError, LookupError, UnicodeError, email.errors.HeaderParseError):
        return value


def header_text(value):
    """A header value as Gmail shows it in payload.headers: unfolded, decoded (§8)."""
    if not isinstance(value, str):
        value = str(value)
    value = _FOLD.sub("", _fix_surrogates(value))
    return decode_words(value)


def parse_headers(raw):
    """Parse only the header block of ``raw`` (fast path for loaders)."""
    return _HPARSER.parsebytes(raw)


def message_ids(value):
    """All ``<...>`` message ids in a References / In-Reply-To value."""
    return _MSGID.findall(value or "")


def normalize_subject(subject):
    """Subject without Re:/Fwd: prefixes, lower-cased (§2.7 thread rule)."""
    s = subject or ""
    while True:
        t = _SUBJECT_PREFIX.sub("", s, count=1)
        if t == s:
            break
        s = t
    return " ".join(s.split()).lower()


# ------------------------------------------------------------------ text


class _TextExtractor(html.parser.HTMLParser):
    """Collect the visible text of an HTML document (for snippets)."""

    _SKIP = {"script", "style", "head", "title"}
    _BLOCK = {"p", "br", "div", "tr", "li", "td", "h1", "h2", "h3", "table"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self.skip += 1
        elif tag in self._BLOCK:
            self.out.append(" ")

    def handle_endtag(self, tag):
        if tag in self._SKIP and self.skip:
            self.skip -= 1
        elif tag in self._BLOCK:
            self.out.append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def html_to_text(markup):
    parser = _TextExtractor()
    try:
        parser.feed(markup)
        parser.close()
    except (AssertionError, ValueError):
        pass
    return "".join(parser.out)


def decode_text(data, charset):
    """Bytes of a text part -> str, with the §8 fallbacks (UTF-8, then Latin-1)."""
    for cs in (charset, "utf-8"):
        if not cs:
            continue
        try:
            return data.decode(cs)
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("latin-1")


def make_snippet(text):
    """First ~200 characters, whitespace collapsed, HTML-escaped like Gmail (§2.3)."""
    s = " ".join((text or "").split())[:SNIPPET_CHARS]
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


# ------------------------------------------------------------------ parse


def attachment_id(msg_id, part_id):
    """Long, opaque attachment id, stable per (message, part) (§2.4)."""
    d1 = hashlib.sha256(("%s/%s" % (msg_id, part_id)).encode("utf-8")).digest()
    d2 = hashlib.sha256(d1 + b"fake-gmail-attachment").digest()
    return "ANGjdJ" + b64url_nopad(d1 + d2 + d1[:16])


def _child_id(pid, index):
    return str(index) if pid == "" else "%s.%d" % (pid, index)


def _filename(part):
    try:
        name = part.get_filename()
    except (ValueError, LookupError, UnicodeError):
        name = None
    return header_text(name) if name else ""


class Parsed:
    """Result of ``parse``: the payload, attachment bytes by id, the snippet."""

    __slots__ = ("payload", "attachments", "snippet")

    def __init__(self, payload, attachments, snippet):
        self.payload = payload
        self.attachments = attachments
        self.snippet = snippet


def parse(raw, msg_id):
    """Parse RFC 822 bytes into a ``Parsed`` (payload tree, attachments, snippet)."""
    msg = _PARSER.parsebytes(raw)
    attachments = {}
    texts = {}
    payload = _part(msg, "", msg_id, attachments, texts)
    if "text/plain" in texts:
        text = texts["text/plain"]
    else:
        text = html_to_text(texts.get("text/html", ""))
    return Parsed(payload, attachments, make_snippet(text))


def _part(part, pid, msg_id, attachments, texts):
    ctype = part.get_content_type()
    filename = _filename(part)
    disposition = (part.get("Content-Disposition") or "").split(";")[0].strip().lower()
    is_attachment = bool(filename) or disposition == "attachment"
    node = {"partId": pid, "mimeType": ctype, "filename": filename}
    headers = [{"name": k, "value": header_text(v)} for k, v in part.items()]
    if headers:
        node["headers"] = headers
    if ctype.startswith("multipart/") and part.is_multipart():
        node["body"] = {"size": 0}
        children = [_part(sub, _child_id(pid, i), msg_id, attachments, texts)
                    for i, sub in enumerate(part.get_payload())]
        if children:
            node["parts"] = children
        return node
    if ctype == "message/rfc822" and part.is_multipart():
        inner = part.get_payload(0)
        data = inner.as_bytes()
        node["body"] = _leaf_body(data, is_attachment, msg_id, pid, attachments, False)
        node["parts"] = [_part(inner, _child_id(pid, 0), msg_id, attachments, {})]
        return node
    data = part.get_payload(decode=True) or b""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    node["body"] = _leaf_body(data, is_attachment, msg_id, pid, attachments, True)
    if not is_attachment and ctype in ("text/plain", "text/html") and ctype not in texts:
        texts[ctype] = decode_text(data, part.get_content_charset())
    return node


def _leaf_body(data, is_attachment, msg_id, pid, attachments, inline_data):
    if is_attachment:
        aid = attachment_id(msg_id, pid)
        attachments[aid] = data
        return {"attachmentId": aid, "size": len(data)}
    body = {"size": len(data)}
    if data and inline_data:
        body["data"] = b64url_nopad(data)
    return body


# ------------------------------------------------------------------ payload -> raw


def filler(att_id, size):
    """Deterministic stand-in bytes for an attachment whose data was not given."""
    seed = hashlib.sha256(att_id.encode("utf-8")).digest()
    return (seed * (size // len(seed) + 1))[:size]


def walk(payload):
    """Yield every part of a payload tree, depth first."""
    stack = [payload]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("parts") or []))


def payload_attachments(payload):
    """attachmentId -> part node, for payloads given as JSON (NDJSON loader)."""
    return {n["body"]["attachmentId"]: n for n in walk(payload)
            if (n.get("body") or {}).get("attachmentId")}


def payload_snippet(payload):
    """Snippet computed from a JSON payload (first text/plain, else text/html)."""
    found = {}
    for node in walk(payload):
        mime = node.get("mimeType", "")
        data = (node.get("body") or {}).get("data")
        if mime in ("text/plain", "text/html") and data and mime not in found \
                and not node.get("filename"):
            found[mime] = b64_lenient(data).decode("utf-8", "replace")
    if "text/plain" in found:
        return make_snippet(found["text/plain"])
    return make_snippet(html_to_text(found.get("text/html", "")))


_NONASCII_QUOTED = re.compile(r'"([^"]*[^\x00-\x7f][^"]*)"')


def _encode_header(name, value):
    """Header value -> ASCII for the raw message (RFC 2047 where needed)."""
    if value.isascii():
        return value
    lname = name.lower()
    if lname in ADDRESS_HEADERS:
        pairs = email.utils.getaddresses([value])
        return ", ".join(email.utils.formataddr(p, charset="utf-8") for p in pairs)
    if lname.startswith("content-"):
        return _NONASCII_QUOTED.sub(lambda m: '"%s"' % email.header.Header(
            m.group(1), "utf-8").encode(), value)
    return email.header.Header(value, "utf-8", header_name=name).encode(linesep="\r\n")


def _clean_value(lname, value):
    value = value.replace("\r", "")
    if "\n" in value:
        value = value.split("\n")[0] if lname == "content-type" else " ".join(value.split("\n"))
    return value


def payload_to_raw(payload, salt=""):
    """Rebuild RFC 822 bytes (CRLF) from a ``format=full`` payload (§2.3)."""
    out = []
    _emit(payload, out, salt)
    return b"".join(out)


def _emit(part, out, salt):
    mime = part.get("mimeType") or "text/plain"
    headers, ctype = [], None
    for h in part.get("headers") or []:
        name, lname = h.get("name", ""), h.get("name", "").lower()
        if not name or lname == "content-transfer-encoding":
            continue
        value = _clean_value(lname, h.get("value", ""))
        if lname == "content-type":
            ctype = value
        headers.append([name, value])
    if mime.startswith("multipart/"):
        boundary = None
        if ctype:
            boundary = email.message.Message()
            boundary["Content-Type"] = ctype
            boundary = boundary.get_param("boundary")
        if not boundary:
            boundary = "fgb_" + hashlib.sha1(("%s/%s" % (salt, part.get("partId"))).encode(
                "utf-8")).hexdigest()[:24]
            headers = [h for h in headers if h[0].lower() != "content-type"]
            headers.append(["Content-Type", '%s; boundary="%s"' % (mime, boundary)])
        _write_headers(headers, out)
        for child in part.get("parts") or []:
            out.append(b"--" + boundary.encode("ascii") + b"\r\n")
            _emit(child, out, salt)
            out.append(b"\r\n")
        out.append(b"--" + boundary.encode("ascii") + b"--\r\n")
        return
    if mime == "message/rfc822" and part.get("parts"):
        if ctype is None:
            headers.append(["Content-Type", "message/rfc822"])
        _write_headers(headers, out)
        _emit(part["parts"][0], out, salt)
        return
    body = part.get("body") or {}
    if body.get("data"):
        data = b64_lenient(body["data"])
    elif body.get("attachmentId"):
        data = filler(body["attachmentId"], int(body.get("size") or 0))
    else:
        data = b""
    filename = part.get("filename") or ""
    if ctype is None:
        extra = '; name="%s"' % filename if filename else (
            '; charset="UTF-8"' if mime.startswith("text/") else "")
        headers.append(["Content-Type", mime + extra])
    if filename and not any(h[0].lower() == "content-disposition" for h in headers):
        headers.append(["Content-Disposition", 'attachment; filename="%s"' % filename])
    lines = data.split(b"\n")
    if data.isascii() and max(len(line) for line in lines) <= 998:
        encoded, cte = data, "7bit"
    elif mime.startswith("text/"):
        encoded, cte = binascii.b2a_qp(data), "quoted-printable"
    else:
        b64 = binascii.b2a_base64(data, newline=False)
        encoded = b"\r\n".join(b64[i:i + 76] for i in range(0, len(b64), 76))
        cte = "base64"
    headers.append(["Content-Transfer-Encoding", cte])
    _write_headers(headers, out)
    out.append(encoded)


def _write_headers(headers, out):
    for name, value in headers:
        out.append(("%s: %s\r\n" % (name, _encode_header(name, value))).encode("utf-8"))
    out.append(b"\r\n")
