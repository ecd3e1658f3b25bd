"""The approval page in stdio: single-use pages on 127.0.0.1, served by a small h11 server started at
the first question, and opened in the person's browser by the standard library's `webbrowser`
(the ApprovalPages port; the page's rules are domain/guard/approval_page.py; ADR 0063).

The link is `http://127.0.0.1:PORT/approve/<secret>`, a 256-bit secret kept only as its digest (it is
derived from the page's id under a key held in memory, so a 2026-07-28 retry can offer the same link).
It is never logged, and never reaches the MCP client: the browser gets it from a child process,
through that child's environment (not its command line). `webbrowser` runs a `$BROWSER` or console
browser as its own child and may wait for it; it would inherit stdin and stdout, which are the
JSON-RPC pipe, so the opener runs in a child whose stdin is /dev/null and whose stdout is the
server's stderr, off the event loop. A console-only browser (lynx, w3m, links), `webbrowser.Error`
or a False answer mean no browser.
"""

import base64
import hashlib
import hmac
import logging
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import anyio
import h11

from domain.guard.approval_page import (
    CSRF_COOKIE,
    MAX_FORM_BYTES,
    OPEN_THE_PAGE,
    PAGE_PATH,
    Collected,
    Page,
    read_form,
    render,
)
from ports.approval_pages import Approver, Asking, Offered, PageOpener, Shown
from ports.progress import Progress

logger = logging.getLogger(__name__)

_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"same-origin"),  # not no-referrer: the form post would then say `Origin: null`
    (b"x-content-type-options", b"nosniff"),
]
_SERVER, _FORGE = "woodpecker-ci-mcp", "Woodpecker CI"
_READ_SECONDS = 10.0
_MAX_HEAD_BYTES = 16 * 1024
_OPENER_SECONDS = 10.0
# A page, once decided or expired, still says so to a reload for this long.
_KEEP_SECONDS = 600.0
_CONSOLE_BROWSERS = frozenset({"lynx", "w3m", "links", "elinks", "www-browser", "browsh"})

# The child that opens the browser. Exit 0: opened; 3: no browser; 4: console-only; 5: it said no.
_OPENER = """
import os, sys, webbrowser
url = os.environ.pop("OPEN_THIS_APPROVAL_PAGE", "")
try:
    browser = webbrowser.get()
except webbrowser.Error:
    sys.exit(3)
name = os.path.basename((getattr(browser, "name", "") or "").split(" ")[0])
if name in CONSOLE:
    sys.exit(4)
if not url:
    sys.exit(0)
sys.exit(0 if browser.open(url, new=2) else 5)
"""


def _run_opener(url: str) -> bool:
    """Run the opener child; True when a browser took the page (or is still starting with it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOODPECKER")}
    env["OPEN_THIS_APPROVAL_PAGE"] = url
    code = _OPENER.replace("CONSOLE", repr(sorted(_CONSOLE_BROWSERS)))
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno(),
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
    except OSError:
        return False
    try:
        return child.wait(timeout=_OPENER_SECONDS) == 0
    except subprocess.TimeoutExpired:
        # A browser run in the foreground (`$BROWSER=firefox`) keeps its opener waiting: it is
        # showing the page. Reaped when it ends.
        _STILL_RUNNING.append(child)
        return bool(url)


_STILL_RUNNING: list[subprocess.Popen[bytes]] = []


def _could_have_a_browser() -> bool:
    """Whether `webbrowser` could find a graphical browser or `$BROWSER` here. On Linux and the BSDs,
    without a display and without `$BROWSER`, it finds console browsers at most."""
    if sys.platform in ("darwin", "win32") or os.environ.get("BROWSER"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class BrowserApprovalPages:
    """The ApprovalPages port: pages by key, their server, and the browser opener."""

    def __init__(
        self,
        *,
        window_seconds: float = 45.0,
        opener: Callable[[str], bool] = _run_opener,
        now: Callable[[], float] = time.monotonic,
        poll_seconds: float = 0.05,
    ) -> None:
        self.window_seconds = window_seconds
        self._opener = opener
        self._now = now
        self._poll = poll_seconds
        self._by_key: dict[str, Page] = {}
        self._by_digest: dict[str, tuple[Page, float]] = {}
        self._server: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._port: int | None = None
        self._browser: bool | None = None
        self._changed = anyio.Event()
        self._link_key = secrets.token_bytes(32)

    async def available(self) -> bool:
        if self._browser is None and not _could_have_a_browser():
            self._browser = False  # no child to start: a desktop-less machine has only console browsers
        if self._browser is None:
            # The probe opens nothing: it only asks `webbrowser` which browser it would use.
            self._browser = await anyio.to_thread.run_sync(self._opener, "")
        return self._browser

    async def show(
        self,
        key: str,
        question: str,
        ttl_seconds: int,
        via: PageOpener | None = None,
        asking: Asking | None = None,
    ) -> Shown:
        if self._pending(key) is not None:
            return "shown"
        await self._serve()
        page = self._new_page(key, question, ttl_seconds)
        url = self._url(page)
        if via is not None:
            offered = await via.open(url, question + OPEN_THE_PAGE)
            if offered != "opened":
                await self.withdraw(key)
                return offered
            return "shown"
        if not await anyio.to_thread.run_sync(self._opener, url):
            await self.withdraw(key)
            self._browser = False
            return "unavailable"
        return "shown"

    async def offer(
        self, key: str, question: str, ttl_seconds: int, asking: Asking | None = None
    ) -> Offered | None:
        page = self._pending(key)
        if page is None:
            try:
                await self._serve()
            except OSError:
                logger.warning("the approval page's server could not start")
                return None
            page = self._new_page(key, question, ttl_seconds)
        return Offered(self._url(page), hashlib.sha256(page.public_id.encode()).hexdigest()[:32])

    async def withdraw(self, key: str) -> None:
        page = self._by_key.pop(key, None)
        if page is not None:
            page.withdraw(self._now())
            self._changed.set()
            self._changed = anyio.Event()

    def _pending(self, key: str) -> Page | None:
        """The page of `key` no call has collected yet, if any: still waiting (a retry waits on it: no
        second tab), or decided between two calls (the next one collects that decision; a new page in
        its place would lose the person's answer and open a second tab)."""
        page = self._by_key.get(key)
        if page is not None and not page.collected:
            page.seen_at(self._now())
            return page
        return None

    def _new_page(self, key: str, question: str, ttl_seconds: int) -> Page:
        now = self._now()
        page = Page(
            public_id=secrets.token_urlsafe(12),
            csrf=secrets.token_urlsafe(32),
            question=question,
            expires_at=now + ttl_seconds,
        )
        self._by_key[key] = page
        self._by_digest[_digest(self._secret(page))] = (page, now + ttl_seconds + _KEEP_SECONDS)
        return page

    def _secret(self, page: Page) -> str:
        """The link's 256-bit secret: derived from the page's id under a key that never leaves this
        process's memory, so that only its digest is kept and a retry can offer the same link again."""
        mac = hmac.new(self._link_key, page.public_id.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def _url(self, page: Page) -> str:
        return f"http://127.0.0.1:{self._port}{PAGE_PATH}{self._secret(page)}"

    async def wait(self, key: str, window_seconds: float, progress: Progress | None) -> Collected:
        page = self._by_key.get(key)
        if page is None:
            return "expired"
        start, next_report = self._now(), 5.0
        collected: Collected = "pending"
        with anyio.move_on_after(window_seconds):
            while (collected := page.collect(self._now())) == "pending" and not page.collected:
                if progress is not None and self._now() - start >= next_report:
                    await progress.report(
                        next_report, window_seconds, "Waiting for the person's answer in the browser"
                    )
                    next_report += 5.0
                with anyio.move_on_after(self._poll):
                    await self._changed.wait()
        if collected == "pending" and not page.collected:
            collected = page.collect(self._now())  # decided in the window's last instant
        if collected != "pending" or page.collected:
            # Decided (or collected by another call of the same key): a retry opens a new page.
            self._by_key.pop(key, None)
        return collected

    def decided_by(self, key: str) -> Approver | None:
        return None  # on 127.0.0.1 nobody signs in: the person at this machine answers

    # ------------------------------------------------------------------ the server

    async def _serve(self) -> None:
        if self._server is not None:
            return
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self._server = listener
        self._port = listener.extra(anyio.abc.SocketAttribute.local_port)
        _spawn(listener, self._connection)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with anyio.move_on_after(_READ_SECONDS):
                await self._one_request(stream)

    async def _one_request(self, stream: anyio.abc.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD_BYTES)
        request: h11.Request | None = None
        body = b""
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:
                return
            if event is h11.NEED_DATA:
                try:
                    conn.receive_data(await stream.receive(65536))
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    conn.receive_data(b"")
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_FORM_BYTES:
                    await _send(stream, conn, 413, b"Too large.", [])
                    return
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.PAUSED:
                break
        if request is None:
            return
        status, html_text, extra = self._answer(request, body)
        await _send(stream, conn, status, html_text.encode("utf-8"), extra)

    def _answer(self, request: h11.Request, body: bytes) -> tuple[int, str, list[tuple[bytes, bytes]]]:
        target = request.target.decode("ascii", "replace")
        found = (
            self._by_digest.get(_digest(target[len(PAGE_PATH) :])) if target.startswith(PAGE_PATH) else None
        )
        now = self._now()
        if found is None or found[1] < now:
            return 404, "<!doctype html><title>Not found</title><p>There is no such question here.", []
        page = found[0]
        headers = {k.lower(): v for k, v in request.headers}
        if request.method == b"GET":
            outcome = page.seen_at(now)
            cookie = (
                b"set-cookie",
                f"{CSRF_COOKIE}={page.csrf}; Path={target}; HttpOnly; SameSite=Strict".encode("ascii"),
            )
            return 200, render(page, target, outcome, server=_SERVER, forge=_FORGE), [cookie]
        if request.method != b"POST":
            return 405, "<!doctype html><title>Not allowed</title>", []
        origin = headers.get(b"origin")
        own = f"http://127.0.0.1:{self._port}".encode("ascii")
        form = read_form(body)
        if (origin is None or origin == own) and form is not None:
            outcome = page.post(form, _cookie(headers.get(b"cookie")), now)
            self._changed.set()
            self._changed = anyio.Event()
        else:
            outcome = page.seen_at(now)
        return 200, render(page, target, outcome, server=_SERVER, forge=_FORGE), []


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def _cookie(raw: bytes | None) -> str | None:
    for part in (raw or b"").decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == CSRF_COOKIE:
            return value
    return None


async def _send(
    stream: anyio.abc.SocketStream,
    conn: h11.Connection,
    status: int,
    body: bytes,
    extra: list[tuple[bytes, bytes]],
) -> None:
    headers = [*_HEADERS, *extra, (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    try:
        await stream.send(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
        await stream.send(conn.send(h11.Data(data=body)) or b"")
        await stream.send(conn.send(h11.EndOfMessage()) or b"")
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, h11.LocalProtocolError):
        pass


def _spawn(
    listener: anyio.abc.Listener[anyio.abc.SocketStream],
    handler: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> None:
    """Serve `listener` for the rest of the process's life, beside the stdio session."""
    import asyncio

    async def serve() -> None:
        try:
            await listener.serve(handler)
        except Exception:
            logger.warning("the approval page's server stopped; guarded calls fall back to the token")

    _TASKS.add(asyncio.get_running_loop().create_task(serve()))


_TASKS: set[object] = set()
