"""Keep-alive connections to the one Woodpecker origin, handed out last-in first-out (docs/adr/0034).

httpx's default transport keeps its connections in httpcore's general pool, which serves any
number of origins and, at every request and at every response's close, walks all its
connections and asks each idle one whether its socket became readable. Under 16 concurrent
MCP sessions that walk was about a seventh of the server's CPU per call. This adapter talks to
a single origin, so a plain stack of idle connections does: a request takes the most recently
used one (checking that one alone), a closed response puts its connection back.

The bytes on the wire do not change: each connection is httpcore's own HTTP/1.1 connection
(h11, TLS through the given context), fed the request exactly as httpx built it.
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from ssl import SSLContext
from typing import Any

import anyio
import httpcore
import httpx

_KEEPALIVE_SECONDS = 5.0
_MAX_IDLE = 20
_MAX_CONNECTIONS = 100

# httpcore's failures as the httpx ones the rest of the adapter handles; the most specific first.
_FAILURES: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProxyError, httpx.ProxyError),
)


@contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _FAILURES:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


class OneOriginPool(httpx.AsyncBaseTransport):
    """An httpx transport for HTTP/1.1 requests to one origin over reused connections.

    At most `max_connections` are open at once; a request that finds none free waits up to the
    request's pool timeout, then fails with `httpx.PoolTimeout`. At most `max_idle` idle ones are
    kept, each for `keepalive_seconds` after its last answer. A connection whose answer was not
    read to the end is closed, never reused. `ssl_context` is None for a plain-HTTP origin, which
    never opens TLS.
    """

    def __init__(
        self,
        ssl_context: SSLContext | None,
        *,
        keepalive_seconds: float = _KEEPALIVE_SECONDS,
        max_idle: int = _MAX_IDLE,
        max_connections: int = _MAX_CONNECTIONS,
    ) -> None:
        self._ssl_context = ssl_context
        self._keepalive = keepalive_seconds
        self._max_idle = max_idle
        self._slots = anyio.Semaphore(max_connections)
        self._idle: list[httpcore.AsyncHTTPConnection] = []
        self._origin: httpcore.Origin | None = None
        self._closed = False

    @property
    def idle_connections(self) -> int:
        return len(self._idle)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        origin = httpcore.Origin(url.raw_scheme, url.raw_host, url.port or _default_port(url.raw_scheme))
        if self._origin is None:
            self._origin = origin
        elif origin != self._origin:
            # Never expected: the gateway checks every request's origin before it gets here.
            raise httpx.UnsupportedProtocol("this pool serves one origin only")
        if self._closed:
            raise RuntimeError("this connection pool is closed")
        await self._take_slot(request)
        connection: httpcore.AsyncHTTPConnection | None = None
        try:
            connection = await self._connection()
            core_request = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
            with _as_httpx_errors():
                answer = await connection.handle_async_request(core_request)
        except BaseException:
            with anyio.CancelScope(shield=True):
                if connection is not None:
                    await connection.aclose()
                self._slots.release()
            raise
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(self, connection, answer),
            extensions=answer.extensions,
        )

    async def _take_slot(self, request: httpx.Request) -> None:
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            timeout = (request.extensions.get("timeout") or {}).get("pool")
            try:
                with anyio.fail_after(timeout):
                    await self._slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout("no connection to Woodpecker became free in time") from None

    async def _connection(self) -> httpcore.AsyncHTTPConnection:
        while self._idle:
            connection = self._idle.pop()
            # An idle connection whose keep-alive ran out, or whose server hung up, is let go.
            if connection.is_idle() and not connection.has_expired():
                return connection
            await connection.aclose()
        assert self._origin is not None
        return httpcore.AsyncHTTPConnection(
            origin=self._origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive,
            http1=True,
            http2=False,
        )

    async def _release(self, connection: httpcore.AsyncHTTPConnection) -> None:
        try:
            if not self._closed and connection.is_idle() and len(self._idle) < self._max_idle:
                self._idle.append(connection)
            else:
                await connection.aclose()
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.aclose()


class _Body(httpx.AsyncByteStream):
    """An answer's body; closing it hands its connection back to the pool, exactly once."""

    def __init__(self, pool: OneOriginPool, connection: httpcore.AsyncHTTPConnection, answer: Any) -> None:
        self._pool = pool
        self._connection: httpcore.AsyncHTTPConnection | None = connection
        self._answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self._answer.stream:
                yield part

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                with _as_httpx_errors():
                    # httpcore marks the connection idle if the answer was read to its end, else closes it.
                    await self._answer.aclose()
            finally:
                await self._pool._release(connection)


def _default_port(scheme: bytes) -> int:
    return 443 if scheme == b"https" else 80
