"""What Gmail accepts to send (gmail-api.md §2.7), for messages.send and drafts.send
alike; below both, so neither imports the other."""
from . import mime
from .util import bad_request


def check_sendable(raw):
    """400 unless ``raw`` is a message Gmail would send (§2.7)."""
    hdrs = mime.parse_headers(raw)
    if not raw.strip() or not hdrs.keys():
        raise bad_request("Invalid raw message")
    if not (hdrs.get("From") or "").strip():
        raise bad_request("Invalid From header")
    if not any((hdrs.get(h) or "").strip() for h in ("To", "Cc", "Bcc")):
        raise bad_request("Recipient address required")
