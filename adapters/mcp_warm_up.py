"""Start something once the client has its `initialize` answer: the idle time before the first call (ADR 0052).

A stdio client spawns the server, sends `initialize`, reads the answer, sends
`notifications/initialized` and usually `tools/list`, and then a person or a model takes a
moment before the first `tools/call`. `AfterHandshake` is an SDK middleware that calls its
`start` function once, when the first message after `initialize` has been handled (the
`notifications/initialized` of a 2025-11-25 session, or the first request of a 2026-07-28 one,
which has no handshake), so nothing it starts runs before the `initialize` answer is out.
"""

from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext


class AfterHandshake:
    def __init__(self, start: Callable[[], None]) -> None:
        self._start: Callable[[], None] | None = start

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if self._start is not None and ctx.method != "initialize":
            start, self._start = self._start, None
            start()
        return result
