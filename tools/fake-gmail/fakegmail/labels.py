"""The label table: system labels plus user labels (gmail-api.md §1, §2.10).

System label ids are upper-case words; user label ids look like ``Label_12``.
Users may add/remove INBOX and UNREAD but not SENT or DRAFT (§1).
"""
import re

from .util import ApiError, bad_request, not_found

# (id, messageListVisibility, labelListVisibility) as labels.list shows them;
# None = the field is left out, as Gmail does for most system labels.
SYSTEM_LABELS = [
    ("CHAT", "hide", "labelHide"),
    ("SENT", None, None),
    ("INBOX", None, None),
    ("IMPORTANT", None, None),
    ("TRASH", None, None),
    ("DRAFT", None, None),
    ("SPAM", "hide", "labelHide"),
    ("CATEGORY_FORUMS", None, None),
    ("CATEGORY_UPDATES", None, None),
    ("CATEGORY_PERSONAL", None, None),
    ("CATEGORY_PROMOTIONS", None, None),
    ("CATEGORY_SOCIAL", None, None),
    ("STARRED", None, None),
    ("UNREAD", None, None),
]
SYSTEM_IDS = {s[0] for s in SYSTEM_LABELS}
NOT_USER_SETTABLE = {"SENT", "DRAFT", "CHAT"}
MESSAGE_VISIBILITY = {"show", "hide"}
LABEL_VISIBILITY = {"labelShow", "labelShowIfUnread", "labelHide"}
# LabelColor: "Only the following predefined set of color values are allowed" (the
# discovery document, textColor and backgroundColor: the same set for both).
PALETTE = frozenset("""
#000000 #007286 #04502e #076239 #083018 #094228 #0b4f30 #0b804b #0d3472 #0d3b44
#149e60 #16a765 #16a766 #1a764d #1c4587 #1e53b8 #202124 #285bac #2a9c68 #2da2bb
#3c78d8 #3d188e #3dc789 #41236d #42d692 #434343 #43d692 #44b984 #464646 #4986e7
#4a86e8 #521d28 #54240e #594c05 #633e04 #653e9b #662e37 #666666 #684e07 #68dfa9
#6d9eeb #711a36 #757575 #7858c3 #7a2e0b #7a4706 #822111 #83334c #89d3b2 #8a1c0a
#8e63ce #98d7e4 #994a64 #999999 #a0eac9 #a2dcc1 #a46a21 #a479e2 #a4c2f4 #aa8831
#ac2b16 #b3efd3 #b65775 #b694e8 #b6cff5 #b99aff #b9e4d0 #c2185b #c2c2c2 #c6f3de
#c9daf8 #cc3a21 #cca6ac #cccccc #cf8933 #d0bcf1 #d5ae49 #d93025 #e07798 #e3d7ff
#e4d7f5 #e66550 #e7e7e7 #eaa041 #ebdbde #efa093 #efefef #f2b2a8 #f2c960 #f3f3f3
#f691b2 #f691b3 #f6c5be #f7a7c0 #fad165 #fb4c2f #fbc8d9 #fbd3e0 #fbe983 #fcda83
#fcdee8 #fce8b3 #fdedc1 #fef1d1 #ff7537 #ffad46 #ffad47 #ffbc6b #ffc8af #ffd6a2
#ffdeb5 #ffe6c7 #ffffff
""".split())
# Google Takeout's X-Gmail-Labels names for system labels.
TAKEOUT_NAMES = {
    "inbox": "INBOX", "sent": "SENT", "sent mail": "SENT", "starred": "STARRED",
    "important": "IMPORTANT", "unread": "UNREAD", "spam": "SPAM", "trash": "TRASH",
    "draft": "DRAFT", "drafts": "DRAFT", "chat": "CHAT", "chats": "CHAT",
    "category personal": "CATEGORY_PERSONAL", "category social": "CATEGORY_SOCIAL",
    "category promotions": "CATEGORY_PROMOTIONS", "category updates": "CATEGORY_UPDATES",
    "category forums": "CATEGORY_FORUMS",
}
TAKEOUT_IGNORED = {"opened", "archived", ""}


class LabelTable:
    """All labels of the mailbox, in labels.list order."""

    def __init__(self):
        self.labels = {}
        for lid, mlv, llv in SYSTEM_LABELS:
            entry = {"id": lid, "name": lid, "type": "system"}
            if mlv:
                entry["messageListVisibility"] = mlv
                entry["labelListVisibility"] = llv
            self.labels[lid] = entry

    # ---------------------------------------------------------- lookups

    def __contains__(self, label_id):
        return label_id in self.labels

    def get(self, label_id):
        return self.labels.get(label_id)

    def all(self):
        return list(self.labels.values())

    def by_name(self, name):
        """Case-insensitive lookup by name; None when unknown."""
        low = name.lower()
        for entry in self.labels.values():
            if entry["name"].lower() == low:
                return entry
        return None

    def resolve(self, id_or_name):
        """Label id for an id or a name (admin API, loaders); None when unknown."""
        if id_or_name in self.labels:
            return id_or_name
        entry = self.by_name(id_or_name)
        return entry["id"] if entry else None

    def search_names(self, term):
        """Label ids matching ``label:term`` (§6: spaces and / may be written -)."""
        low = term.lower()
        out = []
        for entry in self.labels.values():
            name = entry["name"].lower()
            if low in (name, re.sub(r"[\s/]", "-", name), entry["id"].lower()):
                out.append(entry["id"])
        return out

    def user_ids(self):
        return [lid for lid, e in self.labels.items() if e["type"] == "user"]

    # ---------------------------------------------------------- changes

    def _next_id(self):
        numbers = [int(m.group(1)) for m in (re.match(r"^Label_(\d+)$", lid)
                                              for lid in self.labels) if m]
        return "Label_%d" % (max(numbers, default=0) + 1)

    def _check_name(self, name, own_id=None):
        if not isinstance(name, str) or not name.strip():
            raise bad_request("Invalid label name")
        if name.strip().upper() in SYSTEM_IDS or name.strip().lower() in TAKEOUT_NAMES:
            raise bad_request("Invalid label name")
        clash = self.by_name(name.strip())
        if clash is not None and clash["id"] != own_id:
            raise ApiError(409, "Label name exists or conflicts", "alreadyExists",
                           status="ALREADY_EXISTS")

    @staticmethod
    def _apply_fields(entry, fields):
        mlv = fields.get("messageListVisibility")
        llv = fields.get("labelListVisibility")
        if mlv is not None:
            if mlv not in MESSAGE_VISIBILITY:
                raise bad_request("Invalid messageListVisibility: %s" % mlv)
            entry["messageListVisibility"] = mlv
        if llv is not None:
            if llv not in LABEL_VISIBILITY:
                raise bad_request("Invalid labelListVisibility: %s" % llv)
            entry["labelListVisibility"] = llv
        color = fields.get("color")
        if color is not None:
            if not isinstance(color, dict) or not all(
                    isinstance(color.get(k), str) and color[k].lower() in PALETTE
                    for k in ("textColor", "backgroundColor")):
                raise bad_request("Invalid color: not in the label color palette")
            entry["color"] = {"textColor": color["textColor"].lower(),
                              "backgroundColor": color["backgroundColor"].lower()}

    def create(self, fields, label_id=None):
        """labels.create (§2.10); 409 ALREADY_EXISTS on a duplicate name."""
        name = fields.get("name")
        self._check_name(name)
        entry = {"id": label_id or self._next_id(), "name": name.strip(),
                 "messageListVisibility": "show", "labelListVisibility": "labelShow",
                 "type": "user"}
        self._apply_fields(entry, fields)
        self.labels[entry["id"]] = entry
        return entry

    def ensure(self, name, label_id=None):
        """Id of the label called ``name``, creating a user label when needed."""
        found = self.resolve(name)
        if found:
            return found
        if label_id and label_id in self.labels:
            return label_id
        return self.create({"name": name}, label_id)["id"]

    def update(self, label_id, fields, replace=False):
        """labels.patch (replace=False) or labels.update (replace=True)."""
        entry = self.labels.get(label_id)
        if entry is None:
            raise not_found()
        if entry["type"] == "system":
            raise bad_request("Invalid label: %s" % label_id)
        if replace and not fields.get("name"):
            raise bad_request("Invalid label name")
        if "name" in fields:
            self._check_name(fields["name"], own_id=label_id)
        new = dict(entry)
        if replace:
            new = {"id": label_id, "name": entry["name"], "messageListVisibility": "show",
                   "labelListVisibility": "labelShow", "type": "user"}
        if "name" in fields:
            new["name"] = fields["name"].strip()
        self._apply_fields(new, fields)
        self.labels[label_id] = new
        return new

    def delete(self, label_id):
        entry = self.labels.get(label_id)
        if entry is None:
            raise not_found()
        if entry["type"] == "system":
            raise bad_request("Invalid label: %s" % label_id)
        del self.labels[label_id]
