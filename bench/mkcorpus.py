#!/usr/bin/env python3
"""mkcorpus.py: Hudson's synthetic Gmail mailbox; one seed gives the same bytes everywhere.

Writes COUNT messages (default 100,000) of one account (alex.hudson@example.com) as any of:

  --maildir DIR        Maildir (cur/ new/ tmp/); Gmail labels in X-Keywords (offlineimap's
                       header), UNREAD and STARRED as the flags S and F, R on answered mail
  --mbox FILE          mboxrd as Google Takeout writes it (X-Gmail-Labels, X-GM-THRID),
                       plus X-GM-MSGID, so ids match the NDJSON
  --gmail-ndjson FILE  one Gmail API users.messages.get(format=full) Message per line,
                       with only the fields the discovery document defines
  --labels-json FILE   the labels.list response naming the user labels
  --labels-tsv FILE    Message-ID <TAB> id <TAB> threadId <TAB> label ids, comma-separated
  --summary-json FILE  counts, the top senders, and the probe words with the number of
                       messages holding each (what bench/bench.py chooses its queries from)

The mailbox: threads of 1 to 30 messages (Message-ID, In-Reply-To, References, "Re:"
subjects, quoted replies, the owner answering), Zipf-distributed senders and words,
automated senders (notifications, receipts, newsletters, promotions) beside people who
write English, French, German, Spanish, Polish, Vietnamese, Chinese, Japanese (no spaces
between words) and Korean; RFC 2047 headers; text/plain, multipart/alternative with HTML,
multipart/mixed with attachments (base64, some with non-ASCII file names); 7bit,
quoted-printable, base64 and 8bit bodies; dates from July 2022 to December 2025; the
system labels INBOX, UNREAD, STARRED, IMPORTANT, SENT and CATEGORY_*, and user labels,
nested ones included (Travel/2026, Finance/Taxes).

Probe words are put into bodies at fixed rates (one message in 5, 20, 100, 500, 2,000,
10,000, 50,000), so every size has words of known frequency to search for.

Deterministic: the same --seed and --count give byte-identical files whatever the
machine, hash seed, locale, time zone or date. Only Python's standard library is used,
and of floating point only what IEEE 754 rounds the same everywhere (+, -, *, /, sqrt;
no log, exp or pow).
"""
import argparse
import base64
import binascii
import bisect
import hashlib
import json
import math
import os
import random
import re
import sys
import time

ME_NAME = "Alex Hudson"
ME_ADDR = "alex.hudson@example.com"
SPAN_START = 1656633600            # 2022-07-01T00:00:00Z
SPAN_END = 1767225600              # 2026-01-01T00:00:00Z
VOCABULARY_SEED = 20260101         # the words are the same for every --seed
HISTORY_START = 1000000            # historyIds grow with the date from here

# Words put into bodies at fixed rates, one message in N: never drawn otherwise.
PROBES = [("meeting", 5), ("budget", 20), ("invoice", 100), ("quindelor", 500),
          ("vorralous", 2000), ("brazenthal", 10000), ("felkaripon", 50000)]
INVENTED = {"quindelor", "vorralous", "brazenthal", "felkaripon"}
# Words counted but left to the Zipf draw (the prefix family of 'proj', accents, CJK).
WATCHED = ["project", "projects", "projected", "projection", "projector", "projecting",
           "café", "zürich", "réunion", "会议", "東京", "회의"]
PHRASES = ["weekly digest"]

STOPWORDS = (
    "the to and of a in for is on that you it with this be are we i at as have will not can "
    "if or from by your our all so but me my an was do just please thanks let know about get "
    "would up out what there one they more when also any some here like should could has been "
    "new time now see us need which who its had them then than into only no may very well "
    "over other").split()
CONTENT = (
    "project update team review today tomorrow week call report schedule deadline email "
    "document draft plan issue question client customer order payment account details attached "
    "file link share feedback discussion agenda notes change release version build test server "
    "data design product launch sales marketing contract proposal quarter monday friday morning "
    "afternoon office travel flight hotel dinner lunch conference event ticket support request "
    "status problem fix bug feature deploy code branch merge commit pull repository access "
    "password security login offer discount shipping delivery package tracking receipt refund "
    "price newsletter subscription weekly monthly summary analytics metrics projects projected "
    "projection projector projecting hiring interview candidate salary benefits policy holiday "
    "vacation birthday party family weekend photos video music game book movie apartment rent "
    "lease insurance doctor appointment bank statement tax return form signature approval "
    "manager director engineer database migration backup storage network cloud cluster latency "
    "performance dashboard roadmap milestone sprint backlog estimate priority urgent important "
    "reminder follow confirm available").split()
ACCENTED_EN = ("café résumé naïve façade Zürich München São Málaga crème brûlée déjà über "
               "jalapeño Ångström Kraków Łódź piñata fiancée entrée soirée Dvořák Reykjavík "
               "Ærø garçon rôle Straße").split()
SYLLABLES = ("ka ri to mo na be lu si vor tan del cor mix ral pen dus gra fel tho quin bra zen "
             "lor vik sta per ent ion ter ous ble dor").split()
EMOJI = "🎉 👍 🚀 ✅ 😂 🙏 🔥 📎 ☕ 💡".split()

# Other languages: a small vocabulary each, drawn Zipf-wise like English.
LANGUAGES = {
    "fr": ("le la les de des et à un une pour avec dans sur est sont nous vous réunion projet "
           "équipe déjà très où été année prochaine réponse café bientôt début après "
           "être préparé présentation élève décision créé réservé problème système "
           "numéro février août données sécurité événement déjeuner hôtel voilà merci"),
    "de": ("der die das und ist nicht mit für auf den dem ein eine wir Sie Besprechung "
           "Projekt Übersicht Änderung Straße Grüße schön müssen können Größe Prüfung "
           "Bestätigung Rückmeldung nächste Woche Büro über für Lösung Vorschlag Zürich "
           "München Frühstück Gespräch Unterlagen Termin möglich natürlich"),
    "es": ("el la los las de y en que por para con una un es reunión proyecto equipo "
           "mañana año próxima señor información presentación también así está están "
           "número después jalapeño niño cumpleaños dirección garantía acción pequeño "
           "último gracias"),
    "pl": ("i w na z do że to nie się jest spotkanie projekt zespół dziękuję proszę "
           "jutro środa piątek źródło żółty łódź gęś więcej następny tydzień biuro "
           "sprawozdanie wiadomość pozdrawiam"),
    "vi": ("và của là có không được trong cho với một những các cuộc họp dự án nhóm "
           "ngày mai tuần sau báo cáo xác nhận cảm ơn tài liệu khách hàng hợp đồng "
           "thời gian văn phòng tiếng Việt"),
    # Chinese and Japanese run their words together; a sentence ends with 。
    "zh": ("我们 你们 会议 项目 报告 明天 今天 需要 确认 时间 安排 文件 预算 客户 合同 "
           "问题 讨论 计划 完成 部门 经理 下周 上午 下午 已经 可以 请 谢谢 的 了 在 是 "
           "和 有 这个 那个 发送 附件 修改 意见 北京 上海 工作 进度 数据 系统"),
    "ja": ("会議 プロジェクト 確認 お願いします 資料 明日 東京 よろしく ありがとうございます "
           "予定 打ち合わせ 添付 ご連絡 です ます の を に は が で と から まで 来週 "
           "午後 午前 担当 見積書 修正 共有 大阪 ファイル メール 件 について いたします "
           "本日 検討 進捗"),
    "ko": ("회의 프로젝트 감사합니다 내일 확인 부탁드립니다 자료 일정 오늘 다음 주 "
           "보고서 팀 검토 수정 공유 첨부 파일 서울 사무실 고객 계약 예산 질문 답변 "
           "드립니다 있습니다 합니다 그리고 하지만"),
}
JOINED = {"zh", "ja"}
STOP = {"zh": "。", "ja": "。"}
GREETING = {"en": "Hi %s,", "fr": "Bonjour %s,", "de": "Hallo %s,", "es": "Hola %s,",
            "pl": "Cześć %s,", "vi": "Chào %s,", "zh": "%s，你好！", "ja": "%s様", "ko": "%s님, 안녕하세요."}
CLOSING = {"en": "Best,", "fr": "Cordialement,", "de": "Viele Grüße,", "es": "Saludos,",
           "pl": "Pozdrawiam,", "vi": "Trân trọng,", "zh": "谢谢！", "ja": "よろしくお願いいたします。",
           "ko": "감사합니다."}
# (weight, language, first names, last names, free-mail domains); local parts are romanised.
PEOPLE = [
    (780, "en", "James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David "
                "Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Chris Nancy "
                "Daniel Lisa Matthew Betty Anthony Sandra Mark Ashley Steven Emily Paul Donna "
                "Andrew Michelle Priya Wei Ahmed Fatima Olga Sven Ingrid Mateo",
     "Smith Johnson Williams Brown Jones Garcia Miller Davis Wilson Anderson Taylor Moore "
     "Jackson Martin Lee Thompson White Harris Clark Lewis Robinson Walker Young Allen King "
     "Wright Scott Nguyen Hill Green Adams Nelson Baker Hall Campbell Mitchell Carter Roberts "
     "Patel Chen Singh Kowalski",
     "gmail.com yahoo.com outlook.com icloud.com proton.me fastmail.com"),
    (40, "fr", "François Chloé Renée Zoë Hélène Jérôme Loïc Anaïs", "Lefèvre Dupré Bézier Gauthier Moreau Lacroix",
     "orange.fr free.fr gmail.com"),
    (40, "de", "Jürgen Jörg Björn Käthe Günther Sören Ute Lukas", "Müller Schröder Weiß Köhler Groß Fuchs",
     "web.de gmx.de gmail.com"),
    (40, "es", "José María Begoña Iñaki Ángel Lucía Ramón Inés", "García Núñez Peña Muñoz Ibáñez Rodríguez",
     "gmail.com hotmail.es"),
    (20, "pl", "Łukasz Małgorzata Paweł Żaneta Wojciech Agnieszka", "Wiśniewski Wójcik Kamiński Dąbrowski",
     "wp.pl onet.pl"),
    (10, "vi", "Nguyễn Trần Lê Phạm", "Thị Anh Đức Hương", "gmail.com"),
    (30, "zh", "伟 娜 敏 静 磊 洋 艳 勇", "王 李 张 刘 陈 杨", "qq.com 163.com gmail.com"),
    (25, "ja", "太郎 花子 一郎 美咲 健太 陽菜", "田中 佐藤 鈴木 高橋 伊藤 渡辺", "docomo.ne.jp yahoo.co.jp gmail.com"),
    (15, "ko", "민준 서연 지훈 수빈 하은", "김 이 박 최 정", "naver.com daum.net gmail.com"),
]
ROMAN = {"伟": "wei", "娜": "na", "敏": "min", "静": "jing", "磊": "lei", "洋": "yang", "艳": "yan",
         "勇": "yong", "王": "wang", "李": "li", "张": "zhang", "刘": "liu", "陈": "chen", "杨": "yang",
         "太郎": "taro", "花子": "hanako", "一郎": "ichiro", "美咲": "misaki", "健太": "kenta",
         "陽菜": "hina", "田中": "tanaka", "佐藤": "sato", "鈴木": "suzuki", "高橋": "takahashi",
         "伊藤": "ito", "渡辺": "watanabe", "민준": "minjun", "서연": "seoyeon", "지훈": "jihun",
         "수빈": "subin", "하은": "haeun", "김": "kim", "이": "lee", "박": "park", "최": "choi", "정": "jung"}
WORK_DOMAINS = ("acme-corp.com initech.example globex.io umbrella.co hooli.xyz stark-industries.com "
                "wayne-ent.org example.org tyrell.dev cyberdyne.net").split()
# (name, address, category, flavour, language); the first ones send the most.
AUTOMATED = [
    ("GitHub", "notifications@github.com", "CATEGORY_UPDATES", "github", "en"),
    ("Amazon.com", "shipment-tracking@amazon.com", "CATEGORY_UPDATES", "shipping", "en"),
    ("LinkedIn", "messages-noreply@linkedin.com", "CATEGORY_SOCIAL", "social", "en"),
    ("Google Calendar", "calendar-notification@google.com", "CATEGORY_UPDATES", "calendar", "en"),
    ("The Morning Brew", "crew@morningbrew.com", "CATEGORY_PROMOTIONS", "digest", "en"),
    ("Medium Daily Digest", "noreply@medium.com", "CATEGORY_UPDATES", "digest", "en"),
    ("Slack", "notification@slack.com", "CATEGORY_UPDATES", "social", "en"),
    ("Uber Receipts", "uber.us@uber.com", "CATEGORY_UPDATES", "receipt", "en"),
    ("PayPal", "service@paypal.com", "CATEGORY_UPDATES", "receipt", "en"),
    ("Best Deals", "deals@shop.example", "CATEGORY_PROMOTIONS", "promotion", "en"),
    ("Stack Overflow", "do-not-reply@stackoverflow.email", "CATEGORY_FORUMS", "forum", "en"),
    ("rust-users list", "rust-users@googlegroups.com", "CATEGORY_FORUMS", "forum", "en"),
    ("Zalando", "info@service-mail.zalando.de", "CATEGORY_PROMOTIONS", "promotion", "de"),
    ("Booking.com", "noreply@booking.com", "CATEGORY_UPDATES", "booking", "en"),
    ("楽天市場", "info@rakuten.co.jp", "CATEGORY_PROMOTIONS", "promotion", "ja"),
    ("Netflix", "info@mailer.netflix.com", "CATEGORY_PROMOTIONS", "promotion", "en"),
]
# Gmail needs a nested label's parent to exist, so every parent is listed.
USER_LABELS = ["Work", "Receipts", "Travel", "Travel/2025", "Travel/2026", "Family", "Finance",
               "Finance/Taxes", "Projects", "Projects/Hudson", "Newsletters", "Friends", "Kids",
               "Kids/School", "Recruiting", "Follow-up", "Réunions", "読書会"]
LABEL_IDS = {name: "Label_%d" % (i + 1) for i, name in enumerate(USER_LABELS)}
# What a person's thread may be filed under, the first most often.
HUMAN_LABELS = ["Work", "Follow-up", "Friends", "Family", "Projects/Hudson", "Recruiting",
                "Kids/School", "Finance/Taxes", "Projects", "Réunions", "読書会", "Finance"]
# Takeout's names for the system labels in X-Gmail-Labels.
TAKEOUT = {"INBOX": "Inbox", "SENT": "Sent", "STARRED": "Starred", "IMPORTANT": "Important",
           "UNREAD": "Unread", "CATEGORY_PERSONAL": "Category Personal",
           "CATEGORY_SOCIAL": "Category Social", "CATEGORY_PROMOTIONS": "Category Promotions",
           "CATEGORY_UPDATES": "Category Updates", "CATEGORY_FORUMS": "Category Forums"}
ZONES = ["+0000", "-0800", "-0700", "-0500", "-0400", "+0100", "+0200", "+0530", "+0800",
         "+0900", "-0300", "+1000"]
ZONE_OF = {"fr": "+0100", "de": "+0100", "es": "+0100", "pl": "+0100", "vi": "+0700",
           "zh": "+0800", "ja": "+0900", "ko": "+0900"}
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
WORD = re.compile(r"\w+")


# ----------------------------------------------------------------------------- helpers


def zipf_cumulative(n, exponent):
    """Cumulative Zipf weights 1/k^s for k = 1..n. Only s in {0.5, 1, 1.5, 2}: division and
    square root round the same on every IEEE 754 machine; pow() of a float may not."""
    weight = {0.5: lambda k: 1.0 / math.sqrt(k), 1: lambda k: 1.0 / k,
              1.5: lambda k: 1.0 / (k * math.sqrt(k)), 2: lambda k: 1.0 / (k * k)}[exponent]
    total, out = 0.0, []
    for k in range(1, n + 1):
        total += weight(k)
        out.append(total)
    return out


def stable_hash(text):
    """A number from a string that does not depend on PYTHONHASHSEED."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def rfc5322_date(seconds, zone):
    sign = 1 if zone[0] == "+" else -1
    t = time.gmtime(seconds + sign * (int(zone[1:3]) * 3600 + int(zone[3:5]) * 60))
    return "%s, %d %s %d %02d:%02d:%02d %s" % (DAYS[t.tm_wday], t.tm_mday, MONTHS[t.tm_mon - 1],
                                               t.tm_year, t.tm_hour, t.tm_min, t.tm_sec, zone)


def encoded_words(text):
    """RFC 2047 B-encoding of a non-ASCII phrase, in words of at most 45 bytes."""
    if text.isascii():
        return text
    chunks, current = [], ""
    for ch in text:
        if len((current + ch).encode("utf-8")) > 45:
            chunks.append(current)
            current = ""
        current += ch
    chunks.append(current)
    return "\n ".join("=?UTF-8?B?%s?=" % base64.b64encode(c.encode("utf-8")).decode("ascii")
                      for c in chunks)


SPECIALS = set('()<>[]:;@\\,."')


def address(name, addr):
    """(raw header form, decoded form as Gmail shows it) of one mailbox."""
    shown = '"%s"' % name if any(c in SPECIALS for c in name) else name
    if name.isascii():
        return "%s <%s>" % (shown, addr), "%s <%s>" % (shown, addr)
    return "%s <%s>" % (encoded_words(name), addr), "%s <%s>" % (shown, addr)


def b64url(data, padded):
    text = base64.urlsafe_b64encode(data).decode("ascii")
    return text if padded else text.rstrip("=")


# ----------------------------------------------------------------------------- MIME parts


class Leaf:
    """A body part: its bytes, how they travel, and Gmail's view of it."""

    def __init__(self, mime, data, utf8=False, filename=None, encoding=None, extra=()):
        self.mime, self.data, self.utf8, self.filename = mime, data, utf8, filename
        self.encoding, self.extra = encoding, list(extra)

    def headers(self):
        """[(name, raw value, decoded value)] of this part."""
        ctype = self.mime + ('; charset="UTF-8"' if self.utf8 else "")
        shown_type = ctype
        hs = []
        if self.filename is not None:
            param = filename_params(self.filename)
            ctype += "; " + param.replace("filename", "name")
            shown_type += '; name="%s"' % self.filename
            hs.append(("Content-Type", ctype, shown_type))
            hs.append(("Content-Disposition", "attachment; " + param,
                       'attachment; filename="%s"' % self.filename))
        else:
            hs.append(("Content-Type", ctype, ctype))
        hs.append(("Content-Transfer-Encoding", self.encoding, self.encoding))
        hs.extend((k, v, v) for k, v in self.extra)
        return hs

    def body_text(self):
        if self.encoding == "base64":
            return base64.encodebytes(self.data).decode("ascii")
        # The text ends with a line break that is not part of the data, so ends decode alike.
        if self.encoding == "quoted-printable":
            text = binascii.b2a_qp(self.data).decode("ascii")
            return text if text.endswith("\n") else text + "=\n"
        assert self.data.endswith(b"\n"), "7bit and 8bit parts are whole lines"
        return self.data.decode("utf-8")


def filename_params(name):
    """A filename parameter: plain, RFC 2231 (filename*=UTF-8''...) or, as Gmail's web
    client writes it, an RFC 2047 word in quotes; the form depends on the name only."""
    if name.isascii():
        return 'filename="%s"' % name
    if stable_hash(name) % 2:
        quoted = "".join(c if c.isascii() and (c.isalnum() or c in "-._") else
                         "".join("%%%02X" % b for b in c.encode("utf-8")) for c in name)
        return "filename*=UTF-8''%s" % quoted
    return 'filename="%s"' % encoded_words(name).replace("\n ", " ")


class Multi:
    def __init__(self, subtype, boundary, children):
        self.mime, self.boundary, self.children = "multipart/" + subtype, boundary, children

    def headers(self):
        value = '%s; boundary="%s"' % (self.mime, self.boundary)
        return [("Content-Type", value, value)]


def render(part, out):
    """Appends the RFC 822 text of a part (its headers were written by the caller)."""
    if isinstance(part, Leaf):
        out.append(part.body_text())
        return
    for child in part.children:
        out.append("--%s\n" % part.boundary)
        out.extend("%s: %s\n" % (k, raw) for k, raw, _ in child.headers())
        out.append("\n")
        render(child, out)
        out.append("\n")  # the line break before a boundary is the boundary's (RFC 2046 5.1.1)
    out.append("--%s--\n" % part.boundary)


def gmail_part(part, part_id, message_id, padded, top_headers=None):
    """The MessagePart Gmail's format=full gives for a part."""
    headers = top_headers if top_headers is not None else part.headers()
    node = {"partId": part_id, "mimeType": part.mime,
            "filename": (part.filename or "") if isinstance(part, Leaf) else "",
            "headers": [{"name": k, "value": shown.replace("\n", "")} for k, _, shown in headers]}
    if isinstance(part, Multi):
        node["body"] = {"size": 0}
        node["parts"] = [gmail_part(child, str(i) if part_id == "" else "%s.%d" % (part_id, i),
                                    message_id, padded) for i, child in enumerate(part.children)]
    elif part.filename is not None:
        digest = hashlib.sha256(("%s/%s" % (message_id, part_id)).encode("ascii")).digest()
        node["body"] = {"attachmentId": "ANGjdJ" + b64url(digest + digest[:24], False),
                        "size": len(part.data)}
    else:
        node["body"] = {"size": len(part.data)}
        if part.data:
            node["body"]["data"] = b64url(part.data, padded)
    return node


# ----------------------------------------------------------------------------- the mailbox


class Vocabulary:
    """English: stopwords, content words, then invented words, ranked by frequency."""

    def __init__(self):
        r = random.Random(VOCABULARY_SEED)
        probes = {w for w, _ in PROBES}
        content = [w for w in CONTENT if w not in probes]
        r.shuffle(content)
        content.remove("project")
        content.insert(0, "project")  # near the head: the prefix 'proj' finds much
        words = list(dict.fromkeys(STOPWORDS)) + content
        taken = set(words) | probes
        invented = []
        while len(invented) < 40000:
            w = "".join(r.choice(SYLLABLES) for _ in range(r.choice((2, 2, 3, 3, 4))))
            if w not in taken:
                taken.add(w)
                invented.append(w)
        words += invented
        for i, w in enumerate(ACCENTED_EN):  # accented words at middle ranks
            words.insert(300 + i * 97, w)
        self.words = words
        self.cumulative = zipf_cumulative(len(words), 1)
        self.subject_words = words[len(STOPWORDS):len(STOPWORDS) + 15000]
        self.subject_cumulative = zipf_cumulative(len(self.subject_words), 1)
        self.other = {}
        for lang, text in LANGUAGES.items():
            ws = text.split()
            self.other[lang] = (ws, zipf_cumulative(len(ws), 0.5))


class Person:
    __slots__ = ("name", "addr", "first", "lang", "zone")

    def __init__(self, name, addr, first, lang, zone):
        self.name, self.addr, self.first, self.lang, self.zone = name, addr, first, lang, zone


ME = Person(ME_NAME, ME_ADDR, "Alex", "en", "+0100")


def make_people(r, count=2000):
    weights = [p[0] for p in PEOPLE]
    cumulative = [sum(weights[:i + 1]) for i in range(len(weights))]
    people, seen = [], set()
    while len(people) < count:
        _, lang, firsts, lasts, domains = PEOPLE[bisect.bisect(cumulative, r.randrange(cumulative[-1]))]
        first, last = r.choice(firsts.split()), r.choice(lasts.split())
        if lang in ("zh", "ja", "ko"):
            name = last + first if lang == "zh" else "%s %s" % (last, first)
            local = "%s.%s" % (ROMAN[first], ROMAN[last])
        else:
            name = "%s %s" % (first, last)
            local = "%s.%s" % (first, last)
            local = local.lower().translate(str.maketrans("áàâäãåçéèêëíìîïñóòôöõøúùûüýÿłśźżćńęąőšžčřđ",
                                                          "aaaaaaceeeeiiiinoooooouuuuyylszzcneaoszcrd"))
            local = "".join(c for c in local if c.isascii() and (c.isalnum() or c == ".")) or "user"
        domain = r.choice(WORK_DOMAINS) if r.random() < 0.5 else r.choice(domains.split())
        addr = "%s@%s" % (local, domain)
        if addr in seen:
            addr = "%s%d@%s" % (local, r.randrange(10, 100), domain)
        if addr in seen:
            continue
        seen.add(addr)
        zone = ZONE_OF.get(lang) or ZONES[stable_hash(addr) % len(ZONES)]
        # How a greeting names them: the whole name in Chinese and Korean, the family name in Japanese.
        called = name if lang in ("zh", "ko") else last if lang == "ja" else first
        people.append(Person(name, addr, called, lang, zone))
    return people


class Generator:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.vocabulary = Vocabulary()
        self.people = make_people(self.r)
        self.people_cumulative = zipf_cumulative(len(self.people), 1)
        self.automated = [Person(n, a, n, lang, "+0000") for n, a, _, _, lang in AUTOMATED]
        self.automated_cumulative = zipf_cumulative(len(AUTOMATED), 1)
        self.thread_cumulative = zipf_cumulative(30, 2)
        self.label_cumulative = zipf_cumulative(len(HUMAN_LABELS), 1)
        self.ids = set()

    # text -------------------------------------------------------------------------

    def person(self):
        return self.people[bisect.bisect(self.people_cumulative, self.r.random() * self.people_cumulative[-1])]

    def words(self, lang, k):
        if lang == "en":
            v = self.vocabulary
            return self.r.choices(v.words, cum_weights=v.cumulative, k=k)
        ws, cumulative = self.vocabulary.other[lang]
        return self.r.choices(ws, cum_weights=cumulative, k=k)

    def paragraphs(self, lang, low, high):
        """Paragraphs, each a list of tokens (joined without spaces in Chinese and Japanese)."""
        r = self.r
        out = []
        for _ in range(r.randint(low, high)):
            tokens = self.words(lang, r.randint(8, 60))
            if lang == "en" and r.random() < 0.01:
                tokens[r.randrange(len(tokens))] = r.choice(EMOJI)
            tokens[0] = tokens[0][:1].upper() + tokens[0][1:]
            tokens[-1] += STOP.get(lang, r.choice((".", ".", ".", "?", "!")))
            out.append(tokens)
        return out

    def insert_probes(self, paragraphs, lang):
        r = self.r
        for word, every in PROBES:
            if r.random() * every < 1:
                tokens = paragraphs[r.randrange(len(paragraphs))]
                # In a language without spaces the word still needs its own boundaries.
                tokens.insert(r.randrange(len(tokens)), " %s " % word if lang in JOINED else word)

    def subject(self, lang):
        r = self.r
        if lang == "en":
            v = self.vocabulary
            ws = r.choices(v.subject_words, cum_weights=v.subject_cumulative, k=r.randint(2, 7))
        else:
            ws = self.words(lang, r.randint(2, 5))
        text = ("" if lang in JOINED else " ").join(ws)
        return text[:1].upper() + text[1:]


def wrap(tokens, lang):
    """Lines of a paragraph: 12 words, or 30 characters in Chinese and Japanese."""
    if lang in JOINED:
        text = "".join(tokens)
        return [text[i:i + 30] for i in range(0, len(text), 30)]
    return [" ".join(tokens[i:i + 12]) for i in range(0, len(tokens), 12)]


def html_of(paragraphs, lang, promotion, r):
    def escape(s):
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    body = "\n".join("<p>%s</p>" % "<br>\n".join(escape(line) for line in wrap(p, lang)) for p in paragraphs)
    if promotion:
        body = ('<table width="100%%" cellpadding="0" cellspacing="0" style="font-family:Helvetica,'
                'Arial,sans-serif;background:#f4f4f4"><tr><td align="center">\n<img src="https://cdn.'
                'example/hero%d.png" width="600" alt="">\n%s\n<a href="https://shop.example/c?u=%x" '
                'style="background:#e33;color:#fff;padding:12px 24px">Shop now</a>\n</td></tr></table>'
                % (r.randrange(99), body, r.getrandbits(48)))
    return ('<!DOCTYPE html>\n<html lang="%s"><head><meta http-equiv="Content-Type" content="text/html; '
            'charset=utf-8"><style>p{margin:0 0 1em}</style></head><body>\n<div dir="ltr">\n%s\n</div>\n'
            '</body></html>\n' % (lang, body))


def text_leaf(text, subtype, r):
    data = text.encode("utf-8")
    if text.isascii() and r.random() < 0.7:
        encoding = "7bit"
    else:
        x = r.random()
        encoding = "quoted-printable" if x < 0.5 else "base64" if x < 0.8 else "8bit"
    return Leaf("text/" + subtype, data, utf8=True, encoding=encoding)


ATTACHMENTS = {
    "en": ["report.pdf", "photo.jpg", "data.csv", "notes.txt", "résumé.pdf", "Präsentation.pptx"],
    "fr": ["compte-rendu.pdf", "présentation.pdf", "photo.jpg"],
    "de": ["Übersicht.pdf", "Präsentation.pptx", "Tabelle.csv"],
    "es": ["presentación.pdf", "año-2025.csv"],
    "pl": ["sprawozdanie.pdf", "zdjęcie.jpg"],
    "vi": ["báo-cáo.pdf"],
    "zh": ["会议纪要.docx", "预算.csv", "照片.jpg"],
    "ja": ["見積書.pdf", "議事録.txt", "写真.jpg"],
    "ko": ["회의록.pdf", "보고서.docx"],
}
TYPES = {"pdf": "application/pdf", "jpg": "image/jpeg", "csv": "text/csv", "txt": "text/plain",
         "ics": "text/calendar",
         "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation"}
MAGIC = {"pdf": b"%PDF-1.7\n", "jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "docx": b"PK\x03\x04",
         "pptx": b"PK\x03\x04"}


def attachment(name, generator, lang):
    r = generator.r
    extension = name.rsplit(".", 1)[1]
    size = 200 + r.randrange(1500) * (1 + r.randrange(6))
    if extension in ("csv", "txt"):
        rows = max(2, size // 60)
        lines = [",".join(generator.words(lang, 6)) for _ in range(rows)]
        data = ("\n".join(lines) + "\n").encode("utf-8")
    elif extension == "ics":
        data = ("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Hudson mkcorpus//EN\nMETHOD:REQUEST\n"
                "BEGIN:VEVENT\nUID:%x@google.com\nSUMMARY:%s\nEND:VEVENT\nEND:VCALENDAR\n"
                % (r.getrandbits(64), " ".join(generator.words("en", 4)))).encode("utf-8")
    else:
        data = MAGIC[extension] + r.getrandbits(size * 8).to_bytes(size, "little")
    return Leaf(TYPES[extension], data, filename=name, encoding="base64",
                extra=[("X-Attachment-Id", "f_%x" % r.getrandbits(40))])


# ----------------------------------------------------------------------------- outputs


class Outputs:
    def __init__(self, args):
        self.maildir = args.maildir
        if self.maildir:
            for sub in ("cur", "new", "tmp"):
                os.makedirs(os.path.join(self.maildir, sub), exist_ok=True)
        self.mbox = open(args.mbox, "w", encoding="utf-8", newline="\n") if args.mbox else None
        self.ndjson = open(args.gmail_ndjson, "w", encoding="utf-8", newline="\n") if args.gmail_ndjson else None
        self.tsv = open(args.labels_tsv, "w", encoding="utf-8", newline="\n") if args.labels_tsv else None

    def close(self):
        for f in (self.mbox, self.ndjson, self.tsv):
            if f:
                f.close()


def keywords_header(labels):
    """offlineimap's X-Keywords: Gmail labels but UNREAD and STARRED (the flags S and F)."""
    names = [USER_LABELS[int(l[6:]) - 1] if l.startswith("Label_") else l
             for l in labels if l not in ("UNREAD", "STARRED")]
    return "X-Keywords: %s\n" % encoded_words(",".join(names))


def takeout_header(labels):
    names = [USER_LABELS[int(l[6:]) - 1] if l.startswith("Label_") else TAKEOUT[l] for l in labels]
    if "UNREAD" not in labels:
        names.append("Opened")
    return "X-Gmail-Labels: %s\n" % encoded_words(",".join(names))


def mboxrd_escape(text):
    # mboxrd: every line that is ">"s then "From " gets one more ">"; readers take one off.
    return re.sub(r"(?m)^(>*From )", r">\1", text)


def label_order(labels):
    """Labels as Gmail lists them: system labels in a fixed order, then user labels by id."""
    system = ["INBOX", "SENT", "UNREAD", "STARRED", "IMPORTANT", "CATEGORY_PERSONAL", "CATEGORY_SOCIAL",
              "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS"]
    return [l for l in system if l in labels] + sorted((l for l in labels if l.startswith("Label_")),
                                                       key=lambda l: int(l[6:]))


# ----------------------------------------------------------------------------- main


class Stats:
    def __init__(self):
        self.senders, self.labels, self.thread_sizes = {}, {}, {}
        self.mime, self.languages = {}, {}
        self.probes = {w: 0 for w in [w for w, _ in PROBES] + WATCHED}
        self.cjk_words = [w for w in self.probes if is_cjk(w)]
        self.whole_words = [w for w in self.probes if not is_cjk(w)]
        self.phrases = {p: 0 for p in PHRASES}
        self.attachments = self.non_ascii = self.html = 0
        self.first = self.last = None


def bump(table, key, n=1):
    table[key] = table.get(key, 0) + n


def plan_threads(g, count):
    """(kind, size, start) of every thread; starts sorted, denser toward the end of the span."""
    r = g.r
    plan, total = [], 0
    while total < count:
        automated = r.random() < 0.45
        if automated:
            size = 1 if r.random() < 0.85 else r.randint(2, 6)
        else:
            size = bisect.bisect(g.thread_cumulative, r.random() * g.thread_cumulative[-1]) + 1
        size = min(size, count - total)
        plan.append((automated, size))
        total += size
    span = SPAN_END - SPAN_START  # replies after the end are moved to its last second
    # Half uniform, half the larger of two uniforms: mail grows toward the present.
    starts = sorted(SPAN_START + (r.randrange(span) if r.random() < 0.5 else
                                  max(r.randrange(span), r.randrange(span))) for _ in plan)
    return [(a, n, s) for (a, n), s in zip(plan, starts)]


def thread_messages(g, automated, size, start):
    """The messages of one thread, oldest first: dicts of what the outputs need."""
    r = g.r
    recency = (start - SPAN_START) / (SPAN_END - SPAN_START)
    inbox = r.random() < 0.04 + 0.8 * recency * recency * recency * recency * recency * recency
    thread_labels = []
    if automated:
        sender = g.automated[bisect.bisect(g.automated_cumulative, r.random() * g.automated_cumulative[-1])]
        _, _, category, flavour, lang = AUTOMATED[g.automated.index(sender)]
        participants = [sender]
        thread_labels.append(category)
        p_unread = {"CATEGORY_PROMOTIONS": 0.75, "CATEGORY_SOCIAL": 0.5, "CATEGORY_FORUMS": 0.6}.get(category, 0.35)
        p_important = 0.03 if category == "CATEGORY_PROMOTIONS" else 0.2
        if category == "CATEGORY_PROMOTIONS" and r.random() < 0.4:
            inbox = False
        if flavour == "receipt" and r.random() < 0.5:
            thread_labels.append(LABEL_IDS["Receipts"])
        if flavour == "digest" and r.random() < 0.4:
            thread_labels.append(LABEL_IDS["Newsletters"])
        if flavour == "booking" and r.random() < 0.7:
            year = time.gmtime(start).tm_year
            trip = "Travel/2026" if start > SPAN_END - 183 * 86400 else "Travel/2025" if year == 2025 else "Travel"
            thread_labels.append(LABEL_IDS[trip])
    else:
        flavour = "human"
        participants = []
        for _ in range(r.choice((1, 1, 1, 2, 2, 3, 4))):
            p = g.person()
            if p not in participants:
                participants.append(p)
        lang = participants[0].lang if r.random() < 0.8 else "en"
        thread_labels.append("CATEGORY_PERSONAL")
        p_unread, p_important = 0.1, 0.55
        if r.random() < 0.16:
            pick = HUMAN_LABELS[bisect.bisect(g.label_cumulative, r.random() * g.label_cumulative[-1])]
            thread_labels.append(LABEL_IDS[pick])
    important = r.random() < p_important
    subject = thread_subject(g, flavour, lang, participants, start)
    started_by_me = not automated and r.random() < 0.1
    messages, timestamp, quoted = [], start, None
    for j in range(size):
        if j:
            # Minutes to days between replies (integers only: no expovariate).
            timestamp = min(timestamp + 60 + r.randrange(3600) * (1 + r.randrange(1 + r.randrange(48))),
                            SPAN_END - 1)
        mine = not automated and (j == 0 and started_by_me or j > 0 and r.random() < 0.4)
        sender = ME if mine else participants[j % len(participants)] if automated else r.choice(participants)
        to = list(participants) if mine else [ME] + [p for p in participants if p is not sender][:3]
        cc = [g.person() for _ in range(r.randint(1, 3))] if not automated and r.random() < 0.15 else []
        labels = [l for l in thread_labels if not (mine and l == "CATEGORY_PERSONAL")]
        if mine:
            labels.append("SENT")
        else:
            if inbox:
                labels.append("INBOX")
            if r.random() < p_unread * (0.3 + recency):
                labels.append("UNREAD")
        if important:
            labels.append("IMPORTANT")
        if r.random() < (0.04 if not automated else 0.005):
            labels.append("STARRED")
        message_lang = sender.lang if mine or automated else lang
        m = compose(g, flavour, message_lang, sender, to, cc, "Re: " + subject if j else subject,
                    timestamp, quoted, messages)
        m["labels"] = label_order(set(labels))
        m["mine"] = mine
        messages.append(m)
        quoted = (m, sender)
    return messages


def thread_subject(g, flavour, lang, participants, start):
    r = g.r
    s = g.subject(lang)
    if flavour == "github":
        return "[acme/%s] %s (#%d)" % (r.choice(("hudson", "api", "web", "infra")), s, r.randrange(1, 5000))
    if flavour == "shipping":
        return "Your Amazon.com order #%03d-%07d-%07d has shipped" % (
            r.randrange(1000), r.randrange(10 ** 7), r.randrange(10 ** 7))
    if flavour == "calendar":
        return "Invitation: %s @ %s" % (s, " ".join(rfc5322_date(start + 3 * 86400, "+0000").split()[:4]))
    if flavour in ("receipt", "booking"):
        return "Your receipt for %s" % s.lower()
    if flavour == "digest":
        return "Weekly digest: %s" % s
    if flavour == "promotion":
        if lang == "ja":
            return "【楽天市場】%s ポイント%d倍" % (s, r.choice((2, 5, 10)))
        if lang == "de":
            return "Nur heute: %d %% Rabatt auf %s" % (r.choice((20, 30, 50)), s)
        return "%s %d%% off %s" % (r.choice(EMOJI), r.choice((10, 20, 30, 50, 70)), s)
    if flavour == "forum":
        return "[%s] %s" % (participants[0].name.split()[0].lower(), s)
    if r.random() < 0.03:
        s += " " + r.choice(EMOJI + ACCENTED_EN)
    return s


def compose(g, flavour, lang, sender, to, cc, subject, timestamp, quoted, earlier):
    """One message: its RFC 822 text, Gmail payload and what the outputs and stats need."""
    r = g.r
    promotion = flavour in ("promotion", "digest")
    paragraphs = g.paragraphs(lang, 1, 6 if promotion else 4)
    g.insert_probes(paragraphs, lang)
    own = "\n\n".join("\n".join(wrap(p, lang)) for p in paragraphs)
    if flavour == "human":
        first = to[0].first
        own = "%s\n\n%s\n\n%s\n%s\n" % (GREETING[lang] % first, own, CLOSING[lang], sender.first)
    elif flavour == "digest":
        own = "Your weekly digest from %s.\n\n%s\n\n--\nUnsubscribe: https://%s/u/%x\n" % (
            sender.name, own, sender.addr.split("@")[1], r.getrandbits(40))
    else:
        own = "%s\n\n--\nYou are receiving this because you subscribed.\nUnsubscribe: https://%s/u/%x\n" % (
            own, sender.addr.split("@")[1], r.getrandbits(40))
    plain = own
    if quoted is not None:
        previous, previous_sender = quoted
        lines = previous["own"].split("\n")[:14]
        plain += "\nOn %s, %s wrote:\n%s\n" % (rfc5322_date(previous["timestamp"], "+0000"),
                                               address(previous_sender.name, previous_sender.addr)[1],
                                               "\n".join("> " + l if l else ">" for l in lines))
    gmail_id = message_gmail_id(g, timestamp)
    thread_id = earlier[0]["id"] if earlier else gmail_id
    domain = sender.addr.split("@")[1]
    message_id = "<%s.%d@%s>" % (gmail_id, len(g.ids), "mail.gmail.com" if domain == "gmail.com" else domain)
    references = [m["message_id"] for m in earlier][-10:]
    # ---- parts
    attach = None
    x = r.random()
    if flavour == "human" and x < 0.10 or flavour in ("receipt", "booking") and x < 0.5:
        names = ["invoice-%04d.pdf" % r.randrange(10000)] if flavour != "human" else ATTACHMENTS[lang]
        attach = attachment(r.choice(names), g, lang)
    elif flavour == "calendar":
        attach = attachment("invite.ics", g, "en")
    alternative = promotion or flavour in ("github", "shipping", "calendar", "social", "receipt", "booking") or (
        flavour == "human" and r.random() < 0.45)
    body = text_leaf(plain, "plain", r)
    if alternative:
        body = Multi("alternative", "000000000000%s%02x" % (gmail_id, 1),
                     [body, text_leaf(html_of(paragraphs, lang, promotion, r), "html", r)])
    if attach is not None:
        body = Multi("mixed", "000000000000%s%02x" % (gmail_id, 0), [body, attach])
    date = rfc5322_date(timestamp, sender.zone)
    headers = [
        ("Return-Path", "<%s>" % sender.addr),
        ("Received", "from mail-%s (mail-%s [10.%d.%d.%d])\n\tby mx.google.com with ESMTPS id %s;\n\t%s" % (
            domain, domain, r.randrange(256), r.randrange(256), r.randrange(256), gmail_id, date)),
        ("MIME-Version", "1.0"),
        ("Date", date),
    ]
    headers = [(k, v, v) for k, v in headers]
    frm = address(sender.name, sender.addr)
    headers.append(("From", frm[0], frm[1]))
    for name, people in (("To", to), ("Cc", cc)):
        if people:
            pairs = [address(p.name, p.addr) for p in people]
            headers.append((name, ",\n ".join(p[0] for p in pairs), ", ".join(p[1] for p in pairs)))
    headers.append(("Subject", encoded_words(subject), subject))
    headers.append(("Message-ID", message_id, message_id))
    if references:
        headers.append(("In-Reply-To", references[-1], references[-1]))
        headers.append(("References", "\n ".join(references), " ".join(references)))
    if flavour != "human":
        unsubscribe = "<https://%s/unsub/%x>" % (domain, r.getrandbits(40))
        headers.append(("List-Unsubscribe", unsubscribe, unsubscribe))
        if flavour == "forum":
            list_id = "<%s>" % sender.addr.replace("@", ".")
            headers.append(("List-Id", list_id, list_id))
    headers += body.headers()
    out = ["%s: %s\n" % (k, raw) for k, raw, _ in headers]
    out.append("\n")
    render(body, out)
    text = "".join(out)
    payload = gmail_part(body, "", gmail_id, len(g.ids) % 2 == 0, top_headers=headers)
    return {"id": gmail_id, "thread_id": thread_id, "message_id": message_id, "timestamp": timestamp,
            "text": text, "payload": payload, "own": own,
            "searchable": (subject + "\n" + plain).lower(), "sender": sender, "lang": lang,
            "flavour": flavour, "attachment": attach is not None, "alternative": alternative,
            "snippet": snippet(own)}


def message_gmail_id(g, timestamp):
    """16 hex digits that grow with time, as Gmail's do: milliseconds, then 20 bits."""
    while True:
        ms = timestamp * 1000 + g.r.randrange(1000)
        ident = "%016x" % (ms << 20 | g.r.getrandbits(20))
        if ident not in g.ids:
            g.ids.add(ident)
            return ident


def snippet(text):
    s = " ".join(text.split())[:200]
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def write_thread(messages, outputs, stats):
    for i, m in enumerate(messages):
        labels = m["labels"]
        if outputs.maildir:
            flags = ("F" if "STARRED" in labels else "") + (
                "R" if not m["mine"] and any(later["mine"] for later in messages[i + 1:]) else "") + (
                "" if "UNREAD" in labels else "S")
            recent = m["timestamp"] > SPAN_END - 7 * 86400  # not yet seen by a mail reader
            new = "UNREAD" in labels and "STARRED" not in labels and recent
            name = "%d.M%sP0.mkcorpus" % (m["timestamp"], m["id"]) + ("" if new else ":2," + flags)
            with open(os.path.join(outputs.maildir, "new" if new else "cur", name), "w",
                      encoding="utf-8", newline="\n") as f:
                f.write(keywords_header(labels) + m["text"])
        if outputs.mbox:
            t = time.gmtime(m["timestamp"])
            outputs.mbox.write("From %d@xxx %s %s %2d %02d:%02d:%02d %d\n" % (
                int(m["id"], 16), DAYS[t.tm_wday], MONTHS[t.tm_mon - 1], t.tm_mday, t.tm_hour, t.tm_min,
                t.tm_sec, t.tm_year))
            outputs.mbox.write("X-GM-THRID: %d\nX-GM-MSGID: %d\n%s" % (
                int(m["thread_id"], 16), int(m["id"], 16), takeout_header(labels)))
            outputs.mbox.write(mboxrd_escape(m["text"]) + "\n")
        if outputs.ndjson:
            record = {"id": m["id"], "threadId": m["thread_id"], "labelIds": labels,
                      "snippet": m["snippet"], "historyId": str(HISTORY_START + (m["timestamp"] - SPAN_START) // 8),
                      "internalDate": str(m["timestamp"] * 1000), "sizeEstimate": len(m["text"].encode("utf-8")),
                      "payload": m["payload"]}
            outputs.ndjson.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        if outputs.tsv:
            outputs.tsv.write("%s\t%s\t%s\t%s\n" % (m["message_id"][1:-1], m["id"], m["thread_id"], ",".join(labels)))
        count(m, stats)


def count(m, stats):
    bump(stats.senders, m["sender"].addr)
    for l in m["labels"]:
        bump(stats.labels, l)
    bump(stats.mime, m["payload"]["mimeType"])
    bump(stats.languages, m["lang"])
    stats.attachments += m["attachment"]
    stats.html += m["alternative"]
    stats.non_ascii += not m["text"].isascii()
    text = m["searchable"]
    tokens = set(WORD.findall(text))
    # CJK words are found inside runs of text; the others only as whole words.
    for w in stats.whole_words:
        stats.probes[w] += w in tokens
    for w in stats.cjk_words:
        stats.probes[w] += w in text
    for p in stats.phrases:
        stats.phrases[p] += p in text
    stats.first = m["timestamp"] if stats.first is None else min(stats.first, m["timestamp"])
    stats.last = m["timestamp"] if stats.last is None else max(stats.last, m["timestamp"])


def is_cjk(word):
    return any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in word)


def summary(args, stats, threads):
    automated = {a for _, a, _, _, _ in AUTOMATED}
    ranked = sorted(stats.senders.items(), key=lambda kv: (-kv[1], kv[0]))
    rates = dict(PROBES)
    return {
        "generator": "bench/mkcorpus.py", "seed": args.seed, "count": args.count, "threads": threads,
        "me": ME_ADDR,
        "date_range": [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stats.first)),
                       time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stats.last))],
        "senders_distinct": len(stats.senders), "top_senders": ranked[:10],
        "top_human_sender": next((a for a, _ in ranked if a != ME_ADDR and a not in automated), None),
        "labels": dict(sorted(stats.labels.items())),
        "user_labels": {LABEL_IDS[n]: n for n in USER_LABELS},
        "thread_sizes": {str(k): v for k, v in sorted(stats.thread_sizes.items())},
        "mime": dict(sorted(stats.mime.items())), "languages": dict(sorted(stats.languages.items())),
        "with_attachment": stats.attachments, "with_html": stats.html, "non_ascii_messages": stats.non_ascii,
        # messages: how many hold the word (subject or text, quoted replies included);
        # one_in: the rate it was put in at (null: drawn with the other words).
        "probe_words": {w: {"messages": n, "one_in": rates.get(w), "invented": w in INVENTED}
                        for w, n in stats.probes.items()},
        "phrases": stats.phrases,
    }


def labels_list():
    return {"labels": [{"id": LABEL_IDS[n], "name": n, "type": "user", "messageListVisibility": "show",
                        "labelListVisibility": "labelShow"} for n in USER_LABELS]}


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split(": ", 1)[1],
        epilog="Example: bench/mkcorpus.py --count 2000 --maildir md --gmail-ndjson mail.ndjson "
               "--labels-json labels.json --summary-json summary.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=100000, help="messages (default 100000)")
    p.add_argument("--seed", type=int, default=42, help="the mailbox's seed (default 42)")
    p.add_argument("--maildir", metavar="DIR", help="write a Maildir (labels in X-Keywords)")
    p.add_argument("--mbox", metavar="FILE", help="write an mboxrd file (Takeout headers)")
    p.add_argument("--gmail-ndjson", metavar="FILE", help="write Gmail API messages, one JSON per line")
    p.add_argument("--labels-json", metavar="FILE", help="write the labels.list response of the user labels")
    p.add_argument("--labels-tsv", metavar="FILE", help="write Message-ID, id, threadId and label ids per line")
    p.add_argument("--summary-json", metavar="FILE", help="write counts and probe words")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    args = p.parse_args(argv)
    if args.count < 1:
        p.error("--count must be at least 1")
    started = time.monotonic()
    g = Generator(args.seed)
    outputs = Outputs(args)
    stats = Stats()
    plan = plan_threads(g, args.count)
    try:
        for automated, size, start in plan:
            messages = thread_messages(g, automated, size, start)
            bump(stats.thread_sizes, len(messages))
            write_thread(messages, outputs, stats)
    finally:
        outputs.close()
    if args.labels_json:
        with open(args.labels_json, "w", encoding="utf-8", newline="\n") as f:
            json.dump(labels_list(), f, ensure_ascii=False, indent=1)
            f.write("\n")
    result = summary(args, stats, len(plan))
    if args.summary_json:
        with open(args.summary_json, "w", encoding="utf-8", newline="\n") as f:
            json.dump(result, f, ensure_ascii=False, indent=1)
            f.write("\n")
    if not args.quiet:
        print("mkcorpus: %d messages in %d threads (seed %d) in %.1f s" % (
            args.count, len(plan), args.seed, time.monotonic() - started))
        print("  probe words: " + ", ".join("%s %d" % (w, n) for w, n in stats.probes.items()))
        print("  mime: " + ", ".join("%s %d" % kv for kv in sorted(stats.mime.items())))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as error:  # an output that cannot be written: one line, EX_CANTCREAT
        print("mkcorpus.py: %s: %s" % (error.filename, error.strerror), file=sys.stderr)
        sys.exit(73)
