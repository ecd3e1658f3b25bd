"""Streamable HTTP for the MCP server, both protocol eras: stateful 2025-11-25 sessions (so a dialog can be pushed), sessionless 2026-07-28 requests, Host/Origin checks on, a body limit, and each session bound to the principal that opened it."""

from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PRINCIPAL_SCOPE_KEY = "woodpecker_mcp.principal"
SESSION_HEADER = b"mcp-session-id"

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


class SessionOwners:
    """Refuses a 2025-11-25 session id presented by anyone but the principal that opened it.

    A session id is a bearer of its own (it receives the session's pushed questions); without
    this, one authenticated caller who learned another's id could ride that session. Every
    session is opened through here, so an id this map does not hold was never opened or has
    been forgotten: it is refused too (fail closed), and the least recently used id is the
    one forgotten when the map is full. Its client then opens a new session, as it would
    after the SDK's idle timeout.
    """

    def __init__(self, app: ASGIApp, capacity: int) -> None:
        self._app = app
        self._capacity = capacity
        self._owners: OrderedDict[str, object] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        presented = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k.lower() == SESSION_HEADER), None
        )
        if presented is not None:
            if presented not in self._owners or self._owners[presented] != principal:
                # The same answer as for a session that does not exist: nothing is confirmed.
                await JSONResponse(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}},
                    status_code=404,
                )(scope, receive, send)
                return
            self._owners.move_to_end(presented)
            await self._app(scope, receive, send)
            return

        async def remember_new_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == SESSION_HEADER:
                        self._remember(value.decode("latin-1"), principal)
            await send(message)

        await self._app(scope, receive, remember_new_session)

    def _remember(self, session_id: str, principal: object) -> None:
        self._owners[session_id] = principal
        self._owners.move_to_end(session_id)
        while len(self._owners) > self._capacity:
            self._owners.popitem(last=False)


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


def build_http_app(
    server: Server[Any],
    *,
    path: str = "/mcp",
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
    allowed_origins: Sequence[str] = LOOPBACK_ORIGINS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    session_idle_seconds: float | None = DEFAULT_SESSION_IDLE_SECONDS,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    middleware: Sequence[Middleware] = (),
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """The ASGI app serving `server` at `path`.

    `middleware` wraps everything, outermost first (the authentication gates go here);
    `routes` are served beside the MCP endpoint (e.g. a health check). The lifespan runs the
    SDK session manager, which enters the server's own lifespan once.
    """
    manager = StreamableHTTPSessionManager(
        app=server,
        # Stateful on purpose: a 2025-11-25 dialog needs the session's back-channel. The
        # 2026-07-28 leg is sessionless whatever this says.
        stateless=False,
        json_response=False,
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
    endpoint = SessionOwners(StreamableHTTPASGIApp(manager), capacity=max_sessions * 2)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route(path, endpoint=endpoint), *routes],
        middleware=list(middleware),
        lifespan=lifespan,
    )
