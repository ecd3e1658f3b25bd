"""ASGI gates in front of the MCP app: Host/Origin allow lists, a body limit, and bearer authentication.

Each gate answers by itself (421/403/413/401) before the inner app sees a byte of the request.
A caller that passes authentication carries a principal (a keyed digest of its bearer, never
the bearer) in the ASGI scope; in per-client mode also its Credential. The Authorization
header itself is removed, so nothing further in can log or echo it.
"""

import hashlib
import hmac
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Literal

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from domain.parsing.tokens import b64token, bearer_of
from domain.parsing.urls import is_same_loopback_origin
from ports.woodpecker import Credential

PRINCIPAL_KEY = "woodpecker_mcp.principal"
CREDENTIAL_KEY = "woodpecker_mcp.credential"
REALM = "woodpecker-ci-mcp"
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")

AuthMode = Literal["shared", "per-client"]
Verifier = Callable[[Credential], Awaitable[bool]]

_MAX_BEARER_CHARS = 4096
_MIN_SHARED_SECRET_CHARS = 16


async def send_json(send: Send, status: int, body: object, headers: Iterable[tuple[str, str]] = ()) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


async def _refuse_websocket(receive: Receive, send: Send) -> None:
    await receive()  # websocket.connect
    await send({"type": "websocket.close", "code": 1008})


def _header(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == name]


def derive_principal_key(seal_key: bytes) -> bytes:
    """The key principals are digested with: derived from the first seal key, so replicas agree.

    Rotating the first seal key re-keys principals too; questions and tokens in flight are then
    asked again, which is the same cost rotation already has for seals.
    """
    return hmac.new(seal_key, b"woodpecker-ci-mcp principal key v1", hashlib.sha256).digest()


def principal_of(bearer: str, principal_key: bytes) -> str:
    """A stable, non-reversible name for whoever holds `bearer` (128 bits, hex)."""
    return hmac.new(principal_key, bearer.encode(), hashlib.sha256).hexdigest()[:32]


def _host_allowed(host: str, patterns: Sequence[str]) -> bool:
    host = host.lower()
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not name or (port and not port.isdigit()):
        name = host
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern == "*" or pattern == host:
            return True
        # A bare name or "name:*" admits any port: DNS rebinding is about the name, not the port.
        if pattern.removesuffix(":*") == name:
            return True
    return False


def _origin_allowed(origin: str, patterns: Sequence[str]) -> bool:
    origin = origin.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern == "*" or pattern == origin:
            return True
        if (
            pattern.endswith(":*")
            and origin.startswith(pattern[:-1])
            and origin[len(pattern) - 1 :].isdigit()
        ):
            return True
        if pattern.endswith(":*") and origin == pattern[:-2]:
            return True
    return False


class OriginHostMiddleware:
    """Refuses a request whose Host is not allowed (421; 400 if absent) or whose Origin is (403).

    An absent Origin is allowed: it is how non-browser clients call. So is an Origin that is the
    request's own loopback origin (`http://localhost:PORT` with Host `localhost:PORT`, exactly):
    only a page this server served sends it, and DNS rebinding cannot. "*" in a list turns that
    check off explicitly (for example behind a proxy that already does it). Names compare
    case-insensitively; an admitted request travels inward with both headers in lower case,
    so a check further in that compares exactly (the SDK's) reaches the same verdict.
    """

    def __init__(self, app: ASGIApp, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await _refuse_websocket(receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = _header(scope, b"host")
        if len(hosts) != 1 or not hosts[0]:
            await send_json(
                send, 400, {"error": "bad_request", "message": "Exactly one Host header is required."}
            )
            return
        if not _host_allowed(hosts[0], self.allowed_hosts):
            await send_json(
                send,
                421,
                {
                    "error": "misdirected_request",
                    "message": "This Host is not served here (WOODPECKER_MCP_ALLOWED_HOSTS).",
                },
            )
            return
        origins = _header(scope, b"origin")
        if origins and (len(origins) != 1 or not self._origin_admitted(origins[0], scope, hosts[0])):
            await send_json(
                send,
                403,
                {
                    "error": "forbidden_origin",
                    "message": "This Origin is not allowed (WOODPECKER_MCP_ALLOWED_ORIGINS).",
                },
            )
            return
        inner = dict(scope)
        inner["headers"] = [
            (k, v.lower() if k.lower() in (b"host", b"origin") else v) for k, v in scope["headers"]
        ]
        await self.app(inner, receive, send)

    def _origin_admitted(self, origin: str, scope: Scope, host: str) -> bool:
        # A page of this very loopback origin (same scheme, name and port as the request) is no
        # DNS rebinding, whatever the list says (docs/adr/0050).
        return _origin_allowed(origin, self.allowed_origins) or is_same_loopback_origin(
            origin, scheme=str(scope.get("scheme", "http")), host=host
        )


class BodyLimitMiddleware:
    """Reads at most `max_bytes` of body within `timeout_seconds`, then hands the inner app the whole of it.

    Over the limit: 413 (at once when Content-Length says so). Too slow: 408. The inner app
    never sees a partial body.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, timeout_seconds: float = 30.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_seconds = timeout_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared and not (len(declared) == 1 and declared[0].isdigit()):
            await send_json(send, 400, {"error": "bad_request", "message": "Invalid Content-Length."})
            return
        if declared and int(declared[0]) > self.max_bytes:
            await send_json(send, 413, {"error": "payload_too_large", "limit_bytes": self.max_bytes})
            return
        body = bytearray()
        first: list[Message] = []
        with anyio.move_on_after(self.timeout_seconds) as scoped:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    first.append(message)  # a disconnect: let the app see it
                    break
                body += message.get("body", b"")
                if len(body) > self.max_bytes:
                    await send_json(send, 413, {"error": "payload_too_large", "limit_bytes": self.max_bytes})
                    return
                if not message.get("more_body", False):
                    break
        if scoped.cancelled_caught:
            await send_json(send, 408, {"error": "request_timeout"})
            return
        pending: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}, *first]

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        await self.app(scope, replay, send)


class BearerAuthMiddleware:
    """401 unless the request carries an acceptable bearer; never falls back to the server's token.

    shared: the bearer must equal `shared_secret` (constant time); the app then uses the
    server's own Woodpecker token (no credential in the scope).
    per-client: the bearer is the caller's own Woodpecker token. `verify` (when given) asks
    Woodpecker whether it is valid; a yes is remembered for `verify_cache_seconds` under the
    principal, never under the token. The token travels inward as a Credential for this request.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        mode: AuthMode,
        shared_secret: str | None,
        principal_key: bytes,
        verify: Verifier | None = None,
        verify_cache_seconds: float = 60.0,
        verify_cache_size: int = 4096,
        verify_timeout_seconds: float = 10.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if mode not in ("shared", "per-client"):
            raise ValueError("mode must be 'shared' or 'per-client'")
        if mode == "shared" and (shared_secret is None or len(shared_secret) < _MIN_SHARED_SECRET_CHARS):
            raise ValueError(
                f"shared mode needs a bearer secret of at least {_MIN_SHARED_SECRET_CHARS} characters"
            )
        if mode == "per-client" and shared_secret is not None:
            raise ValueError("per-client mode takes no shared secret: each client presents its own token")
        if len(principal_key) < 16:
            raise ValueError("the principal key must be at least 16 bytes")
        self.app = app
        self.mode = mode
        self._secret_digest = hashlib.sha256(shared_secret.encode()).digest() if shared_secret else b""
        self._principal_key = principal_key
        self._verify = verify
        self._cache_seconds = verify_cache_seconds
        self._cache_size = verify_cache_size
        self._verify_timeout = verify_timeout_seconds
        self._verified: OrderedDict[str, float] = OrderedDict()
        self._monotonic = monotonic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await _refuse_websocket(receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        values = _header(scope, b"authorization")
        if not values:
            await self._unauthorized(send, invalid=False)
            return
        bearer = bearer_of(values)
        if bearer is None or len(bearer) > _MAX_BEARER_CHARS or not b64token(bearer):
            await self._unauthorized(send, invalid=True)
            return
        principal = principal_of(bearer, self._principal_key)
        inner = dict(scope)
        inner["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
        inner[PRINCIPAL_KEY] = principal
        inner.pop(CREDENTIAL_KEY, None)
        if self.mode == "shared":
            given = hashlib.sha256(bearer.encode()).digest()
            if not hmac.compare_digest(given, self._secret_digest):
                await self._unauthorized(send, invalid=True)
                return
        else:
            credential = Credential(bearer)
            verdict = await self._verified_ok(principal, credential)
            if verdict is None:
                await send_json(
                    send,
                    503,
                    {
                        "error": "woodpecker_unavailable",
                        "message": "Woodpecker could not check the token; try again.",
                    },
                    [("retry-after", "5")],
                )
                return
            if not verdict:
                await self._unauthorized(send, invalid=True)
                return
            inner[CREDENTIAL_KEY] = credential
        await self.app(inner, receive, send)

    async def _verified_ok(self, principal: str, credential: Credential) -> bool | None:
        if self._verify is None:
            return True
        now = self._monotonic()
        until = self._verified.get(principal)
        if until is not None and now < until:
            return True
        try:
            with anyio.fail_after(self._verify_timeout):
                ok = await self._verify(credential)
        except Exception:
            # Not knowing is not a yes, and not a "wrong token" either: the caller may retry.
            return None
        if ok:
            self._verified[principal] = now + self._cache_seconds
            self._verified.move_to_end(principal)
            while len(self._verified) > self._cache_size:
                self._verified.popitem(last=False)
        else:
            self._verified.pop(principal, None)
        return bool(ok)

    async def _unauthorized(self, send: Send, *, invalid: bool) -> None:
        challenge = f'Bearer realm="{REALM}"' + (', error="invalid_token"' if invalid else "")
        message = (
            "The bearer token was not accepted."
            if invalid
            else "Authentication required: send 'Authorization: Bearer <token>'."
        )
        await send_json(
            send,
            401,
            {"error": "invalid_token" if invalid else "unauthorized", "message": message},
            [("www-authenticate", challenge)],
        )
