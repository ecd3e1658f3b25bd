"""A `WoodpeckerGateway` built at its first call: a stdio server answers `initialize` and `tools/list` without loading an HTTP client.

Importing the httpx gateway loads httpx, httpcore and the log readers, about a tenth of a stdio
server's start-up CPU, and a client spawns one server per session, many of which list the
tools long before they call one (or never do: without WOODPECKER_URL no call reaches the
gateway). The composition root hands this wrapper a function that imports and builds the real
gateway; the first call runs it once.
"""

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

    def __init__(self, build: Callable[[], ClosableGateway]) -> None:
        self._build: Callable[[], ClosableGateway] | None = build
        self._built: ClosableGateway | None = None

    def _gateway(self) -> ClosableGateway:
        if self._built is None:
            if self._build is None:
                raise RuntimeError("the Woodpecker gateway is closed")
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
