"""OAuth mode's linking page: where a signed-in person pastes their Woodpecker token, once, through a single-use link.

`TokenLinks` offers links (the MCP adapter asks for one when a person without a linked token
calls a tool) and answers who is linked. `TokenLinkPage` serves `/link/<id>` on this
server's own origin: the link is a 256-bit secret that expires in minutes and works once; the
form carries a CSRF token bound to the link (also in a SameSite=Strict cookie) and is only
accepted from this origin; the page cannot be framed (CSP `frame-ancestors 'none'`,
X-Frame-Options), is never cached and sends no referrer to other sites. The page names the
sign-in the link is for (from the access token that asked for it, kept with the link) and warns
anyone else off; it cannot prove who is in the browser (docs/adr/0059). The token is checked with
Woodpecker before it is stored, sealed, under the principal the link was issued to. It is
never logged, and never shown back.
"""

import hashlib
import hmac
import html
import logging
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from domain.parsing.tokens import token_shaped
from domain.parsing.urls import split_url
from domain.visible import escape
from ports.linked_tokens import LinkedToken, LinkedTokens, LinkOffer
from ports.token_store import TokenStoreUnavailable
from ports.woodpecker import Credential

logger = logging.getLogger(__name__)

LINK_PATH = "/link/"
DEFAULT_LINK_SECONDS = 600.0
_CSRF_COOKIE = "woodpecker_mcp_link_csrf"
_MAX_FORM_BYTES = 8 * 1024
_MAX_TOKEN_CHARS = 512

# login of the token's owner, or None when Woodpecker refuses the token; raises when it cannot be asked.
CheckToken = Callable[[Credential], Awaitable[str | None]]

_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "referrer-policy": "same-origin",  # not no-referrer: the form post would then say `Origin: null`
    "x-content-type-options": "nosniff",
}


class TokenLinks:
    """Offers single-use links bound to a principal, and answers who is linked (the TokenLinking port)."""

    def __init__(
        self,
        vault: LinkedTokens,
        *,
        public_origin: str,
        random_token: Callable[[], str],
        link_seconds: float = DEFAULT_LINK_SECONDS,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.vault = vault
        self.public_origin = public_origin.rstrip("/")
        self.link_seconds = link_seconds
        self._random_token = random_token
        self._now = now

    async def new_link(self, principal: str, sign_in_name: str) -> LinkOffer:
        link_id = self._random_token()
        expires_at = self._now() + self.link_seconds
        await self.vault.open_link(link_id, principal, expires_at, sign_in_name)
        return LinkOffer(
            url=f"{self.public_origin}{LINK_PATH}{link_id}",
            elicitation_id=self._random_token(),
            expires_at=expires_at,
        )

    async def linked(self, principal: str) -> LinkedToken | None:
        return await self.vault.token(principal)

    async def unlink(self, principal: str) -> bool:
        return await self.vault.remove(principal)

    async def announce(self, principal: str) -> LinkedToken | None:
        return await self.vault.announce(principal)


def _shown(text: str) -> str:
    """Untrusted text for the page: invisible and bidi characters escaped, then HTML."""
    return html.escape(escape(text))


def _page(title: str, body: str, status: int = 200, cookie: str | None = None) -> HTMLResponse:
    document = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;max-width:34em;margin:3em auto;padding:0 1em;line-height:1.5}"
        "input[type=password]{width:100%;padding:.4em;font-size:1em}button{margin-top:1em;padding:.4em 1.2em}"
        ".error{color:#a00}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    response = HTMLResponse(document, status_code=status, headers=_HEADERS)
    if cookie is not None:
        response.headers.append("set-cookie", cookie)
    return response


_GONE = (
    "<p>This link has expired or has already been used. Go back to your assistant and call a tool "
    "again: it offers a new link.</p>"
)


class TokenLinkPage:
    """ASGI: serves `/link/<id>` and passes every other path to `app`."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        links: TokenLinks,
        check: CheckToken,
        csrf_key: bytes,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.app = app
        self._links = links
        self._vault = links.vault
        self._check = check
        self._csrf_key = csrf_key
        self._now = now
        self._secure = split_url(links.public_origin).scheme == "https"

    def _csrf(self, link_id: str) -> str:
        return hmac.new(self._csrf_key, b"link csrf\0" + link_id.encode(), hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(LINK_PATH):
            await self.app(scope, receive, send)
            return
        link_id = path[len(LINK_PATH) :]
        try:
            if scope["method"] == "GET":
                response = await self._form(link_id)
            elif scope["method"] == "POST":
                response = await self._submit(scope, receive, link_id)
            else:
                response = _page("Not allowed", "<p>Use the form.</p>", 405)
                response.headers["allow"] = "GET, POST"
        except TokenStoreUnavailable:
            # The link and the token live in that store: nothing can be shown or kept until it is back.
            logger.warning("the linked-token store could not be reached from the linking page")
            response = _page(
                "Try again", "<p>This page cannot be used just now; reload it in a moment.</p>", 503
            )
            response.headers["retry-after"] = "5"
        await response(scope, receive, send)

    async def _form(self, link_id: str, error: str | None = None, status: int = 200) -> HTMLResponse:
        pending = await self._vault.link_owner(link_id, self._now())
        if pending is None:
            return _page("Link expired", _GONE, 410)
        csrf = self._csrf(link_id)
        notice = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
        body = (
            f"{_for_whom(pending.sign_in_name)}"
            "<p>Paste a Woodpecker <strong>personal access token</strong> (Woodpecker: your avatar → "
            "<em>User settings</em> → <em>Personal access token</em>). The assistant will act on Woodpecker "
            "with exactly that account's rights. This page works once and expires in minutes.</p>"
            f"{notice}"
            f'<form method="post" action="{LINK_PATH}{html.escape(link_id)}">'
            f'<input type="hidden" name="csrf" value="{csrf}">'
            '<label for="token">Woodpecker personal access token</label>'
            '<input type="password" id="token" name="token" autocomplete="off" required>'
            '<button type="submit">Link my Woodpecker account</button></form>'
        )
        secure = "; Secure" if self._secure else ""
        cookie = f"{_CSRF_COOKIE}={csrf}; Path={LINK_PATH}; HttpOnly; SameSite=Strict; Max-Age=900{secure}"
        return _page("Link your Woodpecker account", body, status, cookie=cookie)

    async def _submit(self, scope: Scope, receive: Receive, link_id: str) -> HTMLResponse:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if (origin is not None and origin.lower() != self._links.public_origin.lower()) or headers.get(
            "sec-fetch-site", "same-origin"
        ) not in ("same-origin", "none"):
            return _page("Refused", "<p>This form only accepts submissions from its own page.</p>", 403)
        body = await _read_body(receive)
        form = (
            _form_fields(body)
            if headers.get("content-type", "").startswith("application/x-www-form-urlencoded")
            else None
        )
        if form is None:
            return _page("Refused", "<p>The form could not be read.</p>", 400)
        expected = self._csrf(link_id)
        given = (form.get("csrf") or [""])[0]
        cookie = _cookie(headers.get("cookie", ""), _CSRF_COOKIE)
        # As bytes: compare_digest refuses a str with anything beyond ASCII, which anyone can send.
        matches = hmac.compare_digest(given.encode(), expected.encode()) and hmac.compare_digest(
            cookie.encode(), expected.encode()
        )
        if not matches:
            return _page("Refused", "<p>The form has expired; reload the page and try again.</p>", 403)
        now = self._now()
        pending = await self._vault.link_owner(link_id, now)
        if pending is None:
            return _page("Link expired", _GONE, 410)
        token = (form.get("token") or [""])[0].strip()
        if not token or len(token) > _MAX_TOKEN_CHARS or not token_shaped(token):
            return await self._form(link_id, "That does not look like a Woodpecker token.", 400)
        credential = Credential(token)
        try:
            login = await self._check(credential)
        except Exception as e:
            logger.warning("Woodpecker could not check a token being linked (%s)", type(e).__name__)
            return _page(
                "Try again", "<p>Woodpecker could not be asked just now; reload and try again.</p>", 503
            )
        if login is None:
            return await self._form(link_id, "Woodpecker did not accept this token.", 400)
        principal = await self._vault.take_link(link_id, self._now())
        if principal is None:
            return _page("Link expired", _GONE, 410)
        await self._vault.store(principal, LinkedToken(credential, login, now, announced=False))
        whose = (
            f"The sign-in <strong>{_shown(pending.sign_in_name)}</strong>"
            if pending.sign_in_name
            else "This link's sign-in"
        )
        return _page(
            "Linked",
            f"<p>{whose} is now linked to the Woodpecker account <strong>{_shown(login)}</strong>: "
            "the assistant of that sign-in acts on Woodpecker with this account's rights. "
            "Close this page and go back to your assistant.</p>",
        )


def _for_whom(sign_in_name: str) -> str:
    """The warning above the form: whose link this is, and that nobody else's token belongs here."""
    whose = (
        f"the sign-in <strong>{_shown(sign_in_name)}</strong>"
        if sign_in_name
        else "one sign-in (it gave no name)"
    )
    return (
        f'<p role="note">This link is for {whose}: a token pasted here is used by that sign-in\'s assistant. '
        "<strong>Paste your token only if that sign-in is yours.</strong> Nobody else needs your token: "
        "if someone sent you this link, do not use it.</p>"
    )


async def _read_body(receive: Receive) -> bytes | None:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > _MAX_FORM_BYTES:
            return None
        if not message.get("more_body", False):
            return bytes(body)


def _form_fields(body: bytes | None) -> dict[str, list[str]] | None:
    """The posted fields; None for no body or more fields than the form has (parse_qs raises then)."""
    if body is None:
        return None
    try:
        return parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
    except ValueError:
        return None


def _cookie(header: str, name: str) -> str:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""
