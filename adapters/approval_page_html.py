"""The approval page's document and its form check (guard.md §4b), without the server that serves it.

One plain HTML form, urlencoded, posting to the page's own URL, with a submit button named `decision`
valued `approve` and one valued `decline`, hidden fields the POST must carry back, and a CSRF field that
must match a `SameSite=Strict` cookie. `id="outcome"` says pending, approved, declined or expired. It
needs no script and runs under `default-src 'none'; frame-ancestors 'none'`.
"""

import hashlib
import hmac
import html
from collections.abc import Mapping
from urllib.parse import parse_qs

from domain.guard.ways import PageDecision
from domain.visible import escape

CSRF_COOKIE = "woodpecker_mcp_approval_csrf"
HEADERS = {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
}
_WORDS: Mapping[PageDecision, str] = {
    "pending": "pending",
    "approved": "approved",
    "declined": "declined",
    "expired": "expired",
}
_SAID: Mapping[PageDecision, str] = {
    "pending": "Nothing has been done yet: your answer decides.",
    "approved": "You approved this call. Go back to your assistant: it runs the call once.",
    "declined": "You declined this call: nothing was done.",
    "expired": "This question expired unanswered: nothing was done.",
}


def csrf_value(key: bytes, digest: str) -> str:
    """The CSRF field and cookie of one page: keyed by the server, bound to the link's digest."""
    return hmac.new(key, b"approval csrf\0" + digest.encode(), hashlib.sha256).hexdigest()


def document(*, question: str, tool: str, action: str, state: PageDecision, csrf: str) -> str:
    """The page. `question` is shown byte for byte as the dialog shows it (escaped for HTML only, its
    invisible characters already escaped by the question's writer); `action` is the page's own path."""
    form = ""
    if state == "pending":
        form = (
            f'<form method="post" action="{html.escape(action)}" enctype="application/x-www-form-urlencoded">'
            f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
            f'<input type="hidden" name="tool" value="{html.escape(tool)}">'
            '<button type="submit" name="decision" value="approve">Approve</button> '
            '<button type="submit" name="decision" value="decline">Decline</button></form>'
        )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        "<title>Approve a Woodpecker call?</title>"
        "<style>body{font-family:sans-serif;max-width:40em;margin:2em auto;padding:0 1em;line-height:1.5}"
        "pre{white-space:pre-wrap;overflow-wrap:anywhere}button{padding:.5em 1.4em;margin:.5em .5em 0 0}</style>"
        "</head><body><h1>Approve a Woodpecker call?</h1>"
        f"<p>Your assistant wants to call <code>{html.escape(escape(tool))}</code>. It asks:</p>"
        f"<pre>{html.escape(question)}</pre>"
        f'<p>Outcome: <strong id="outcome">{_WORDS[state]}</strong>. {_SAID[state]}</p>'
        f"{form}</body></html>"
    )


def cookie(csrf: str, path: str) -> str:
    return f"{CSRF_COOKIE}={csrf}; Path={path}; HttpOnly; SameSite=Strict; Max-Age=900"


def posted_decision(
    *, body: bytes, content_type: str, origin: str | None, own_origin: str, cookie_header: str, csrf: str
) -> bool | None:
    """True for approve, False for decline, None for a POST that decides nothing (another origin, a
    bad form, a CSRF field or cookie that does not match). No `Origin`, or the page's own, is accepted."""
    if origin is not None and origin.lower() != own_origin.lower():
        return None
    if not content_type.lower().startswith("application/x-www-form-urlencoded"):
        return None
    try:
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
    except ValueError:
        return None
    given = (form.get("csrf") or [""])[0].encode()
    cookie_value = ""
    for part in cookie_header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == CSRF_COOKIE:
            cookie_value = value
    if not (
        hmac.compare_digest(given, csrf.encode())
        and hmac.compare_digest(cookie_value.encode(), csrf.encode())
    ):
        return None
    decision = form.get("decision") or [""]
    if decision == ["approve"]:
        return True
    if decision == ["decline"]:
        return False
    return None
