"""Unit tests: RFC 822 -> Gmail payload (gmail-api.md §2.3, §8), base64, snippets."""
import base64
import unittest

from fakegmail import mime
from fakegmail.util import b64_lenient, b64url_nopad, b64url_pad

MIXED = (
    b"Received: from a.example by mx.google.com;\r\n\tMon, 2 Dec 2024 04:00:00 -0800\r\n"
    b"Received: from b.example by a.example; Mon, 2 Dec 2024 03:59:00 -0800\r\n"
    b"From: =?UTF-8?B?Wm/DqyBNw7xsbGVy?= <zoe@example.org>\r\n"
    b"To: Ann <ann@example.com>\r\n"
    b"Subject: =?ISO-8859-1?Q?Gr=FC=DFe?= and more\r\n"
    b"Message-ID: <abc@example.org>\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="XX"\r\n\r\n'
    b"--XX\r\n"
    b'Content-Type: multipart/alternative; boundary="YY"\r\n\r\n'
    b"--YY\r\n"
    b'Content-Type: text/plain; charset="ISO-8859-1"\r\n'
    b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
    b"Caf=E9 & Tom's \"plan\" <soon> 5 > 3\r\n"
    b"--YY\r\n"
    b'Content-Type: text/html; charset="UTF-8"\r\n\r\n'
    b"<p>Caf\xc3\xa9</p>\r\n"
    b"--YY--\r\n"
    b"--XX\r\n"
    b'Content-Type: application/pdf; name="r.pdf"\r\n'
    b'Content-Disposition: attachment; filename="r.pdf"\r\n'
    b"Content-Transfer-Encoding: base64\r\n\r\n"
    + base64.b64encode(b"%PDF-1.4 tiny") + b"\r\n"
    b"--XX\r\n"
    b"Content-Type: message/rfc822\r\n\r\n"
    b"From: x@example.org\r\nSubject: inner\r\n\r\ninner body\r\n"
    b"--XX--\r\n")


class ParseTests(unittest.TestCase):
    def setUp(self):
        self.parsed = mime.parse(MIXED, "18c9a4f0e2b1d3c7")
        self.root = self.parsed.payload

    def test_tree_shape_and_part_ids(self):
        root = self.root
        self.assertEqual(root["partId"], "")
        self.assertEqual(root["mimeType"], "multipart/mixed")
        self.assertEqual(root["filename"], "")
        self.assertEqual(root["body"], {"size": 0})
        ids = [p["partId"] for p in mime.walk(root)]
        self.assertEqual(ids, ["", "0", "0.0", "0.1", "1", "2", "2.0"])

    def test_headers_order_duplicates_decoding(self):
        headers = self.root["headers"]
        self.assertEqual([h["name"] for h in headers[:2]], ["Received", "Received"])
        self.assertNotIn("\n", headers[0]["value"])
        values = {h["name"]: h["value"] for h in headers}
        self.assertEqual(values["From"], "Zoë Müller <zoe@example.org>")
        self.assertEqual(values["Subject"], "Grüße and more")

    def test_leaf_data_is_decoded_but_keeps_charset(self):
        plain = self.root["parts"][0]["parts"][0]
        data = b64_lenient(plain["body"]["data"])
        self.assertTrue(data.startswith(b"Caf\xe9 & Tom's"))     # ISO-8859-1 bytes, QP undone
        self.assertEqual(plain["body"]["size"], len(data))
        self.assertNotIn("=", plain["body"]["data"])              # base64url without padding
        self.assertIn({"name": "Content-Transfer-Encoding", "value": "quoted-printable"},
                      plain["headers"])

    def test_attachment_has_id_not_data(self):
        att = self.root["parts"][1]
        self.assertEqual(att["filename"], "r.pdf")
        self.assertEqual(set(att["body"]), {"attachmentId", "size"})
        self.assertGreater(len(att["body"]["attachmentId"]), 60)
        self.assertEqual(self.parsed.attachments[att["body"]["attachmentId"]], b"%PDF-1.4 tiny")
        self.assertEqual(att["body"]["attachmentId"],
                         mime.parse(MIXED, "18c9a4f0e2b1d3c7").payload["parts"][1]["body"][
                             "attachmentId"])

    def test_message_rfc822_carries_nested_message(self):
        fwd = self.root["parts"][2]
        self.assertEqual(fwd["mimeType"], "message/rfc822")
        inner = fwd["parts"][0]
        self.assertEqual(inner["partId"], "2.0")
        self.assertIn({"name": "Subject", "value": "inner"}, inner["headers"])

    def test_snippet_escaped_like_gmail(self):
        self.assertEqual(self.parsed.snippet,
                         "Café &amp; Tom&#39;s &quot;plan&quot; &lt;soon&gt; 5 &gt; 3")

    def test_html_only_snippet_is_stripped(self):
        raw = (b"From: a@b\r\nTo: c@d\r\nContent-Type: text/html\r\n\r\n"
               b"<html><head><style>p{}</style></head><body><p>Hello&nbsp;<b>world</b></p>"
               b"<p>again</p></body></html>")
        parsed = mime.parse(raw, "x")
        self.assertEqual(parsed.snippet, "Hello world again")   # &nbsp; collapsed too
        self.assertNotIn("parts", parsed.payload)
        self.assertIn("data", parsed.payload["body"])

    def test_snippet_is_at_most_200_chars(self):
        raw = b"From: a@b\r\nTo: c@d\r\n\r\n" + b"word " * 200
        self.assertLessEqual(len(mime.parse(raw, "x").snippet), 200)


class RebuildTests(unittest.TestCase):
    def test_payload_to_raw_round_trip(self):
        payload = mime.parse(MIXED, "m1").payload
        raw = mime.payload_to_raw(payload, "m1")
        again = mime.parse(raw, "m1").payload
        leaves = lambda p: [(n["partId"], n["mimeType"], n.get("filename"), n["body"].get("size"))
                            for n in mime.walk(p) if "parts" not in n]  # noqa: E731
        self.assertEqual(leaves(again), leaves(payload))
        self.assertTrue(raw.isascii())

    def test_missing_boundary_and_attachment_data(self):
        payload = {"partId": "", "mimeType": "multipart/mixed", "filename": "",
                   "headers": [{"name": "Subject", "value": "Zürich trip"},
                               {"name": "From", "value": "Zoë <z@example.org>"}],
                   "body": {"size": 0}, "parts": [
                       {"partId": "0", "mimeType": "text/plain", "filename": "",
                        "body": {"size": 5, "data": b64url_nopad(b"hello")}},
                       {"partId": "1", "mimeType": "application/pdf", "filename": "a.pdf",
                        "body": {"attachmentId": "ATT1", "size": 300}}]}
        raw = mime.payload_to_raw(payload, "m2")
        parsed = mime.parse(raw, "m2")
        self.assertEqual(parsed.payload["parts"][1]["body"]["size"], 300)
        values = {h["name"]: h["value"] for h in parsed.payload["headers"]}
        self.assertEqual(values["Subject"], "Zürich trip")
        self.assertEqual(values["From"], "Zoë <z@example.org>")


class HelperTests(unittest.TestCase):
    def test_base64_lenient(self):
        data = bytes(range(256))
        for text in (b64url_pad(data), b64url_nopad(data), base64.b64encode(data).decode(),
                     base64.b64encode(data).decode().rstrip("="), " \n".join(
                         [b64url_pad(data)[:40], b64url_pad(data)[40:]])):
            self.assertEqual(b64_lenient(text), data)
        with self.assertRaises(ValueError):
            b64_lenient("a")
        with self.assertRaises(ValueError):
            b64_lenient("!!!!")

    def test_normalize_subject(self):
        self.assertEqual(mime.normalize_subject("Re: Fwd: RE:  Quarterly   report"),
                         "quarterly report")
        self.assertEqual(mime.normalize_subject("AW: [2] x"), "[2] x")


if __name__ == "__main__":
    unittest.main()
