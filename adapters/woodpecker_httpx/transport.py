"""One request to Woodpecker over httpx: only to the configured origin, never redirected, bounded, retried only for reads, and never leaking the token."""

import functools
import ipaddress
import json
import random
import ssl
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, unquote
from urllib.request import getproxies

import anyio
import httpx

from adapters.woodpecker_httpx.failures import (
    Retry,
    error_for,
    raise_transport,
    serves_web_ui,
    shown_root,
    too_large,
)
from adapters.woodpecker_httpx.pool import OneOriginPool
from domain.parsing.tokens import token_shaped
from domain.parsing.urls import BadUrl, split_url
from domain.woodpecker.faults import (
    NoServer,
    NotAsPlanned,
    Redirected,
    Sent,
    TokenShape,
    Unreachable,
    Unreadable,
)
from ports.woodpecker import ApiResponse, Credential, Request, failed

_ERROR_BODY_READ = 64 * 1024  # enough for any real error text; the rest is not read
_DETAIL_CHARS = 300
_ROOT_PATHS = ("/version", "/healthz")
_RETRY_STATUSES = frozenset({429, 502, 503, 504})
_URL_CACHE = 1024  # paths whose URL is kept (a read tool's path names one repository, pipeline, ...)

T = TypeVar("T")


class _Headers(Mapping[str, str]):
    """Response headers looked up case-insensitively ("Pipeline-Filtered" or "pipeline-filtered")."""

    __slots__ = ("_items",)

    def __init__(self, headers: httpx.Headers) -> None:
        self._items = {k.lower(): v for k, v in headers.items()}

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


class HttpxTransport:
    """Requests to one Woodpecker over one transport owned by this object, a `OneOriginPool` unless a
    proxy or a test's transport is given (close it with `aclose`).

    - The per-call credential wins over the default token; with neither, and always for the
      root routes /version and /healthz, no Authorization header is sent. The token goes only
      to the configured origin: redirects are refused and every request URL is checked against it.
    - Only GETs are retried (connection errors, 429, 502, 503, 504) with exponential
      backoff and jitter, honouring Retry-After up to `max_retry_after` seconds.
    - `insecure_tls` turns off certificate checks for this client alone; `ca_file` (a PEM
      bundle) adds a private CA to the trusted ones instead, checks staying on.
    """

    def __init__(
        self,
        base_url: str | None,
        *,
        token: Credential | None = None,
        insecure_tls: bool = False,
        ca_file: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        jitter: Callable[[], float] = random.random,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        max_retry_after: float = 30.0,
        retry_budget: float = 30.0,
        user_agent: str = "woodpecker-ci-mcp",
        trust_env: bool = True,
    ) -> None:
        self._token = token
        self._timeout = timeout
        # Connecting should never take long; a slow answer may.
        self._connect_timeout = min(timeout, 10.0)
        self._retries = max(retries, 0)
        self._sleep = sleep
        self._jitter = jitter
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._max_retry_after = max_retry_after
        # All the waits of one request together: past it the error is answered, so that a read
        # answers before common clients stop waiting (60 s) rather than after three long waits.
        self._retry_budget = retry_budget
        self._root: httpx.URL | None = None
        self._shown = ""  # the root as the words of a failure to reach it name it
        self._urls: dict[str, httpx.URL] = {}  # each path's URL under the root, as _target built it
        self._transport: httpx.AsyncBaseTransport | None = None
        self._closed = False
        if base_url:
            self._root = _parse_root(base_url)
            self._shown = shown_root(self._root)
        self._headers = {
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "Connection": "keep-alive",
            "User-Agent": user_agent,
        }
        self._timeouts = httpx.Timeout(timeout, connect=self._connect_timeout).as_dict()

        # Built at the first request, not here: the TLS context costs about 50 ms of CPU, and a
        # stdio server must answer initialize and tools/list before any call.
        def new_transport() -> httpx.AsyncBaseTransport:
            if transport is not None:
                return transport
            assert self._root is not None  # _target raised NotConfigured before
            proxy = _environment_proxy(self._root) if trust_env else None
            if proxy is not None:
                # verify applies to this adapter only; nothing process-wide changes.
                verify = _unverified_context() if insecure_tls else _verifying_context(trust_env, ca_file)
                return httpx.AsyncHTTPTransport(verify=verify, proxy=proxy, trust_env=trust_env)
            # One origin, so a stack of idle connections instead of httpcore's general pool; a
            # plain-HTTP root never opens TLS, so it builds no TLS context (ADR 0052).
            if self._root.scheme == "http":
                return OneOriginPool(None)
            return OneOriginPool(
                _unverified_context() if insecure_tls else _verifying_context(trust_env, ca_file)
            )

        self._new_transport = new_transport

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        self._closed = True
        if self._transport is not None:
            await self._transport.aclose()

    def __repr__(self) -> str:
        where = _origin(self._root) if self._root is not None else "not configured"
        token = "set" if self._token is not None else "none"
        return f"{where}, token={token}"

    # ------------------------------------------------------------------ one request, with retries

    async def exchange(
        self,
        call: Request,
        credential: Credential | None,
        consume: Callable[[httpx.Response], Awaitable[T]],
        deadline: float,
    ) -> T:
        """Send `call` (a GET up to 1 + retries times) and hand a 2xx answer to `consume`.

        Raises:
            WoodpeckerError: what went wrong, as the user should read it.
        """
        transport, url = self._target(call.path)
        # /version and /healthz need no token, so none travels there, whoever holds one.
        secret = None if call.path in _ROOT_PATHS else credential or self._token
        if secret is not None and not secret.reveal():
            secret = None
        if secret is not None and not token_shaped(secret.reveal()):
            # Caught here rather than by the HTTP library, whose error could quote the header.
            raise failed(TokenShape())
        headers = self._headers
        if secret is not None:
            headers = {**headers, "Authorization": f"Bearer {secret.reveal()}"}
        # Sent through the transport itself, not an httpx client: no cookie jar to carry one
        # caller's cookie into another's request, no redirect or auth machinery we do not use
        # (docs/adr/0034).
        request = httpx.Request(
            call.method,
            url,
            params=dict(call.query) or None,
            json=call.body,
            headers=headers,
            extensions={"timeout": self._timeouts},
        )
        self._check_outgoing(request, call, secret is not None)
        attempts = 1 + (self._retries if call.idempotent_read else 0)
        waited = 0.0
        for attempt in range(attempts):
            try:
                return await self._attempt(transport, request, call, secret, consume, deadline)
            except Retry as retry:
                delay = self._delay(attempt, retry.wait)
                if attempt + 1 >= attempts or waited + delay > self._retry_budget:
                    raise retry.error from None
                waited += delay
                await self._sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises

    async def _attempt(
        self,
        transport: httpx.AsyncBaseTransport,
        request: httpx.Request,
        call: Request,
        secret: Credential | None,
        consume: Callable[[httpx.Response], Awaitable[T]],
        deadline: float,
    ) -> T:
        try:
            with anyio.fail_after(deadline):
                try:
                    response = await transport.handle_async_request(request)
                except httpx.HTTPError as exc:
                    raise_transport(
                        exc, self._timeout, self._connect_timeout, before_response=True, url=self._shown
                    )
                try:
                    if 300 <= response.status_code < 400:
                        raise failed(Redirected(response.status_code))
                    if not 200 <= response.status_code < 300:
                        await self._raise_for_status(response, call, secret)
                    try:
                        return await consume(response)
                    except httpx.HTTPError as exc:
                        raise_transport(
                            exc, self._timeout, self._connect_timeout, before_response=False, url=self._shown
                        )
                finally:
                    # Shielded: after the deadline fires the connection must still be
                    # released (closed, as its body was not read), not leaked.
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
        except TimeoutError:
            raise failed(Unreachable("deadline", deadline, url=self._shown)) from None

    def _target(self, path: str) -> tuple[httpx.AsyncBaseTransport, httpx.URL]:
        if self._root is None:
            raise failed(NoServer("missing"))
        if (
            not path.startswith("/")
            or path.startswith("//")
            or any(c in "?#\\" or c <= " " or c == "\x7f" for c in path)
            or not (path.startswith("/api/") or path in _ROOT_PATHS)
        ):
            raise ValueError("a Request path starts with /api/ or is /version or /healthz")
        root = self._root
        url = self._urls.get(path)
        if url is None:
            # httpx parses the URL again for every copy_with (about a twentieth of a read call's CPU);
            # the root never changes, so a path's URL is the same every time. The checks below and
            # _check_outgoing still run on every request.
            url = root.copy_with(raw_path=root.raw_path.rstrip(b"/") + path.encode("ascii", "strict"))
            if len(self._urls) >= _URL_CACHE:
                self._urls.clear()
            self._urls[path] = url
        # The Authorization header must only ever travel to the configured origin.
        if (url.scheme, url.host, url.port) != (root.scheme, root.host, root.port):
            raise ValueError("a Request path may not name another host")
        if self._transport is None:
            if self._closed:
                raise RuntimeError("this Woodpecker gateway is closed")
            self._transport = self._new_transport()
        return self._transport, url

    def _check_outgoing(self, request: httpx.Request, call: Request, with_token: bool) -> None:
        """The request as the HTTP library will send it must be the planned one, byte for byte:
        same origin, the root's path plus the call's path, the call's query, no fragment, no dot or
        empty segment; and a token only under the root's /api/. One place for every tool.

        Raises:
            RequestNotAsPlanned: nothing was sent.
        """
        root = self._root
        assert root is not None  # _target raised NotConfigured before
        url = request.url
        prefix = root.raw_path.rstrip(b"/")
        planned = prefix + call.path.encode("ascii")
        path, _, query = url.raw_path.partition(b"?")
        segments = call.path.split("/")[1:]
        problem: NotAsPlanned.Problem | None = None
        if (url.scheme, url.host, url.port) != (root.scheme, root.host, root.port):
            problem = "another server"
        elif path != planned:
            problem = "another path"
        elif any(unquote(part) in ("", ".", "..") for part in segments):
            problem = "a dot or empty path segment"
        elif parse_qsl(query.decode("ascii", "replace"), keep_blank_values=True) != list(call.query.items()):
            problem = "another query"
        elif url.fragment:
            problem = "a fragment"
        elif with_token and not path.startswith(prefix + b"/api/"):
            problem = "the token outside the API"
        if problem is not None:
            raise failed(NotAsPlanned(call.method, problem))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self._max_retry_after)
        step = min(self._backoff_cap, self._backoff_base * (2.0**attempt))
        return step * (0.5 + self._jitter() / 2)

    async def _raise_for_status(
        self, response: httpx.Response, call: Request, secret: Credential | None
    ) -> NoReturn:
        status = response.status_code
        try:
            raw = await _read_prefix(response, _ERROR_BODY_READ)
        except httpx.HTTPError:
            raw = b""
        detail = _detail(response, raw, self._known_secrets(secret))
        sent: Sent = "none" if secret is None else "own" if secret == self._token else "client"
        error = error_for(status, detail, call.path, sent)
        if call.idempotent_read and status in _RETRY_STATUSES:
            raise Retry(error, _retry_after(response) if status in (429, 503) else None)
        raise error

    def _known_secrets(self, secret: Credential | None) -> tuple[str, ...]:
        return tuple(c.reveal() for c in (secret, self._token) if c is not None and c.reveal())


# ---------------------------------------------------------------------- helpers


async def read_json(response: httpx.Response, ceiling: int) -> ApiResponse:
    """A 2xx answer read whole (at most `ceiling` bytes) and parsed as JSON."""
    check_declared_length(response, ceiling)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        if len(body) + len(chunk) > ceiling:
            too_large(ceiling)
        body += chunk
    return ApiResponse(response.status_code, _parse_json(response, bytes(body)), _Headers(response.headers))


def warm_up(base_url: str, *, insecure_tls: bool, ca_file: str | None, trust_env: bool = True) -> None:
    """Build the TLS context the first request to `base_url` will use (the same cached one), so
    that request does not wait for the CA bundle to load; a stdio server runs this on a thread
    while it waits for the session's first call (`FirstCallGateway`, ADR 0052). Importing this
    module is the rest of the warm-up. A plain-HTTP root needs no context."""
    if base_url.lower().startswith("http://"):
        return
    if insecure_tls:
        _unverified_context()
    else:
        _verifying_context(trust_env, ca_file)


@functools.cache
def _unverified_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=False)


@functools.cache
def _verifying_context(trust_env: bool, ca_file: str | None = None) -> ssl.SSLContext:
    """The certificate-checking TLS context, built once: loading the CA bundle costs milliseconds
    per client, and a context is safe to share once made. A private CA is trusted on top of the
    usual ones; hostname and chain checks stay exactly as they are."""
    context = httpx.create_ssl_context(trust_env=trust_env)
    if ca_file is not None:
        context.load_verify_locations(cafile=ca_file)
    return context


def _parse_root(base_url: str) -> httpx.URL:
    """The root as given (settings have trimmed WOODPECKER_URL already), read by the one URL parser."""
    text = base_url.strip().rstrip("/")
    try:
        url = split_url(text)
        root = httpx.URL(text)
    except (BadUrl, httpx.InvalidURL):
        raise failed(NoServer("invalid")) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise failed(NoServer("scheme"))
    if url.userinfo:
        raise failed(NoServer("userinfo"))
    return root


def _environment_proxy(root: httpx.URL) -> str | None:
    """The proxy the environment names for WOODPECKER_URL (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY, in
    either case), unless NO_PROXY covers its host."""
    proxies = getproxies()
    proxy = proxies.get(root.scheme) or proxies.get("all")
    if not proxy or _not_proxied(root.host, proxies.get("no", "")):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _not_proxied(host: str, no_proxy: str) -> bool:
    """Whether NO_PROXY covers `host`: `*`; the host itself or a domain above it (`example.org`
    and `.example.org` cover `ci.example.org`); or an IP network (`10.0.0.0/8`)."""
    host = host.lower().strip("[]")
    for entry in (part.strip().lower() for part in no_proxy.split(",")):
        if entry == "*":
            return True
        if not entry:
            continue
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network(entry.strip("[]"), strict=False):
                return True
            continue
        except ValueError:
            pass
        name = entry.lstrip(".").rpartition(":")[0] if entry.count(":") == 1 else entry.lstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _origin(url: httpx.URL) -> str:
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}"


def check_declared_length(response: httpx.Response, ceiling: int) -> None:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > ceiling:
        too_large(ceiling)


def is_html_type(response: httpx.Response) -> bool:
    return "html" in response.headers.get("content-type", "").lower()


def _looks_like_html(raw: bytes) -> bool:
    # JSON never starts with "<"; a page (or an XML error from a proxy) does.
    return raw[:512].lstrip().startswith(b"<")


def _parse_json(response: httpx.Response, body: bytes) -> Any:
    if response.status_code == 204 or not body.strip():
        return None
    if is_html_type(response) or _looks_like_html(body):
        serves_web_ui()
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        content_type = response.headers.get("content-type", "").lower()
        if content_type.startswith("text/plain"):
            # A few Woodpecker routes answer plain text ("Ok"); hand it over as a string.
            return body.decode("utf-8", "replace")
        raise failed(Unreadable("not_json")) from None


async def _read_prefix(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def _detail(response: httpx.Response, raw: bytes, secrets: tuple[str, ...]) -> str | None:
    """Woodpecker's own error text, shortened; None for HTML pages and empty bodies."""
    if not raw.strip() or is_html_type(response) or _looks_like_html(raw):
        return None
    text = " ".join(raw.decode("utf-8", "replace").split())
    for secret in secrets:
        # A proxy or a hostile server could echo the request back; the token must not
        # reach a message.
        text = text.replace(secret, "***")
    if len(text) > _DETAIL_CHARS:
        text = text[: _DETAIL_CHARS - 1].rstrip() + "…"
    return text or None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP-date: fall back to our own backoff
    return seconds if seconds >= 0 else None
