"""Streamable HTTP for the MCP server, both protocol eras: stateful 2025-11-25 sessions (so a dialog can be pushed), sessionless 2026-07-28 requests, Host/Origin checks on, a body limit, and each session bound to the principal that opened it.

Only a 2025-11-25 session whose client declared form elicitation (on a server that asks)
can ever be pushed a question, so only such sessions answer a POST with an SSE stream;
every other request (all of 2026-07-28, and 2025-11-25 sessions that cannot be asked) gets
one plain JSON body, which costs the server less per call (docs/adr/0021).
"""

import json
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.parsing.urls import is_same_loopback_origin
from domain.toolsets import TOOLSETS_HEADER

PRINCIPAL_SCOPE_KEY = "woodpecker_mcp.principal"
SESSION_HEADER = b"mcp-session-id"
PROTOCOL_HEADER = b"mcp-protocol-version"
# Headers whose first copy the SDK or the toolsets filter would read: a repeat is a 400.
SINGLE_HEADERS = frozenset({SESSION_HEADER, PROTOCOL_HEADER, TOOLSETS_HEADER.lower().encode("latin-1")})

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
LOOPBACK_ORIGINS = tuple(
    f"{scheme}://{host}{port}"
    for scheme in ("http", "https")
    for host in LOOPBACK_HOSTS
    for port in ("", ":*")
)
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_SESSION_IDLE_SECONDS = 1800.0
DEFAULT_MAX_SESSIONS = 1000


class _Refused:
    """`_make_room`'s answer when the opener must be refused: the largest holder has no session to close."""


_REFUSED = _Refused()


class SessionOwners:
    """Refuses a 2025-11-25 session id presented by anyone but the principal that opened it.

    A session id is a bearer of its own (it receives the session's pushed questions); without
    this, one authenticated caller who learned another's id could ride that session. Every
    session is opened through here, so an id this map does not hold was never opened or has
    been forgotten: it is refused too (fail closed). An id is forgotten when its session ends
    (a DELETE answered, or the SDK no longer knowing it), or to make room.

    Each session manager holds at most `capacity` sessions and refuses the next opener while
    it is full, so room is made here first, as the token store makes it (docs/adr/0058): the
    least recently used session of the principal holding the most in that manager (the
    opener's own when tied) is closed in the SDK and forgotten. A principal's openings under
    way count as its own: when the one holding the most has no session to close yet, the
    opener is refused (503) instead. One caller's flood of sessions then ends only its own,
    never another's that holds fewer. Its client opens a new session, as it would after the
    SDK's idle timeout.

    With `plain` given, requests are split between two session managers: `app` (SSE
    responses, for sessions that may be pushed a question) and `plain` (JSON responses).
    A 2026-07-28 request goes to `plain`; a presented session to the manager that opened
    it; a request opening a session to `app` only when `pushes(body)` says its client can
    be asked (the body is read here, so `max_body_bytes` bounds it).
    """

    def __init__(
        self,
        app: ASGIApp,
        capacity: int,
        *,
        plain: ASGIApp | None = None,
        pushes: Callable[[bytes], bool] | None = None,
        max_body_bytes: int = 1024 * 1024,
    ) -> None:
        self._app = app
        self._capacity = capacity
        self._plain = plain
        self._pushes = pushes
        self._max_body_bytes = max_body_bytes
        self._owners: OrderedDict[str, tuple[object, ASGIApp]] = OrderedDict()
        # Per manager: the sessions remembered, and the openings under way (by opener too).
        self._held: Counter[ASGIApp] = Counter()
        self._opening: Counter[ASGIApp] = Counter()
        self._opening_by: Counter[tuple[ASGIApp, object]] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        sessions = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == SESSION_HEADER]
        protocols = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == PROTOCOL_HEADER]
        names = [k.lower() for k, _ in scope["headers"] if k.lower() in SINGLE_HEADERS]
        if len(names) != len(set(names)):
            # The SDK and the toolsets filter read the first of repeated headers: checking any one
            # of them here would let a caller present its own session (or narrowing) to this gate
            # or a proxy and another to the server.
            await JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Repeated MCP header"}},
                status_code=400,
            )(scope, receive, send)
            return
        presented = sessions[0] if sessions else None
        protocol = protocols[0] if protocols else None
        if presented is not None:
            owner = self._owners.get(presented)
            if owner is None or owner[0] != principal:
                # The same answer as for a session that does not exist: nothing is confirmed.
                await JSONResponse(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}},
                    status_code=404,
                )(scope, receive, send)
                return
            self._owners.move_to_end(presented)
            closing = scope.get("method") == "DELETE"

            async def forget_ended_session(message: Message) -> None:
                # Closed by its client, or already ended in the SDK (idle): its id goes too.
                if message["type"] == "http.response.start" and (
                    message["status"] == 404 or (closing and message["status"] < 300)
                ):
                    self._forget(presented)
                await send(message)

            await owner[1](scope, receive, forget_ended_session)
            return
        target = self._app
        if self._plain is not None:
            if protocol is not None and protocol not in HANDSHAKE_PROTOCOL_VERSIONS:
                # 2026-07-28: sessionless, and a question travels in the result (input_required).
                await self._plain(scope, receive, send)
                return
            body, receive = await _peek_body(receive, self._max_body_bytes)
            if body is None or self._pushes is None or not self._pushes(body):
                target = self._plain

        async def remember_new_session(message: Message) -> None:
            # The SDK names a session in its answer to any request without one, and drops it
            # again when that answer is an error: only an opened session is remembered.
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", []):
                    if key.lower() == SESSION_HEADER:
                        self._remember(value.decode("latin-1"), principal, target)
            await send(message)

        # The books are kept before any await, so openers arriving together cannot overfill them.
        full = self._held[target] + self._opening[target] >= self._capacity
        ending = self._make_room(target, principal) if full else None
        if isinstance(ending, _Refused):
            await JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32603, "message": "Too many open sessions"},
                },
                status_code=503,
            )(scope, receive, send)
            return
        self._opening[target] += 1
        self._opening_by[target, principal] += 1
        try:
            if ending is not None:
                await _close_session(target, ending, scope)
            await target(scope, receive, remember_new_session)
        finally:
            self._opening[target] -= 1
            self._opening_by[target, principal] -= 1
            if not self._opening_by[target, principal]:
                del self._opening_by[target, principal]

    def _remember(self, session_id: str, principal: object, app: ASGIApp) -> None:
        self._forget(session_id)
        self._owners[session_id] = (principal, app)
        self._held[app] += 1

    def _forget(self, session_id: str) -> None:
        owner = self._owners.pop(session_id, None)
        if owner is not None:
            self._held[owner[1]] -= 1

    def _make_room(self, app: ASGIApp, opener: object) -> str | _Refused | None:
        """Forgets, and names for closing, the least recently used session of whoever holds the most
        in `app` (the opener when tied), its openings under way counted as its own; `_REFUSED` when
        that principal has no session to close yet (its openings fill `app`), so that another's is
        never closed for them; None when `app` holds nothing at all."""
        held = Counter(principal for principal, each in self._owners.values() if each is app)
        for (each, principal), count in self._opening_by.items():
            if each is app:
                held[principal] += count
        if not held:
            return None
        most = max(held.values())
        ending: str | _Refused = next(
            (
                session_id
                for session_id, (principal, each) in self._owners.items()
                if each is app and held[principal] == most and (held[opener] < most or principal == opener)
            ),
            _REFUSED,
        )
        if isinstance(ending, str):
            self._forget(ending)
        return ending


async def _close_session(app: ASGIApp, session_id: str, opener: Scope) -> None:
    """Ends `session_id` in its SDK manager as its client's DELETE would; the answer goes nowhere."""
    hosts = [(k, v) for k, v in opener["headers"] if k.lower() == b"host"]
    scope = {
        **opener,
        "method": "DELETE",
        "query_string": b"",
        "headers": [*hosts, (SESSION_HEADER, session_id.encode("latin-1"))],
    }
    asked = False

    async def receive() -> Message:
        nonlocal asked
        if asked:
            return {"type": "http.disconnect"}
        asked = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def discard(message: Message) -> None:
        return None

    await app(scope, receive, discard)


async def _peek_body(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The whole request body (None past `limit` or on a disconnect) and a `receive` that replays what was read."""
    seen: list[Message] = []
    size = 0
    complete = False
    while size <= limit:
        message = await receive()
        seen.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            complete = True
            break

    async def replay() -> Message:
        return seen.pop(0) if seen else await receive()

    if not complete or size > limit:
        return None, replay
    return b"".join(m.get("body", b"") for m in seen), replay


def opening_capabilities(body: bytes) -> types.ClientCapabilities | None:
    """The client capabilities a 2025-11-25 `initialize` declares; None for any other body."""
    try:
        message = json.loads(body)
        if not isinstance(message, dict) or message.get("method") != "initialize":
            return None
        return types.ClientCapabilities.model_validate(
            (message.get("params") or {}).get("capabilities") or {}
        )
    except (ValueError, TypeError, AttributeError):
        return None


def declares_elicitation(capabilities: types.ClientCapabilities) -> bool:
    """Any elicitation at all (the server decides the mode later): the cautious default for `asks`."""
    return capabilities.elicitation is not None


def _opens_a_session_that_can_be_asked(
    asks: Callable[[types.ClientCapabilities], bool],
) -> Callable[[bytes], bool]:
    def pushes(body: bytes) -> bool:
        capabilities = opening_capabilities(body)
        return capabilities is not None and asks(capabilities)

    return pushes


class SameLoopbackOrigin:
    """Drops an Origin header that is the request's own loopback origin before the SDK sees it.

    The gate in front admits such an Origin (only a page this very server served sends it, and
    DNS rebinding cannot: docs/adr/0050); the SDK's check behind it knows only lists and would
    refuse it. Without the header the SDK judges the request as it judges any non-browser
    client's, and still checks the Host. Any other Origin passes through untouched.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            hosts = [v.decode("latin-1") for k, v in headers if k.lower() == b"host"]
            origins = [v.decode("latin-1") for k, v in headers if k.lower() == b"origin"]
            scheme = str(scope.get("scheme", "http"))
            if (
                len(hosts) == 1
                and len(origins) == 1
                and is_same_loopback_origin(origins[0], scheme=scheme, host=hosts[0])
            ):
                scope = {**scope, "headers": [(k, v) for k, v in headers if k.lower() != b"origin"]}
        await self.app(scope, receive, send)


def sdk_host_patterns(patterns: Sequence[str]) -> list[str]:
    """The SDK matches a Host exactly (case and all) or as "name:*"; a bare name of ours admits any port too."""
    out: list[str] = []
    for pattern in (p.lower() for p in patterns):
        out.append(pattern)
        bare = pattern.endswith("]") or ":" not in pattern
        if bare and pattern != "*":
            out.append(f"{pattern}:*")
    return out


def sdk_origin_patterns(patterns: Sequence[str]) -> list[str]:
    """The SDK matches an Origin exactly or as "origin:*" with some port; ours also lets
    "origin:*" admit the origin without a port (its scheme's default)."""
    out: list[str] = []
    for pattern in (p.lower() for p in patterns):
        out.append(pattern)
        if pattern.endswith(":*"):
            out.append(pattern[:-2])
    return out


def _session_manager(
    server: Server[Any],
    json_response: bool,
    allowed_hosts: Sequence[str],
    allowed_origins: Sequence[str],
    max_body_bytes: int,
    session_idle_seconds: float | None,
    max_sessions: int,
) -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=server,
        # Stateful on purpose: a 2025-11-25 dialog needs the session's back-channel. The
        # 2026-07-28 leg is sessionless whatever this says.
        stateless=False,
        json_response=json_response,
        security_settings=TransportSecuritySettings(
            # "*" can only come from an operator who put their own gate in front (ours, or a
            # proxy's). The SDK's check knows no wildcard, so it steps aside and that gate decides.
            enable_dns_rebinding_protection="*" not in allowed_hosts and "*" not in allowed_origins,
            allowed_hosts=sdk_host_patterns(allowed_hosts),
            allowed_origins=sdk_origin_patterns(allowed_origins),
        ),
        max_request_body_size=max_body_bytes,
        session_idle_timeout=session_idle_seconds,
        max_sessions=max_sessions,
    )


def build_http_app(
    server: Server[Any],
    *,
    path: str = "/mcp",
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
    allowed_origins: Sequence[str] = LOOPBACK_ORIGINS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    session_idle_seconds: float | None = DEFAULT_SESSION_IDLE_SECONDS,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    asks: Callable[[types.ClientCapabilities], bool] | None = declares_elicitation,
    middleware: Sequence[Middleware] = (),
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """The ASGI app serving `server` at `path`.

    `middleware` wraps everything, outermost first (the authentication gates go here);
    `routes` are served beside the MCP endpoint (e.g. a health check). `asks` says whether
    the server may push a question to a 2025-11-25 client with these capabilities (None: it
    never does, e.g. elicitation is off); other sessions get plain JSON answers. The lifespan runs the SDK session managers (one per response kind), each of which
    enters the server's own lifespan; `max_sessions` bounds each kind of session.
    """

    def manager(json_response: bool) -> StreamableHTTPSessionManager:
        return _session_manager(
            server,
            json_response,
            allowed_hosts,
            allowed_origins,
            max_body_bytes,
            session_idle_seconds,
            max_sessions,
        )

    # Two managers of the same server: SSE answers only where a question may be pushed.
    managers = [manager(json_response=False)] if asks is not None else []
    plain = manager(json_response=True)
    managers.append(plain)
    endpoint = SessionOwners(
        StreamableHTTPASGIApp(managers[0]),
        capacity=max_sessions,
        plain=StreamableHTTPASGIApp(plain),
        pushes=None if asks is None else _opens_a_session_that_can_be_asked(asks),
        max_body_bytes=max_body_bytes,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for each in managers:
                await stack.enter_async_context(each.run())
            yield

    return Starlette(
        routes=[Route(path, endpoint=SameLoopbackOrigin(endpoint)), *routes],
        middleware=list(middleware),
        lifespan=lifespan,
    )
