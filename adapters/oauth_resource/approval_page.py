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

import asyncio
import base64
import hashlib
import hmac
import html
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.oauth_resource.gate import oauth_principal
from adapters.oauth_resource.page_store import MemoryPageStore, PageStore
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
from domain.guard.audit import signed_by
from domain.parsing.urls import split_url
from ports.approval_notices import ApprovalNotices, Ended, Notice
from ports.approval_pages import Approver, Asking, Offered, PageOpener, Shown
from ports.audit import AuditSink
from ports.progress import Progress
from ports.token_store import TokenStoreUnavailable

logger = logging.getLogger(__name__)

CALLBACK_PATH = PAGE_PATH + "signed-in"
STATE_COOKIE = "mcp_approval_sign_in"
SESSION_COOKIE = "mcp_approval_session"
_SERVER, _FORGE = "woodpecker-ci-mcp", "Woodpecker CI"
_KEEP_SECONDS = 600.0
_SIGN_IN_SECONDS = 600.0
_MAX_SIGN_INS = 1000
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
    """A page as one request sees it: read from the store, changed only through `decide` and `refuse`."""

    digest: str
    page: Page
    key: str
    asking: Asking | None
    principal: str | None
    four_eyes: bool
    line: Mapping[str, object] | None


def _page_of(record: dict[str, Any]) -> Page:
    p = record["page"]
    return Page(
        public_id=p["public_id"],
        csrf=p["csrf"],
        question=p["question"],
        expires_at=float(p["expires_at"]),
        outcome=p["outcome"],
        collected=bool(p["collected"]),
        decided_at=p["decided_at"],
    )


def _keep_page(record: dict[str, Any], page: Page) -> None:
    record["page"] = {
        "public_id": page.public_id,
        "csrf": page.csrf,
        "question": page.question,
        "expires_at": page.expires_at,
        "outcome": page.outcome,
        "collected": page.collected,
        "decided_at": page.decided_at,
    }


def _approver_of(record: dict[str, Any]) -> Approver | None:
    found = record.get("approver")
    if not isinstance(found, dict):
        return None
    return Approver(str(found["subject"]), str(found["name"]), bool(found["other"]))


class SignedInApprovalPages:
    """The ApprovalPages port over HTTP: pages by key, offered through the client, answered signed in.

    `store`: where pages and sign-ins are kept (this process's memory by default; Redis so that every
    replica sharing it serves every page, ADR 0085). `link_key`: derives a page's link secret from its
    id; replicas that share pages must share it (the container derives it from the seal keys). `audit`:
    where a refused answer is recorded when the page was asked on another replica (the asking replica
    records it through the asking call otherwise).
    """

    def __init__(
        self,
        *,
        public_origin: str,
        four_eyes: frozenset[str] = frozenset(),
        window_seconds: float = 45.0,
        now: Callable[[], float] = time.monotonic,
        poll_seconds: float = 0.05,
        store: PageStore | None = None,
        link_key: bytes | None = None,
        audit: AuditSink | None = None,
        notices: ApprovalNotices | None = None,
    ) -> None:
        self.public_origin = public_origin.rstrip("/")
        self.four_eyes = four_eyes
        self.window_seconds = window_seconds
        self.now = now
        self._poll = poll_seconds
        self.store: PageStore = store if store is not None else MemoryPageStore()
        self._asking: OrderedDict[str, Asking] = OrderedDict()  # the pages this process asked, by digest
        self._decided: dict[str, Approver] = {}
        self._changed = anyio.Event()
        self._link_key = link_key if link_key is not None else secrets.token_bytes(32)
        self._audit = audit
        self._notices = notices
        self._watching: set[asyncio.Task[None]] = set()

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
        page = await self._pending(key) or await self._new_page(key, question, ttl_seconds, asking)
        offered = await via.open(self._url(page), question + OPEN_THE_PAGE)
        if offered != "opened":
            await self.withdraw(key)
        return "shown" if offered == "opened" else offered

    async def offer(
        self, key: str, question: str, ttl_seconds: int, asking: Asking | None = None
    ) -> Offered | None:
        page = await self._pending(key) or await self._new_page(key, question, ttl_seconds, asking)
        return Offered(self._url(page), hashlib.sha256(page.public_id.encode()).hexdigest()[:32])

    async def withdraw(self, key: str) -> None:
        digest = await self.store.page_for(key)
        if digest is None:
            return
        now = self.now()

        def withdrawn(record: dict[str, Any]) -> None:
            page = _page_of(record)
            page.withdraw(now)
            _keep_page(record, page)

        await self.store.change(digest, withdrawn)
        await self.store.forget_key(key, digest)
        await self._tell_ended(digest, "declined")
        self.changed()

    def decided_by(self, key: str) -> Approver | None:
        return self._decided.pop(key, None)

    async def wait(self, key: str, window_seconds: float, progress: Progress | None) -> Collected:
        digest = await self.store.page_for(key)
        if digest is None:
            return "expired"
        start, next_report = self.now(), 5.0
        collected: Collected = "pending"

        def collect(record: dict[str, Any]) -> tuple[Collected, bool, Approver | None]:
            page = _page_of(record)
            taken = page.collect(self.now())
            _keep_page(record, page)
            return taken, page.collected, _approver_of(record)

        async def once() -> bool:
            # One atomic collect: of all the replicas waiting on this page, one takes its decision.
            nonlocal collected
            found = await self.store.change(digest, collect)
            if found is None:
                collected = "expired"
                return True
            collected, is_collected, approver = found
            if collected in ("approved", "declined") and approver is not None:
                self._decided[key] = approver
            return collected != "pending" or is_collected

        done = False
        with anyio.move_on_after(window_seconds):
            while not (done := await once()):
                if progress is not None and self.now() - start >= next_report:
                    await progress.report(next_report, window_seconds, "Waiting for the approver's answer")
                    next_report += 5.0
                with anyio.move_on_after(self._poll):
                    await self._changed.wait()
        if not done:
            with anyio.CancelScope(shield=True):
                done = await once()  # decided in the window's last instant
        if done:
            await self.store.forget_key(key, digest)
            if collected != "pending":
                await self._tell_ended(digest, collected)
        return collected

    # ------------------------------------------------------------ for the page's app

    def changed(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def entry(self, secret: str) -> _Entry | None:
        digest = _digest(secret)
        record = await self.store.page(digest)
        if record is None or float(record["keep_until"]) < self.now():
            return None
        line = record.get("line")
        return _Entry(
            digest,
            _page_of(record),
            str(record["key"]),
            self._asking.get(digest),
            record.get("principal"),
            bool(record["four_eyes"]),
            line if isinstance(line, dict) else None,
        )

    async def decide(
        self, entry: _Entry, form: dict[str, str], cookie: str | None, approver: Approver
    ) -> None:
        """Apply one post of a person allowed to answer; the first valid one decides, by `approver`."""
        now = self.now()

        def post(record: dict[str, Any]) -> bool:
            page = _page_of(record)
            before = page.seen_at(now)
            after = page.post(form, cookie, now)
            _keep_page(record, page)
            if before == "pending" and after != "pending":
                record["approver"] = {
                    "subject": approver.subject,
                    "name": approver.name,
                    "other": approver.other_than_caller,
                }
                return True
            return False

        decided = await self.store.change(entry.digest, post)
        found = await self.store.page(entry.digest)
        if found is not None:
            entry.page = _page_of(found)
        if decided:
            self.changed()

    async def refuse(self, entry: _Entry, approver: Approver) -> None:
        """Record, once per person, that `approver` may not answer this page: through the asking call
        when this process asked it, else as that call's own refused line."""

        def add(record: dict[str, Any]) -> bool:
            refused = list(record.get("refused") or [])
            if approver.subject in refused:
                return False
            record["refused"] = [*refused, approver.subject]
            return True

        if not await self.store.change(entry.digest, add):
            return
        try:
            if entry.asking is not None:
                entry.asking.refused(approver)
            elif entry.line is not None and self._audit is not None:
                self._audit.record(
                    signed_by(
                        entry.line,
                        now=time.time(),
                        approver=(approver.subject, approver.name),
                        four_eyes=approver.other_than_caller,
                    )
                )
        except Exception:
            logger.warning("a refused answer could not be audited")

    async def _pending(self, key: str) -> Page | None:
        digest = await self.store.page_for(key)
        record = await self.store.page(digest) if digest is not None else None
        if record is None:
            return None
        page = _page_of(record)
        # Still waiting, or decided between two calls: the next call collects it (a new page in its
        # place would lose the approver's answer).
        return None if page.collected else page

    async def _new_page(self, key: str, question: str, ttl_seconds: int, asking: Asking | None) -> Page:
        now = self.now()
        page = Page(
            public_id=secrets.token_urlsafe(12),
            csrf=secrets.token_urlsafe(32),
            question=question,
            expires_at=now + ttl_seconds,
        )
        digest = _digest(self._secret(page))
        record: dict[str, Any] = {
            "key": key,
            "principal": asking.principal if asking is not None else None,
            "four_eyes": asking is not None and asking.tool in self.four_eyes,
            "keep_until": now + ttl_seconds + _KEEP_SECONDS,
            "refused": [],
            "approver": None,
            "line": dict(asking.line) if asking is not None and asking.line is not None else None,
        }
        record["tool"] = asking.tool if asking is not None else None
        record["told"] = False
        _keep_page(record, page)
        await self.store.put_page(digest, key, record, now + ttl_seconds + _KEEP_SECONDS)
        if self._notices is not None and asking is not None:
            self._notices.waiting(self._notice(record))
            self._watch(digest, ttl_seconds)
        if asking is not None:
            self._asking[digest] = asking
            while len(self._asking) > _MAX_SIGN_INS:
                self._asking.popitem(last=False)
        return page

    def _notice(self, record: dict[str, Any]) -> Notice:
        page = _page_of(record)
        return Notice(
            tool=str(record.get("tool") or ""),
            page_id=hashlib.sha256(page.public_id.encode()).hexdigest()[:32],
            url=self._url(page),
            expires_in_seconds=max(0, int(page.expires_at - self.now())),
            four_eyes=bool(record["four_eyes"]),
        )

    async def _tell_ended(self, digest: str, how: Ended) -> None:
        """Tell the approvers once that the page of `digest` ended (a no when it expired)."""
        if self._notices is None:
            return

        def mark(record: dict[str, Any]) -> dict[str, Any] | None:
            if record.get("told") is not False or not record.get("tool"):
                return None
            record["told"] = True
            return dict(record)

        try:
            record = await self.store.change(digest, mark)
        except TokenStoreUnavailable:
            logger.warning("the approvers could not be told that a question ended (the store is unreachable)")
            return
        if record is not None:
            self._notices.ended(self._notice(record), how)

    def _watch(self, digest: str, ttl_seconds: int) -> None:
        """Expiry is a no nobody gave: when the page's life ends unanswered, the approvers are told."""

        async def expire() -> None:
            await anyio.sleep(ttl_seconds + 0.5)
            found = await self.store.page(digest)
            if found is not None and _page_of(found).seen_at(self.now()) == "expired":
                await self._tell_ended(digest, "expired")

        try:
            task = asyncio.get_running_loop().create_task(expire())
        except RuntimeError:
            return
        self._watching.add(task)
        task.add_done_callback(self._watching.discard)

    def _secret(self, page: Page) -> str:
        mac = hmac.new(self._link_key, page.public_id.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def _url(self, page: Page) -> str:
        return f"{self.public_origin}{PAGE_PATH}{self._secret(page)}"


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
        # Sign-ins under way and signed-in sessions live where the pages do (one replica's return
        # from the provider may reach another).
        self._store = pages.store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith(PAGE_PATH):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        cookies = _cookies(headers.get("cookie", ""))
        try:
            if path == CALLBACK_PATH:
                response = (
                    await self._returned(scope, cookies) if scope["method"] == "GET" else _not_allowed()
                )
            else:
                response = await self._page(scope, receive, path, headers, cookies)
        except TokenStoreUnavailable:
            logger.warning("the approval pages' store could not be reached")
            response = _html(
                "Unavailable", "<p>The approval pages' store could not be reached. Nothing was done.</p>", 503
            )
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
        until = self._pages.now() + _SIGN_IN_SECONDS
        record = {
            "url": started.url,
            "state": started.state,
            "code_verifier": started.code_verifier,
            "nonce": started.nonce,
            "page_digest": _digest(path[len(PAGE_PATH) :]),
            "path": path,
            "until": until,
        }
        await self._store.put("sign-in", _digest(started.state), record, until)
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
        pending = await self._store.take("sign-in", _digest(state)) if state else None
        if (
            pending is None
            or not hmac.compare_digest(cookie, state)
            or float(pending["until"]) < self._pages.now()
        ):
            return _html(
                "Sign-in not recognised", "<p>Open the approval link again. Nothing was done.</p>", 400
            )
        if not code:
            return _html("Sign-in cancelled", "<p>You did not sign in. Nothing was done.</p>", 400)
        try:
            started = Started(pending["url"], pending["state"], pending["code_verifier"], pending["nonce"])
            person = await self._sign_in.finish(code, started)
        except SignInFailed as e:
            logger.info("an approver's sign-in failed (%s)", e)
            return _html("Sign-in failed", f"<p>{html.escape(str(e))} Nothing was done.</p>", 400)
        session_id = secrets.token_urlsafe(32)
        until = self._pages.now() + _SIGN_IN_SECONDS
        session = {
            "subject": person.subject,
            "email": person.email,
            "name": person.name,
            "groups": sorted(person.groups),
            "principal": oauth_principal(self._sign_in.issuer, person.subject, self._principal_key),
            "page_digest": pending["page_digest"],
            "until": until,
        }
        await self._store.put("session", _digest(session_id), session, until)
        response = RedirectResponse(str(pending["path"]), status_code=303, headers=_HEADERS)
        response.headers.append("set-cookie", self._cookie(SESSION_COOKIE, session_id, "Lax"))
        response.headers.append("set-cookie", self._cookie(STATE_COOKIE, "", "Lax", max_age=0))
        return response

    async def _session(self, cookies: dict[str, str], secret: str) -> tuple[SignedIn, str] | None:
        """The person signed in for this page, and their principal."""
        cookie = cookies.get(SESSION_COOKIE, "")
        session = await self._store.get("session", _digest(cookie)) if cookie else None
        if session is None or float(session["until"]) < self._pages.now():
            return None
        # A sign-in answers the one page it was made for.
        if not hmac.compare_digest(str(session["page_digest"]), _digest(secret)):
            return None
        person = SignedIn(
            str(session["subject"]),
            session["email"],
            str(session["name"]),
            frozenset(str(g) for g in session["groups"]),
        )
        return person, str(session["principal"])

    # ------------------------------------------------------------ the page

    async def _page(
        self, scope: Scope, receive: Receive, path: str, headers: dict[str, str], cookies: dict[str, str]
    ) -> Response:
        secret = path[len(PAGE_PATH) :]
        entry = await self._pages.entry(secret)
        if entry is None:
            return _html("Not found", "<p>There is no such question here.</p>", 404)
        method = scope["method"]
        if method not in ("GET", "POST"):
            return _not_allowed()
        session = await self._session(cookies, secret)
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
        person, principal = session
        caller = entry.principal
        is_caller = caller is not None and hmac.compare_digest(principal, caller)
        said = verdict(person, is_caller=is_caller, approvers=self._approvers, four_eyes=entry.four_eyes)
        approver = Approver(person.subject, person.shown, other_than_caller=not is_caller)
        if said != "allowed":
            await self._pages.refuse(entry, approver)
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
                await self._pages.decide(entry, form, cookies.get(CSRF_COOKIE), approver)
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
