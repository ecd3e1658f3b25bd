"""`AfterHandshake` starts its work once, after the first message that follows `initialize` has been
handled, so nothing it starts competes with the `initialize` answer (ADR 0052)."""

from dataclasses import dataclass
from typing import Any

import pytest

from adapters.mcp_warm_up import AfterHandshake

pytestmark = pytest.mark.anyio


@dataclass
class Ctx:
    method: str


async def test_it_starts_once_after_the_message_that_follows_initialize_was_handled() -> None:
    events: list[str] = []
    middleware = AfterHandshake(lambda: events.append("start"))

    async def handler(ctx: Any) -> str:
        events.append(ctx.method)
        return f"answer to {ctx.method}"

    for method in ("initialize", "notifications/initialized", "tools/list", "tools/call"):
        assert await middleware(Ctx(method), handler) == f"answer to {method}"  # type: ignore[arg-type]
    assert events == ["initialize", "notifications/initialized", "start", "tools/list", "tools/call"]


async def test_a_session_without_a_handshake_starts_it_after_its_first_request() -> None:
    events: list[str] = []
    middleware = AfterHandshake(lambda: events.append("start"))

    async def handler(ctx: Any) -> None:
        events.append(ctx.method)

    for method in ("server/discover", "tools/list"):
        await middleware(Ctx(method), handler)  # type: ignore[arg-type]
    assert events == ["server/discover", "start", "tools/list"]
