"""A `WoodpeckerGateway` built at its first call: a stdio server answers `initialize` and `tools/list` without loading an HTTP client.

Importing the httpx gateway loads httpx, httpcore and the log readers, about a tenth of a stdio
server's start-up CPU, and a client spawns one server per session, many of which list the
tools long before they call one (or never do: without WOODPECKER_URL no call reaches the
gateway). The composition root hands this wrapper a function that imports and builds the real
gateway; the first call runs it once.

It may also be handed a `warm` function: what building the gateway is slow at (the imports, the
TLS context), without building it. `start_warming()` runs it once on a thread of its own, which
the server does once `initialize` is answered (ADR 0052): the idle time before the session's
first call is spent loading httpx, so the first call pays little more than later ones. The
first call waits for a warm-up still running rather than doing the same work beside it; a
warm-up that fails changes nothing (the first call meets the same failure and reports it).
"""

import contextlib
import threading
from collections.abc import Callable
from typing import Protocol

from ports.woodpecker import (
    ApiResponse,
    Credential,
    LogSearch,
    LogSearchRequest,
    LogWindow,
    LogWindowRequest,
    Request,
    WoodpeckerGateway,
)


class ClosableGateway(WoodpeckerGateway, Protocol):
    async def aclose(self) -> None: ...


class FirstCallGateway:
    """Delegates every port method to the gateway `build` returns, calling `build` at most once."""

    def __init__(self, build: Callable[[], ClosableGateway], warm: Callable[[], None] | None = None) -> None:
        self._build: Callable[[], ClosableGateway] | None = build
        self._built: ClosableGateway | None = None
        self._warm = warm
        self._warming: threading.Thread | None = None

    def start_warming(self) -> None:
        """Run `warm` on a daemon thread, at most once, and only before the first call."""
        warm, self._warm = self._warm, None
        if warm is None or self._build is None or self._built is not None:
            return
        self._warming = threading.Thread(target=_quietly, args=(warm,), name="gateway-warm-up", daemon=True)
        self._warming.start()

    def _gateway(self) -> ClosableGateway:
        if self._built is None:
            if self._build is None:
                raise RuntimeError("the Woodpecker gateway is closed")
            self._warm = None  # too late to warm: this call builds it
            if self._warming is not None:
                self._warming.join()
                self._warming = None
            self._built, self._build = self._build(), None
        return self._built

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        return await self._gateway().send(call, credential)

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        return await self._gateway().step_log(path, window, credential)

    async def search_step_log(
        self, path: str, search: LogSearchRequest, credential: Credential | None
    ) -> LogSearch:
        return await self._gateway().search_step_log(path, search, credential)

    async def read_step_log(
        self, path: str, window: LogWindowRequest, search: LogSearchRequest, credential: Credential | None
    ) -> tuple[LogWindow, LogSearch]:
        return await self._gateway().read_step_log(path, window, search, credential)

    async def aclose(self) -> None:
        """Close the gateway if a call built it; one never built has nothing open."""
        self._build = None
        if self._built is not None:
            await self._built.aclose()

    def __repr__(self) -> str:
        # Describing the wrapper builds nothing (a log line must not load httpx).
        if self._built is not None:
            return repr(self._built)
        state = "not built yet" if self._build is not None else "closed before its first call"
        return f"FirstCallGateway({state})"


def _quietly(warm: Callable[[], None]) -> None:
    # A failure here (a CA file that cannot be read) is met again, and reported, by the first call.
    with contextlib.suppress(Exception):
        warm()
