"""The same stdio session as `bench.stdio_client.StdioServer`, driven by the MCP SDK's own `Client` (`python -m bench --stdio-client sdk`).

What a user's client library adds (its validation of every message, its transport's threads)
is then in both servers' round trips alike; the SDK's event loop runs on a thread of this
process behind an anyio blocking portal, so the measurements stay synchronous.
"""

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Self

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.stdio_client import ServerFailed, proc_cpu_seconds


def _children() -> set[int]:
    """This process's live children, from /proc (empty where there is no /proc)."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listed:
                found.update(int(pid) for pid in listed.read().split())
    except OSError:
        pass
    return found


class SdkStdioServer:
    """One spawned stdio MCP server behind the SDK's `Client` (the 2025-11-25 handshake)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], *, cwd: str | None = None) -> None:
        self._params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=dict(env), cwd=cwd)
        self._errlog = open(os.devnull, "w")
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._client_cm: AbstractContextManager[Client] | None = None
        self._client: Client | None = None
        self.pid = 0
        self.last_response_bytes = 0

    def initialize(self) -> None:
        before = _children()
        self._client_cm = self._portal.wrap_async_context_manager(
            Client(stdio_client(self._params, errlog=self._errlog), mode="legacy")
        )
        self._client = self._client_cm.__enter__()
        spawned = _children() - before
        self.pid = spawned.pop() if len(spawned) == 1 else 0

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        assert self._client is not None
        result = self._portal.call(self._client.call_tool, name, dict(arguments))
        dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.last_response_bytes = len(json.dumps(dumped, separators=(",", ":")))
        if result.is_error:
            raise ServerFailed(f"{name} failed: {dumped.get('structuredContent') or dumped.get('content')}")
        return dumped

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid) if self.pid else 0.0

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if self._client_cm is not None:
                self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._errlog.close()
