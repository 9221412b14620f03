"""users.settings.filters (gmail-api.md §2.14): Gmail's own filters, and the admin
endpoint that seeds them ("made in the web UI").

A Filter is ``{"id", "criteria": FilterCriteria, "action": FilterAction}`` with the
discovery document's fields only.  list returns ``{"filter": [...]}`` (singular key,
absent when there are none; no paging).  list and get need a read scope (gmail.modify
included); create and delete need ``gmail.settings.basic``, which gmail.modify does
not include (§2.14).  Quota units as Google's table: 1 to read, 5 to write (§3).
The filters are only stored and served: like Gmail's API, this server never applies
them to existing mail.
"""
import itertools
import json
import threading

from .oauth import AUTH, SCOPE_RULES, FULL, MODIFY, READONLY
from .util import bad_request, not_found

SETTINGS_BASIC = AUTH + "gmail.settings.basic"
# Which scopes allow reading and writing filters (§2.14, [disc]).
SCOPE_RULES.setdefault("settings_read", {FULL, MODIFY, READONLY, SETTINGS_BASIC})
SCOPE_RULES.setdefault("settings_write", {SETTINGS_BASIC})

_CRITERIA = {"from": str, "to": str, "subject": str, "query": str, "negatedQuery": str,
             "hasAttachment": bool, "excludeChats": bool, "size": int, "sizeComparison": str}
_ACTION = {"addLabelIds": list, "removeLabelIds": list, "forward": str}
_COMPARISONS = ("unspecified", "smaller", "larger")


class Filters:
    """One mailbox's filters, in creation order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = {}
        self._ids = itertools.count(1)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lock = threading.Lock()

    def replace(self, filters, labels):
        """Replaces every filter (the admin seed); returns the stored filters."""
        checked = [_checked(f, labels) for f in filters]
        with self.lock:
            self.items = {}
            for f in checked:
                fid = f.get("id") or self._new_id()
                self.items[fid] = dict(f, id=fid)
            return list(self.items.values())

    def create(self, body, labels):
        f = _checked(body, labels)
        with self.lock:
            fid = self._new_id()
            self.items[fid] = dict(f, id=fid)
            return self.items[fid]

    def get(self, fid):
        with self.lock:
            if fid not in self.items:
                raise not_found()
            return self.items[fid]

    def delete(self, fid):
        with self.lock:
            if self.items.pop(fid, None) is None:
                raise not_found()

    def listing(self):
        with self.lock:
            return list(self.items.values())

    def _new_id(self):
        # Gmail's filter ids are opaque strings such as "ANe1Bmj...".
        while True:
            fid = "ANe1Bm%06d" % next(self._ids)
            if fid not in self.items:
                return fid


def _checked(body, labels):
    """A Filter from a request body: the documented fields, typed; empty ones dropped (§1)."""
    if not isinstance(body, dict):
        raise bad_request("Invalid filter")
    criteria, action = body.get("criteria") or {}, body.get("action") or {}
    if not isinstance(criteria, dict) or not isinstance(action, dict):
        raise bad_request("Invalid filter")
    out = {}
    for part, fields, name in ((criteria, _CRITERIA, "criteria"), (action, _ACTION, "action")):
        kept = {}
        for key, value in part.items():
            kind = fields.get(key)
            if kind is None:
                raise bad_request("Invalid JSON payload received. Unknown name \"%s\" at 'filter.%s'" % (key, name))
            if kind is int and isinstance(value, str) and value.isdigit():
                value = int(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise bad_request("Invalid value at 'filter.%s.%s'" % (name, key))
            if kind is list and not all(isinstance(v, str) for v in value):
                raise bad_request("Invalid value at 'filter.%s.%s'" % (name, key))
            if value in ("", [], False, None):
                continue
            kept[key] = value
        if kept:
            out[name] = kept
    if out.get("criteria", {}).get("sizeComparison", "unspecified") not in _COMPARISONS:
        raise bad_request("Invalid value at 'filter.criteria.sizeComparison'")
    if not out.get("criteria"):
        raise bad_request("Filter doesn't have any criteria")
    if not out.get("action"):
        raise bad_request("Filter doesn't have any actions")
    for key in ("addLabelIds", "removeLabelIds"):
        for label_id in out.get("action", {}).get(key, []):
            if labels.get(label_id) is None:
                raise bad_request("Invalid label %s" % label_id)
    if "id" in body:
        out["id"] = str(body["id"])
    return out


def _filters(ctx):
    mailbox = ctx.mailbox
    with mailbox.lock:
        if getattr(mailbox, "filters", None) is None:
            mailbox.filters = Filters()
        return mailbox.filters


def _label_lookup(ctx):
    return _Labels(ctx.mailbox.labels, ctx.mailbox.lock)


class _Labels:
    """Looks a label id up in the mailbox's table, by the table's own get."""

    def __init__(self, table, lock):
        self.table, self.lock = table, lock

    def get(self, label_id):
        with self.lock:
            return self.table.get(label_id)


def list_filters(ctx):
    found = _filters(ctx).listing()
    return 200, {"filter": found} if found else {}


def get_filter(ctx, fid):
    return 200, _filters(ctx).get(fid)


def create_filter(ctx):
    return 200, _filters(ctx).create(ctx.json_body(), _label_lookup(ctx))


def delete_filter(ctx, fid):
    _filters(ctx).delete(fid)
    return 204, None


def admin_replace(app, req):
    """POST /_admin/filters: {"filter": [Filter...]} replaces every filter (as made in the
    web UI; ids kept when given). GET /_admin/filters shows them."""
    try:
        body = json.loads(req.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise bad_request("request body is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("filter", []), list):
        raise bad_request("Expected {\"filter\": [...]}")
    mailbox = app.mailbox
    with mailbox.lock:
        if getattr(mailbox, "filters", None) is None:
            mailbox.filters = Filters()
    stored = mailbox.filters.replace(body.get("filter", []), _Labels(mailbox.labels, mailbox.lock))
    return 200, {"filter": stored}


def admin_list(app, req):
    mailbox = app.mailbox
    filters = getattr(mailbox, "filters", None)
    return 200, {"filter": filters.listing() if filters else []}


_ID = r"([^/]+)"
ROUTES = [
    ("GET", r"settings/filters", list_filters, 1, "settings_read", "settings.filters.list"),
    ("POST", r"settings/filters", create_filter, 5, "settings_write", "settings.filters.create"),
    ("GET", r"settings/filters/" + _ID, get_filter, 1, "settings_read", "settings.filters.get"),
    ("DELETE", r"settings/filters/" + _ID, delete_filter, 5, "settings_write", "settings.filters.delete"),
]
ADMIN_ROUTES = [("GET", r"filters", admin_list), ("POST", r"filters", admin_replace)]
