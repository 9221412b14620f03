"""fakegmail: a local fake of the Gmail REST API v1 for Hudson's tests.

Python 3 standard library only.  The package is split into small modules:

- util      base64url, JSON encoding, Google error envelopes, ids, clock
- mime      RFC 822 bytes -> Gmail ``MessagePart`` tree (and back)
- message   one stored message with lazily built, cached renderings
- labels    the label table (system + user labels)
- history   the mailbox-wide history log
- query     the supported subset of Gmail's ``q`` search syntax
- mailbox   messages, threads, the sorted index and all mutations
- demodata, demo   the deterministic embedded demo mailbox
- loaders   eml directory / Maildir / mbox / Gmail NDJSON loaders
- api       one function per Gmail endpoint
- batch     the multipart/mixed batch endpoint
- oauth     /auth, /token, /revoke
- faults    fault-injection rules
- admin     the /_admin JSON interface
- app       request dispatch: auth, scopes, quota, faults, request log
- server    the HTTP server and the command line
"""

__version__ = "1.0.0"


def main(argv=None):
    """Entry point used by fake_gmail.py (imported lazily to keep startup cheap)."""
    from .server import main as _main
    return _main(argv)
