"""Fixed data for the demo mailbox: people, automated senders, vocabulary.

Kept apart from demo.py so the generator logic stays short.  40 senders in
all: 26 people (some with non-ASCII names) and 14 automated senders.
"""

OWNER_NAME = "Robin Hudson"

# User labels of the demo, with the ids the brief fixes.
USER_LABELS = [("Label_1", "Work"), ("Label_2", "Receipts"), ("Label_3", "Travel/2026"),
               ("Label_4", "Family"), ("Label_5", "Newsletters")]

# (display name, address, group); group is work, family or friend.
PEOPLE = [
    ("Ada Lovelace", "ada@analytical.example", "work"),
    ("Grace Hopper", "grace.hopper@navy.example", "work"),
    ("Linus Berg", "linus.berg@acme-corp.example", "work"),
    ("Margaret Hamilton", "margaret@apollo.example", "work"),
    ("Ken Thompson", "ken@bell-labs.example", "work"),
    ("Barbara Liskov", "liskov@mit.example", "work"),
    ("Dennis Park", "dennis.park@acme-corp.example", "work"),
    ("Priya Raman", "priya.raman@globex.example", "work"),
    ("Wei Chen", "wei.chen@initech.example", "work"),
    ("José Núñez", "jose.nunez@acme-corp.example", "work"),
    ("Zoë Müller", "zoe.mueller@globex.example", "work"),
    ("Søren Østergaard", "soren@initech.example", "work"),
    ("Chloé Dubois", "chloe.dubois@hooli.example", "work"),
    ("田中 太郎", "taro.tanaka@example.jp", "work"),
    ("Łukasz Wiśniewski", "lukasz.w@example.pl", "friend"),
    ("Renée Côté", "renee.cote@example.ca", "friend"),
    ("Björn Åberg", "bjorn.aberg@example.se", "friend"),
    ("Sam O'Neil", "sam.oneil@example.ie", "friend"),
    ("Maya Patel", "maya.patel@example.com", "friend"),
    ("Tom Baker", "tom.baker@example.co.uk", "friend"),
    ("Lucía Fernández", "lucia.fernandez@example.es", "friend"),
    ("Jordan Hudson", "jordan.hudson@example.net", "family"),
    ("Casey Hudson", "casey@hudson-family.example", "family"),
    ("Pat Hudson", "pat@hudson-family.example", "family"),
    ("Mum", "mum@hudson-family.example", "family"),
    ("Grandpa Joe", "joe.hudson@example.org", "family"),
]

# (name, address, kind, category, user label name or None, List-Id or None)
AUTOMATED = [
    ("GitHub", "notifications@github.com", "gh", "CATEGORY_UPDATES", "Work", None),
    ("Amazon.com", "shipment-tracking@amazon.com", "ship", "CATEGORY_UPDATES", "Receipts", None),
    ("PayPal", "service@paypal.com", "receipt", "CATEGORY_UPDATES", "Receipts", None),
    ("Uber Receipts", "uber.us@uber.com", "receipt", "CATEGORY_UPDATES", "Receipts", None),
    ("Lufthansa", "online@booking-lufthansa.com", "travel", "CATEGORY_UPDATES", "Travel/2026",
     None),
    ("Booking.com", "noreply@booking.com", "travel", "CATEGORY_UPDATES", "Travel/2026", None),
    ("This Week in Rust", "newsletter@this-week-in-rust.org", "news", "CATEGORY_UPDATES",
     "Newsletters", "This Week in Rust <twir.this-week-in-rust.org>"),
    ("The Morning Brief", "crew@morningbrief.example", "news", "CATEGORY_PROMOTIONS",
     "Newsletters", "The Morning Brief <daily.morningbrief.example>"),
    ("SQLite Forum", "forum@sqlite.org", "forum", "CATEGORY_FORUMS", None,
     "<sqlite-users.sqlite.org>"),
    ("swift-users", "swift-users@forums.swift.org", "forum", "CATEGORY_FORUMS", None,
     "<swift-users.forums.swift.org>"),
    ("LinkedIn", "messages-noreply@linkedin.com", "social", "CATEGORY_SOCIAL", None, None),
    ("Mastodon", "notifications@mastodon.example", "social", "CATEGORY_SOCIAL", None, None),
    ("Best Deals", "deals@shop.example", "promo", "CATEGORY_PROMOTIONS", None, None),
    ("Prize Department", "winner@prizes.example", "spam", None, None, None),
]

COMMON = (
    "meeting project update team review today tomorrow week call report schedule "
    "deadline budget document draft plan issue question client order invoice payment "
    "account details attached file link feedback discussion agenda notes change release "
    "version build test server data design product launch contract proposal quarter "
    "monday friday morning afternoon office travel flight hotel dinner lunch conference "
    "ticket support request status problem fix feature deploy code branch merge commit "
    "repository access password security discount shipping delivery package tracking "
    "receipt refund newsletter summary metrics hiring interview holiday vacation "
    "birthday party weekend photos garden recipe movie apartment rent insurance doctor "
    "appointment statement approval manager engineer database migration backup storage "
    "network cluster latency performance dashboard roadmap milestone sprint backlog "
    "estimate priority reminder follow confirm available sync offline label archive "
    "thread inbox search index").split()
STOP = ("the to and of a in for is on that you it with this be are we at as have "
        "will not can if or from by your our all so but my an was do just please "
        "thanks let know about get would up out what there").split()
# Rare words: good search probes.  Some accents and a few CJK words.
RARE = ("quokka zeugma palimpsest vexillology sesquipedalian defenestration "
        "petrichor susurrus kerfuffle bumfuzzle café résumé naïve façade Zürich "
        "München Ångström crème brûlée jalapeño Kraków Reykjavík déjà-vu "
        "会议 東京 確認 資料 회의").split()
SNIPPET_TRAPS = ["Q&A", "R&D", "it's", "we'll", '"final"', "<draft>", "5 > 3"]

GH_REPOS = ["hudson/sync", "hudson/cli", "hudson/store", "hudson/gmail"]
TIMEZONES = ["+0000", "-0800", "-0500", "+0100", "+0200", "+0530", "+0900", "-0300"]
LATIN1_TEXT = ("Grüße aus Köln! Das Café an der Ecke hat wieder geöffnet, "
               "à bientôt, señor. Straße, Maße, Déjà vu: ½ Preis für Crème brûlée.")
SJIS_TEXT = ("田中です。明日の会議の資料を確認してください。\n"
             "東京オフィスで午後三時からです。よろしくお願いします。")
TINY_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5f6"
    "e6a10000000049454e44ae426082")
