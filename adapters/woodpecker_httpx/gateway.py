"""The Woodpecker REST API over httpx: answers bounded in bytes, step logs read as a stream (see `transport.py` for the request itself)."""

import random
from collections.abc import Awaitable, Callable
from types import TracebackType

import anyio
import httpx

from adapters.woodpecker_httpx.failures import serves_web_ui, too_large
from adapters.woodpecker_httpx.log_read import BothReaders, CompiledSearch, SearchReader, WindowReader
from adapters.woodpecker_httpx.log_stream import LogScanner, LooksLikeHtml, MalformedLog, check_executor
from adapters.woodpecker_httpx.transport import HttpxTransport, check_declared_length, is_html_type, read_json
from domain.woodpecker.faults import GiB, MiB, Unreadable
from ports.woodpecker import (
    ApiResponse,
    Credential,
    LogSearch,
    LogSearchRequest,
    LogWindow,
    LogWindowRequest,
    Request,
    failed,
)


class HttpxWoodpeckerGateway:
    """`WoodpeckerGateway` over one `HttpxTransport` owned by this object (close it with `aclose`).

    - Every answer has a byte ceiling checked against Content-Length first and again while
      it streams; step logs have their own, larger ceiling and are windowed on the fly.
    - The transport's rules hold for every request: the token only to the configured origin,
      no redirect, only GETs retried (see `HttpxTransport`).
    """

    def __init__(
        self,
        base_url: str | None,
        *,
        token: Credential | None = None,
        insecure_tls: bool = False,
        ca_file: str | None = None,
        timeout: float = 30.0,
        max_response_bytes: int = 4 * MiB,
        max_log_bytes: int = 1 * GiB,
        retries: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        jitter: Callable[[], float] = random.random,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        max_retry_after: float = 30.0,
        retry_budget: float = 30.0,
        deadline: float | None = None,
        log_deadline: float | None = None,
        user_agent: str = "woodpecker-ci-mcp",
        trust_env: bool = True,
    ) -> None:
        self._max_response_bytes = max_response_bytes
        self._max_log_bytes = max_log_bytes
        # A body that trickles in never trips the per-read timeout, so each attempt also
        # has an overall deadline.
        self._deadline = deadline if deadline is not None else 2 * timeout
        self._log_deadline = log_deadline if log_deadline is not None else max(20 * timeout, 300.0)
        self._transport = HttpxTransport(
            base_url,
            token=token,
            insecure_tls=insecure_tls,
            ca_file=ca_file,
            timeout=timeout,
            retries=retries,
            transport=transport,
            sleep=sleep,
            jitter=jitter,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            max_retry_after=max_retry_after,
            retry_budget=retry_budget,
            user_agent=user_agent,
            trust_env=trust_env,
        )

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> "HttpxWoodpeckerGateway":
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"HttpxWoodpeckerGateway({self._transport!r})"

    __str__ = __repr__

    # ------------------------------------------------------------------ the port

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        async def consume(response: httpx.Response) -> ApiResponse:
            return await read_json(response, self._max_response_bytes)

        return await self._transport.exchange(call, credential, consume, self._deadline)

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        async def consume(response: httpx.Response) -> LogWindow:
            reader = WindowReader(window)
            await self._read_log(response, reader)
            return reader.result()

        return await self._transport.exchange(Request("GET", path), credential, consume, self._log_deadline)

    async def search_step_log(
        self, path: str, search: LogSearchRequest, credential: Credential | None
    ) -> LogSearch:
        compiled = CompiledSearch(search)  # a bad pattern fails here, before any request

        async def consume(response: httpx.Response) -> LogSearch:
            reader = SearchReader(search, compiled)
            await self._read_log(response, reader, compiled.prefilter, bounds=False)
            return reader.result()

        return await self._transport.exchange(Request("GET", path), credential, consume, self._log_deadline)

    async def read_step_log(
        self, path: str, window: LogWindowRequest, search: LogSearchRequest, credential: Credential | None
    ) -> tuple[LogWindow, LogSearch]:
        compiled = CompiledSearch(search)

        async def consume(response: httpx.Response) -> tuple[LogWindow, LogSearch]:
            both = BothReaders(WindowReader(window), SearchReader(search, compiled))
            await self._read_log(response, both)
            return both.window.result(), both.search.result()

        return await self._transport.exchange(Request("GET", path), credential, consume, self._log_deadline)

    # ------------------------------------------------------------------ step logs

    async def _read_log(
        self,
        response: httpx.Response,
        reader: WindowReader | SearchReader | BothReaders,
        also: bytes | None = None,
        *,
        bounds: bool = True,
    ) -> None:
        """Stream the log through the byte-level scanner into `reader` (see the ADR "Read step logs at byte level, search them with RE2")."""
        if is_html_type(response):
            serves_web_ui()
        check_declared_length(response, self._max_log_bytes)
        # A search asks no batch for its lowest and highest lines (`bounds`); a window does.
        scanner = LogScanner(also=also, executor=check_executor(), bounds=bounds)
        feed = reader.feed
        received = 0
        try:
            async for chunk in response.aiter_bytes():
                received += len(chunk)
                if received > self._max_log_bytes:
                    too_large(self._max_log_bytes)
                for batch in scanner.feed(chunk):
                    feed(batch)
            for batch in scanner.close():
                feed(batch)
        except LooksLikeHtml:
            serves_web_ui()
        except MalformedLog as exc:
            raise failed(Unreadable("log", str(exc))) from None
