"""The embedded, deterministic demo mailbox (``--demo``).

Same ``count``, ``seed``, ``span_days`` and ``now`` give byte-identical
messages and identical ids.  Realism (gmail-api.md §8 "MIME corpus" list):
threads of 1-8 messages with Message-ID / In-Reply-To / References and "Re:"
subjects; 40 senders (non-ASCII names RFC 2047-encoded); text/plain,
multipart/alternative, multipart/mixed with a small .pdf/.txt attachment;
one multipart/related with a ``cid:`` image, one forwarded message/rfc822,
two ISO-8859-1 parts and one Shift_JIS part; 7bit, quoted-printable, base64
and 8bit bodies; Gmail system, category and user labels; List-Id on
newsletter and forum mail; a little SPAM and TRASH.
"""
import base64
import binascii
import hashlib
import random
import time

from . import demodata as D
from .message import Message
from .util import gmail_id

DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
          "Nov", "Dec"]
SPECIALS = ["latin1", "latin1", "sjis", "related", "forward"]


def encode_word(text, charset="UTF-8", q=False):
    """RFC 2047 encoded-word for a non-ASCII header phrase."""
    if text.isascii():
        return text
    data = text.encode(charset)
    if q:
        return "=?%s?Q?%s?=" % (charset, binascii.b2a_qp(data, header=True).replace(
            b"?", b"=3F").decode("ascii"))
    return "=?%s?B?%s?=" % (charset, base64.b64encode(data).decode("ascii"))


def fmt_addr(name, addr):
    if not name.isascii():
        return "%s <%s>" % (encode_word(name), addr)
    if any(c in name for c in ',.;:"@'):
        return '"%s" <%s>' % (name, addr)
    return "%s <%s>" % (name, addr)


def rfc2822_date(ts, tz):
    sign = 1 if tz[0] == "+" else -1
    t = time.gmtime(ts + sign * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60))
    return "%s, %d %s %d %02d:%02d:%02d %s" % (
        DAYS[t.tm_wday], t.tm_mday, MONTHS[t.tm_mon - 1], t.tm_year,
        t.tm_hour, t.tm_min, t.tm_sec, tz)


def b64_lines(data):
    enc = base64.b64encode(data)
    return b"\r\n".join(enc[i:i + 76] for i in range(0, len(enc), 76)) + b"\r\n"


def text_entity(text, subtype="plain", charset="UTF-8", cte="7bit"):
    data = text.replace("\r\n", "\n").replace("\n", "\r\n").encode(charset)
    if cte == "base64":
        body = b64_lines(data)
    elif cte == "quoted-printable":
        body = binascii.b2a_qp(data)
    else:
        body = data
    head = 'Content-Type: text/%s; charset="%s"\r\nContent-Transfer-Encoding: %s\r\n\r\n' % (
        subtype, charset, cte)
    return head.encode("ascii") + body


def multipart(subtype, parts, boundary):
    out = [b'Content-Type: multipart/%s; boundary="%s"\r\n\r\n' % (
        subtype.encode(), boundary.encode())]
    for part in parts:
        out.append(b"--%s\r\n%s\r\n" % (boundary.encode(), part))
    out.append(b"--%s--\r\n" % boundary.encode())
    return b"".join(out)


def attachment_entity(filename, ctype, data, disposition="attachment", content_id=None):
    head = 'Content-Type: %s; name="%s"\r\nContent-Disposition: %s; filename="%s"\r\n' % (
        ctype, filename, disposition, filename)
    if content_id:
        head += "Content-ID: <%s>\r\nX-Attachment-Id: %s\r\n" % (content_id, content_id)
    head += "Content-Transfer-Encoding: base64\r\n\r\n"
    return head.encode("ascii") + b64_lines(data)


def generate(labels, account, count=300, seed=1, now=None, span_days=730):
    """Create the demo's user labels in ``labels``; return the list of Messages."""
    for label_id, name in D.USER_LABELS:
        labels.ensure(name, label_id)
    return _Generator(account, count, seed, now, span_days).run()


class _Generator:
    def __init__(self, account, count, seed, now, span_days):
        self.rnd = random.Random(seed)
        self.account = account
        self.count = count
        self.seed = seed
        self.end = int(now if now is not None else time.time())
        self.span = max(int(span_days * 86400), 3600)
        self.start = self.end - self.span
        self.seq = 0
        self.out = []
        self.taken = set()
        self.label_ids = dict((name, lid) for lid, name in D.USER_LABELS)
        weights = [1.0 / (k + 1) ** 0.8 for k in range(len(D.PEOPLE))]
        self.people_weights = weights

    # ---------------------------------------------------------- planning

    def run(self):
        r = self.rnd
        plans, total = [], 0
        while total < self.count:
            if r.random() < 0.55:
                kind = "human"
                n = r.choices(range(1, 9), weights=[30, 25, 15, 10, 8, 5, 4, 3])[0]
            else:
                kind = "auto"
                n = 1 if r.random() < 0.85 else r.randint(2, 3)
            n = min(n, self.count - total)
            plans.append((kind, n))
            total += n
        starts = sorted(self.start + int(self.span * r.random() ** 0.6) for _ in plans)
        picks = r.sample(range(self.count), min(self.count, len(SPECIALS)))
        self.specials = dict(zip(picks, SPECIALS))
        for (kind, n), t0 in zip(plans, starts):
            self.thread(kind, n, t0)
        return self.out

    def words(self, k, ascii_only=False):
        r = self.rnd
        out = []
        for _ in range(k):
            x = r.random()
            if x < 0.30:
                out.append(r.choice(D.STOP))
            elif x < 0.95 or ascii_only:
                out.append(r.choice(D.COMMON))
            elif x < 0.985:
                out.append(r.choice(D.RARE))
            else:
                out.append(r.choice(D.SNIPPET_TRAPS))
        return out

    def paragraphs(self, ascii_only=False):
        paras = []
        for _ in range(self.rnd.randint(1, 3)):
            ws = self.words(self.rnd.randint(8, 32), ascii_only)
            ws[0] = ws[0].capitalize()
            lines = [" ".join(ws[i:i + 11]) for i in range(0, len(ws), 11)]
            paras.append("\n".join(lines) + self.rnd.choice(".?!."))
        return paras

    def subject(self, sender_kind):
        r = self.rnd
        topic = " ".join(w for w in self.words(r.randint(2, 5)) if w not in D.STOP) or "update"
        topic = topic[0].upper() + topic[1:]
        return {
            "gh": "[%s] %s (#%d)" % (r.choice(D.GH_REPOS), topic, r.randint(10, 999)),
            "ship": "Your Amazon.com order #%03d-%07d has shipped" % (
                r.randrange(1000), r.randrange(10 ** 7)),
            "receipt": "Your receipt for %s" % topic.lower(),
            "travel": "Your trip to %s: booking confirmation" % r.choice(
                ["Zürich", "Lisbon", "Kraków", "Reykjavík", "Osaka"]),
            "news": "Weekly digest #%d: %s" % (r.randint(100, 600), topic),
            "forum": "[forum] %s" % topic,
            "social": "%s mentioned you" % r.choice(D.PEOPLE)[0].split()[0],
            "promo": "%d%% off %s this weekend" % (r.choice([10, 20, 30, 50]), topic.lower()),
            "spam": "You have WON a %s!!!" % topic.lower(),
        }.get(sender_kind, topic)

    # ---------------------------------------------------------- threads

    def thread(self, kind, n, t0):
        r = self.rnd
        recency = (t0 - self.start) / self.span
        p_inbox = 0.12 + 0.85 * recency ** 3
        user_label = None
        if kind == "human":
            first = r.choices(D.PEOPLE, weights=self.people_weights)[0]
            group = [p for p in D.PEOPLE if p[2] == first[2] and p != first]
            people = [first] + r.sample(group, r.choice([0, 0, 0, 1, 2]))
            category, skind, list_id = "CATEGORY_PERSONAL", "human", None
            if first[2] == "work" and r.random() < 0.3:
                user_label = "Work"
            elif first[2] == "family" and r.random() < 0.8:
                user_label = "Family"
            important = r.random() < 0.45
            p_unread = 0.05 + 0.6 * recency ** 6
        else:
            name, addr, skind, category, user_label, list_id = r.choice(D.AUTOMATED)
            people = [(name, addr, "auto")]
            important = r.random() < 0.08
            p_unread = min(0.9, (0.1 + 0.7 * recency ** 3) * (
                1.8 if skind in ("promo", "news", "social") else 1.0))
            p_inbox *= 0.6 if skind in ("promo", "news") else 1.0
        inbox = r.random() < p_inbox
        subject = self.subject(skind)
        refs, prev_text, prev_from, mine, ts = [], None, None, False, t0
        owner_first = kind == "human" and r.random() < 0.15
        for j in range(n):
            if j:
                ts = min(ts + int(r.expovariate(1.0 / (5 * 3600))) + 60, self.end - 1)
                mine = (not mine) if r.random() < 0.6 else mine
            else:
                mine = owner_first
            sender = (D.OWNER_NAME, self.account) if mine else r.choice(people)[:2]
            if mine:
                labels = ["SENT"] + (["IMPORTANT"] if important else [])
            elif skind == "spam":
                labels = ["UNREAD", "SPAM"]
            else:
                labels = []
                if r.random() < p_unread:
                    labels.append("UNREAD")
                if important:
                    labels.append("IMPORTANT")
                if r.random() < (0.06 if kind == "human" else 0.01):
                    labels.append("STARRED")
                labels.append(category)
                if r.random() < 0.02:
                    labels.append("TRASH")
                elif inbox:
                    labels.append("INBOX")
            if user_label and skind != "spam":
                labels.append(self.label_ids[user_label])
            subj = subject if j == 0 else "Re: " + subject
            text = self.body(kind, sender, people, mine, prev_text, prev_from, ts)
            m = self.message(ts, sender, people, mine, subj, text, refs, skind, list_id, labels)
            if j == 0:
                thread_id = m.id
            m.thread_id = thread_id
            refs.append(m.message_id)
            prev_text, prev_from = text.split("\n\nOn ")[0], sender

    def body(self, kind, sender, people, mine, prev_text, prev_from, ts):
        paras = self.paragraphs()
        if kind == "human":
            to_name = people[0][0] if mine else D.OWNER_NAME
            text = "Hi %s,\n\n%s\n\nBest,\n%s\n" % (
                to_name.split()[0], "\n\n".join(paras), sender[0].split()[0])
        else:
            text = "%s\n\n--\nYou are receiving this email from %s.\nUnsubscribe: " \
                   "https://%s/unsubscribe\n" % ("\n\n".join(paras), sender[0],
                                                 sender[1].split("@")[1])
        if prev_text is not None:
            quoted = "\n".join("> " + line if line else ">" for line in prev_text.split("\n")[:8])
            text += "\nOn %s, %s wrote:\n%s\n" % (
                rfc2822_date(ts - 3600, "+0000"), fmt_addr(*prev_from), quoted)
        return text

    # ---------------------------------------------------------- one message

    def message(self, ts, sender, people, mine, subject, text, refs, skind, list_id, labels):
        r = self.rnd
        seq = self.seq
        self.seq += 1
        salt = "demo:%d:%d" % (self.seed, seq)
        digest = hashlib.sha1(salt.encode()).hexdigest()
        ms = ts * 1000 + r.randrange(1000)
        msg_id = gmail_id(ms, salt, self.taken)
        self.taken.add(msg_id)
        domain = "mail.gmail.com" if mine else sender[1].split("@")[1]
        mid = "<%s%s@%s>" % ("CA+" if mine else "", digest[:24], domain)
        tz = D.TIMEZONES[int(digest[:4], 16) % len(D.TIMEZONES)]
        date = rfc2822_date(ts, tz)
        special = self.specials.get(seq)
        if mine:
            rcpt = [fmt_addr(*p[:2]) for p in people]
        else:
            rcpt = [fmt_addr(D.OWNER_NAME, self.account)] + [
                fmt_addr(*p[:2]) for p in people if p[:2] != tuple(sender)][:2]
        if special == "latin1":
            subject = "Grüße aus Köln: " + subject
            try:
                enc_subject = encode_word(subject, "ISO-8859-1", q=True)
            except UnicodeEncodeError:      # a CJK word in the subject
                enc_subject = encode_word(subject)
        elif special == "sjis":
            subject = "会議の資料: " + subject
            enc_subject = encode_word(subject, "UTF-8")
        elif special == "forward":
            subject = "Fwd: " + subject.replace("Re: ", "")
            enc_subject = encode_word(subject, q=True)
        else:
            enc_subject = encode_word(subject, q=bool(seq % 2))
        headers = []
        if not mine:
            headers.append(("Delivered-To", self.account))
            headers.append(("Received", "from mail-%s (mail-%s [203.0.113.%d])\r\n"
                            "        by mx.google.com with ESMTPS id %s;\r\n        %s" % (
                                domain, domain, int(digest[4:6], 16), digest[6:18], date)))
        headers += [("MIME-Version", "1.0"), ("Date", date), ("Message-ID", mid),
                    ("Subject", enc_subject), ("From", fmt_addr(*sender)),
                    ("To", ",\r\n ".join(rcpt))]
        if refs:
            headers.append(("In-Reply-To", refs[-1]))
            headers.append(("References", "\r\n ".join(refs[-8:])))
        if list_id:
            headers.append(("List-Id", list_id))
        if skind in ("news", "forum", "promo"):
            headers.append(("List-Unsubscribe", "<https://%s/unsubscribe/%s>" % (
                domain, digest[:12])))
        entity = self.entity(special, skind, text, subject, digest, date)
        raw = "".join("%s: %s\r\n" % kv for kv in headers).encode("utf-8") + entity
        m = Message(msg_id, msg_id, labels, ms, raw=raw)
        self.out.append(m)
        return m

    def entity(self, special, skind, text, subject, digest, date):
        """The MIME body of one message (Content-Type headers included)."""
        r = self.rnd
        bnd = "0000000000%s" % digest[:18]
        if special == "latin1":
            ascii_text = "\n\n".join(self.paragraphs(ascii_only=True))
            return text_entity(D.LATIN1_TEXT + "\n\n" + ascii_text + "\n", charset="ISO-8859-1",
                               cte="quoted-printable")
        if special == "sjis":
            return text_entity(D.SJIS_TEXT + "\n", charset="Shift_JIS", cte="base64")
        plain = text_entity(text, cte=self.cte(text))
        if special == "related":
            cid = "logo.%s@demo.hudson.test" % digest[:8]
            html = self.html(text, '<img src="cid:%s" alt="logo">' % cid)
            related = multipart("related", [
                text_entity(html, "html", cte=self.cte(html)),
                attachment_entity("logo.png", "image/png", D.TINY_PNG, "inline", cid)], bnd + "r")
            return multipart("alternative", [plain, related], bnd + "a")
        if special == "forward":
            inner = ("From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\n"
                     "Message-ID: <fwd.%s@example.org>\r\nMIME-Version: 1.0\r\n" % (
                         fmt_addr(*D.PEOPLE[3][:2]), fmt_addr(D.OWNER_NAME, self.account),
                         subject[5:], date, digest[:16])).encode("utf-8")
            inner += text_entity("Original text of the forwarded message.\n" + text)
            forwarded = b"Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n" \
                + inner
            return multipart("mixed", [text_entity("Forwarding this one, see below.\n"),
                                       forwarded], bnd + "m")
        alt_p = {"human": 0.3, "gh": 0.4, "forum": 0.3}.get(skind, 0.9)
        att_p = {"human": 0.08, "receipt": 0.5, "travel": 0.5}.get(skind, 0.0)
        body = plain
        if r.random() < alt_p:
            html = self.html(text)
            body = multipart("alternative", [plain, text_entity(html, "html", cte=self.cte(html))],
                             bnd + "a")
        if r.random() < att_p:
            if r.random() < 0.6:
                name, ctype = "invoice-%s.pdf" % digest[:6], "application/pdf"
                data = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + \
                    " ".join(self.words(r.randint(30, 80), True)).encode() + b"\n%%EOF\n"
            else:
                name, ctype = "notes.txt", "text/plain"
                data = ("\n".join(" ".join(self.words(9, True)) for _ in range(
                    r.randint(4, 9))) + "\n").encode()
            body = multipart("mixed", [body, attachment_entity(name, ctype, data)], bnd + "m")
        return body

    def cte(self, text):
        if text.isascii():
            return "7bit" if self.rnd.random() < 0.7 else "quoted-printable"
        return self.rnd.choice(["quoted-printable", "quoted-printable", "base64", "8bit"])

    @staticmethod
    def html(text, extra=""):
        paras = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split("\n\n")
        body = "\n".join("<p>%s</p>" % p.replace("\n", "<br>\n") for p in paras)
        return ('<html><head><style>p{margin:0 0 1em}</style></head><body>\n'
                '<div dir="ltr">%s%s</div>\n</body></html>\n' % (extra, body))
