"""The approval page over HTTP, behind a sign-in (OAuth mode; guard.md §4b [team], ADR 0084).

`SignedInApprovalPages` is the ApprovalPages port: single-use pages under this server's own public
origin (`/approve/<secret>`, a 256-bit secret kept only as its digest), offered to the person by the
client (URL-mode elicitation); the server opens no browser of its own. `ApprovalPageApp` serves them
in front of the OAuth gate. A page answers only a signed-in person: OpenID Connect at the issuer the
resource server trusts (`OidcSignIn`), its state in a `SameSite=Lax` cookie (a `Strict` one is not
sent on the provider's redirect back), the sign-in bound to that one page. Then the same form and
rules as in stdio: the question byte for byte, a CSRF field equal to a `SameSite=Strict` cookie, one
post decides once. Who may answer: the caller (the principal of the access token that made the
call), or those `WOODPECKER_MCP_APPROVERS` lists; never the caller on a four-eyes tool. A person who
may not answer sees who may, and that nothing was done; the audit records it.
"""

import base64
import hashlib
import hmac
import html
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import anyio
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.oauth_resource.gate import oauth_principal
from adapters.oauth_resource.sign_in import OidcSignIn, SignInFailed, Started
from domain.guard.approval_page import (
    CSRF_COOKIE,
    MAX_FORM_BYTES,
    OPEN_THE_PAGE,
    PAGE_PATH,
    Collected,
    Page,
    read_form,
    render,
    render_refused,
)
from domain.guard.approvers import Approvers, SignedIn, verdict, who_may_answer
from domain.parsing.urls import split_url
from ports.approval_pages import Approver, Asking, Offered, PageOpener, Shown
from ports.progress import Progress

logger = logging.getLogger(__name__)

CALLBACK_PATH = PAGE_PATH + "signed-in"
STATE_COOKIE = "mcp_approval_sign_in"
SESSION_COOKIE = "mcp_approval_session"
_SERVER, _FORGE = "woodpecker-ci-mcp", "Woodpecker CI"
_KEEP_SECONDS = 600.0
_SIGN_IN_SECONDS = 600.0
_MAX_SIGN_INS = 1000
_PER_PAGE = 8  # sign-ins under way, and sessions, per page: a person retrying, a second browser
_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "referrer-policy": "same-origin",  # not no-referrer: the form post would then say `Origin: null`
    "x-content-type-options": "nosniff",
}


@dataclass(slots=True)
class _Entry:
    page: Page
    key: str
    asking: Asking | None
    four_eyes: bool
    keep_until: float
    refused: set[str] = field(default_factory=set)


class SignedInApprovalPages:
    """The ApprovalPages port over HTTP: pages by key, offered through the client, answered signed in."""

    def __init__(
        self,
        *,
        public_origin: str,
        four_eyes: frozenset[str] = frozenset(),
        window_seconds: float = 45.0,
        now: Callable[[], float] = time.monotonic,
        poll_seconds: float = 0.05,
    ) -> None:
        self.public_origin = public_origin.rstrip("/")
        self.four_eyes = four_eyes
        self.window_seconds = window_seconds
        self.now = now
        self._poll = poll_seconds
        self._by_key: dict[str, Page] = {}
        self._by_digest: dict[str, _Entry] = {}
        self._decided: dict[str, Approver] = {}
        self._changed = anyio.Event()
        self._link_key = secrets.token_bytes(32)

    async def available(self) -> bool:
        return False  # no browser of the server's own: only a client can bring the page to the person

    async def show(
        self,
        key: str,
        question: str,
        ttl_seconds: int,
        via: PageOpener | None = None,
        asking: Asking | None = None,
    ) -> Shown:
        if via is None:
            return "unavailable"
        page = self._pending(key) or self._new_page(key, question, ttl_seconds, asking)
        offered = await via.open(self._url(page), question + OPEN_THE_PAGE)
        if offered != "opened":
            self.withdraw(key)
        return "shown" if offered == "opened" else offered

    async def offer(
        self, key: str, question: str, ttl_seconds: int, asking: Asking | None = None
    ) -> Offered | None:
        page = self._pending(key) or self._new_page(key, question, ttl_seconds, asking)
        return Offered(self._url(page), hashlib.sha256(page.public_id.encode()).hexdigest()[:32])

    def withdraw(self, key: str) -> None:
        page = self._by_key.pop(key, None)
        if page is not None:
            page.withdraw(self.now())
            self.changed()

    def decided_by(self, key: str) -> Approver | None:
        return self._decided.pop(key, None)

    async def wait(self, key: str, window_seconds: float, progress: Progress | None) -> Collected:
        page = self._by_key.get(key)
        if page is None:
            return "expired"
        start, next_report = self.now(), 5.0
        collected: Collected = "pending"
        with anyio.move_on_after(window_seconds):
            while (collected := page.collect(self.now())) == "pending" and not page.collected:
                if progress is not None and self.now() - start >= next_report:
                    await progress.report(next_report, window_seconds, "Waiting for the approver's answer")
                    next_report += 5.0
                with anyio.move_on_after(self._poll):
                    await self._changed.wait()
        if collected == "pending" and not page.collected:
            collected = page.collect(self.now())
        if collected != "pending" or page.collected:
            self._by_key.pop(key, None)
        return collected

    # ------------------------------------------------------------ for the page's app

    def changed(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def entry(self, secret: str) -> _Entry | None:
        found = self._by_digest.get(_digest(secret))
        return found if found is not None and found.keep_until >= self.now() else None

    def decide(self, entry: _Entry, form: dict[str, str], cookie: str | None, approver: Approver) -> None:
        """Apply one post of a person allowed to answer; the first valid one decides, by `approver`."""
        before = entry.page.seen_at(self.now())
        after = entry.page.post(form, cookie, self.now())
        if before == "pending" and after != "pending":
            self._decided[entry.key] = approver
            self.changed()

    def _pending(self, key: str) -> Page | None:
        page = self._by_key.get(key)
        if page is not None and page.seen_at(self.now()) == "pending" and not page.collected:
            return page
        return None

    def _new_page(self, key: str, question: str, ttl_seconds: int, asking: Asking | None) -> Page:
        now = self.now()
        for digest in [d for d, e in self._by_digest.items() if e.keep_until < now]:
            del self._by_digest[digest]
        page = Page(
            public_id=secrets.token_urlsafe(12),
            csrf=secrets.token_urlsafe(32),
            question=question,
            expires_at=now + ttl_seconds,
        )
        self._by_key[key] = page
        four_eyes = asking is not None and asking.tool in self.four_eyes
        self._by_digest[_digest(self._secret(page))] = _Entry(
            page, key, asking, four_eyes, now + ttl_seconds + _KEEP_SECONDS
        )
        return page

    def _secret(self, page: Page) -> str:
        mac = hmac.new(self._link_key, page.public_id.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def _url(self, page: Page) -> str:
        return f"{self.public_origin}{PAGE_PATH}{self._secret(page)}"


@dataclass(frozen=True, slots=True)
class _SignIn:
    started: Started
    page_digest: str
    path: str
    until: float


@dataclass(frozen=True, slots=True)
class _Session:
    person: SignedIn
    principal: str
    page_digest: str
    until: float


def _make_room(
    store: "OrderedDict[str, _SignIn] | OrderedDict[str, _Session]", page: str, now: float
) -> None:
    """Room for one more sign-in (or session) of `page`: the expired ones go first, then the oldest of
    that page beyond its few, and only then the oldest of all. Whoever holds one link can crowd out
    only that page's own sign-ins, never other pages' (found by a review)."""
    for key in [k for k, v in store.items() if v.until < now]:
        del store[key]
    mine = [k for k, v in store.items() if v.page_digest == page]
    for key in mine[: max(len(mine) - _PER_PAGE + 1, 0)]:
        del store[key]
    while len(store) >= _MAX_SIGN_INS:
        store.popitem(last=False)


class ApprovalPageApp:
    """ASGI: serves `/approve/…` (the pages and the sign-in's return) and passes every other path on."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        pages: SignedInApprovalPages,
        sign_in: OidcSignIn,
        principal_key: bytes,
        approvers: Approvers,
    ) -> None:
        self.app = app
        self._pages = pages
        self._sign_in = sign_in
        self._principal_key = principal_key
        self._approvers = approvers
        self._origin = pages.public_origin
        self._secure = split_url(self._origin).scheme == "https"
        self._sign_ins: OrderedDict[str, _SignIn] = OrderedDict()
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(PAGE_PATH):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        cookies = _cookies(headers.get("cookie", ""))
        if path == CALLBACK_PATH:
            response = await self._returned(scope, cookies) if scope["method"] == "GET" else _not_allowed()
        else:
            response = await self._page(scope, receive, path, headers, cookies)
        await response(scope, receive, send)

    # ------------------------------------------------------------ the sign-in

    async def _to_sign_in(self, path: str) -> Response:
        try:
            started = await self._sign_in.start()
        except SignInFailed as e:
            return _html(
                "Sign-in unavailable",
                f"<p>{html.escape(str(e))} Nothing was done; reload in a moment.</p>",
                503,
            )
        now = self._pages.now()
        _make_room(self._sign_ins, _digest(path[len(PAGE_PATH) :]), now)
        self._sign_ins[_digest(started.state)] = _SignIn(
            started, _digest(path[len(PAGE_PATH) :]), path, now + _SIGN_IN_SECONDS
        )
        response = RedirectResponse(started.url, status_code=303, headers=_HEADERS)
        response.headers.append("set-cookie", self._cookie(STATE_COOKIE, started.state, "Lax"))
        return response

    async def _returned(self, scope: Scope, cookies: dict[str, str]) -> Response:
        try:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"), max_num_fields=8)
        except ValueError:  # more fields than a provider's return carries: answered as unrecognised
            query = {}
        state = (query.get("state") or [""])[0]
        code = (query.get("code") or [""])[0]
        cookie = cookies.get(STATE_COOKIE, "")
        # The state must come back in the browser that started the sign-in (its Lax cookie), once.
        pending = self._sign_ins.pop(_digest(state), None) if state else None
        if pending is None or not hmac.compare_digest(cookie, state) or pending.until < self._pages.now():
            return _html(
                "Sign-in not recognised", "<p>Open the approval link again. Nothing was done.</p>", 400
            )
        if not code:
            return _html("Sign-in cancelled", "<p>You did not sign in. Nothing was done.</p>", 400)
        try:
            person = await self._sign_in.finish(code, pending.started)
        except SignInFailed as e:
            logger.info("an approver's sign-in failed (%s)", e)
            return _html("Sign-in failed", f"<p>{html.escape(str(e))} Nothing was done.</p>", 400)
        session_id = secrets.token_urlsafe(32)
        _make_room(self._sessions, pending.page_digest, self._pages.now())
        self._sessions[_digest(session_id)] = _Session(
            person,
            oauth_principal(self._sign_in.issuer, person.subject, self._principal_key),
            pending.page_digest,
            self._pages.now() + _SIGN_IN_SECONDS,
        )
        response = RedirectResponse(pending.path, status_code=303, headers=_HEADERS)
        response.headers.append("set-cookie", self._cookie(SESSION_COOKIE, session_id, "Lax"))
        response.headers.append("set-cookie", self._cookie(STATE_COOKIE, "", "Lax", max_age=0))
        return response

    def _session(self, cookies: dict[str, str], secret: str) -> _Session | None:
        session = self._sessions.get(_digest(cookies.get(SESSION_COOKIE, "")))
        if session is None or session.until < self._pages.now():
            return None
        # A sign-in answers the one page it was made for.
        return session if hmac.compare_digest(session.page_digest, _digest(secret)) else None

    # ------------------------------------------------------------ the page

    async def _page(
        self, scope: Scope, receive: Receive, path: str, headers: dict[str, str], cookies: dict[str, str]
    ) -> Response:
        secret = path[len(PAGE_PATH) :]
        entry = self._pages.entry(secret)
        if entry is None:
            return _html("Not found", "<p>There is no such question here.</p>", 404)
        method = scope["method"]
        if method not in ("GET", "POST"):
            return _not_allowed()
        session = self._session(cookies, secret)
        body: bytes | None = None
        if method == "POST":
            if not self._same_origin(headers):
                return _html("Refused", "<p>This form only accepts answers from its own page.</p>", 403)
            body = await _read_body(receive)
            if session is None:
                return _html(
                    "Sign in first", "<p>Open the approval link to sign in. Nothing was done.</p>", 403
                )
        elif session is None:
            return await self._to_sign_in(path)
        assert session is not None
        person = session.person
        caller = entry.asking.principal if entry.asking is not None else None
        is_caller = caller is not None and hmac.compare_digest(session.principal, caller)
        said = verdict(person, is_caller=is_caller, approvers=self._approvers, four_eyes=entry.four_eyes)
        approver = Approver(person.subject, person.shown, other_than_caller=not is_caller)
        if said != "allowed":
            if entry.asking is not None and person.subject not in entry.refused:
                entry.refused.add(person.subject)
                try:
                    entry.asking.refused(approver)
                except Exception:
                    logger.warning("a refused answer could not be audited")
            who = list(who_may_answer(self._approvers, four_eyes=entry.four_eyes))
            text = render_refused(
                entry.page.question,
                who=who,
                signed_in=person.shown,
                four_eyes=said == "four_eyes",
                forge=_FORGE,
            )
            return HTMLResponse(text, status_code=403, headers=_HEADERS)
        now = self._pages.now()
        if method == "POST":
            form = read_form(body) if body is not None else None
            if form is not None:
                self._pages.decide(entry, form, cookies.get(CSRF_COOKIE), approver)
        outcome = entry.page.seen_at(now)
        response = HTMLResponse(
            render(entry.page, path, outcome, server=_SERVER, forge=_FORGE, signed_in=person.shown),
            headers=_HEADERS,
        )
        if method == "GET":
            # The decision's CSRF cookie stays Strict: only this origin's own form sends it.
            response.headers.append(
                "set-cookie", self._cookie(CSRF_COOKIE, entry.page.csrf, "Strict", path=path)
            )
        return response

    def _same_origin(self, headers: dict[str, str]) -> bool:
        origin = headers.get("origin")
        if origin is not None and origin.lower() != self._origin.lower():
            return False
        return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")

    def _cookie(
        self, name: str, value: str, same_site: str, *, path: str = PAGE_PATH, max_age: int = 900
    ) -> str:
        secure = "; Secure" if self._secure else ""
        return f"{name}={value}; Path={path}; HttpOnly; SameSite={same_site}; Max-Age={max_age}{secure}"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def _html(title: str, body: str, status: int) -> HTMLResponse:
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers=_HEADERS)


def _not_allowed() -> Response:
    response = _html("Not allowed", "<p>Use the page's form.</p>", 405)
    response.headers["allow"] = "GET, POST"
    return response


def _cookies(header: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        found.setdefault(name, value)
    return found


async def _read_body(receive: Receive) -> bytes | None:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return None
        if not message.get("more_body", False):
            return bytes(body)
