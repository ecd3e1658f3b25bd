"""Reading a pipeline history (ports/use_cases/history.py) against the sandbox, through the real httpx
gateway: pages then pipelines, at most CONCURRENCY in flight, within the request budget and the time
bound, and an answer that says it stopped early when it did."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest

from adapters.anyio_concurrency import AnyioConcurrency
from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from ports.use_cases.history import CONCURRENCY, HistoryReader
from ports.use_cases.tools import ToolRunner
from ports.woodpecker import Credential, Request
from sandbox.seed_history import add_history
from sandbox.seed_text import BENCH_REPO_ID
from sandbox.server import Sandbox
from tests.fakes.clock import FakeClock

pytestmark = pytest.mark.anyio
T = TypeVar("T")
ARGS = {"repo_id": BENCH_REPO_ID, "branch": "main", "limit": 120}


def _send(gateway: HttpxWoodpeckerGateway, sandbox: Sandbox) -> Callable[[Request], Awaitable[Any]]:
    credential = Credential(sandbox.admin_token)
    return lambda request: gateway.send(request, credential)


class Watching:
    """The anyio Concurrency adapter, counting how many jobs run at once."""

    def __init__(self) -> None:
        self.running = self.most = 0

    async def run(self, jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
        def watched(job: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
            async def one() -> T:
                self.running += 1
                self.most = max(self.most, self.running)
                try:
                    return await job()
                finally:
                    self.running -= 1

            return one

        return await AnyioConcurrency().run([watched(j) for j in jobs], limit)


async def test_pages_then_each_pipeline_with_at_most_concurrency_in_flight(sandbox: Sandbox) -> None:
    """Over the sandbox's socket: in process, a request never waits, so nothing would overlap."""
    with sandbox.state.lock:
        seeded = add_history(sandbox.state.world, 120)
    watching = Watching()
    gateway = HttpxWoodpeckerGateway(sandbox.url, trust_env=False, retries=0, timeout=10.0)
    try:
        analysed, reading = await HistoryReader(_send(gateway, sandbox), concurrency=watching).read(ARGS)
    finally:
        await gateway.aclose()
    assert (reading.listed, reading.requests, reading.stopped_early) == (120, 3 + 120, None)
    assert analysed.numbers == tuple(seeded.numbers)
    assert 1 < watching.most <= CONCURRENCY


async def test_a_spent_request_budget_stops_early_and_says_so(
    gateway: HttpxWoodpeckerGateway, sandbox: Sandbox
) -> None:
    with sandbox.state.lock:
        add_history(sandbox.state.world, 120)
    analysed, reading = await HistoryReader(_send(gateway, sandbox), budget=40).read(ARGS)
    assert reading.requests == 40 and analysed.pipelines == 40 - 3
    assert reading.stopped_early is not None and "budget (40)" in reading.stopped_early


async def test_no_request_starts_once_the_time_bound_has_passed(
    gateway: HttpxWoodpeckerGateway, sandbox: Sandbox
) -> None:
    with sandbox.state.lock:
        add_history(sandbox.state.world, 120)
    clock = FakeClock()
    send = _send(gateway, sandbox)

    async def slow(request: Request) -> Any:
        clock.advance(1.0)  # each request takes a second of the call's time
        return await send(request)

    analysed, reading = await HistoryReader(slow, clock=clock, seconds=30).read(ARGS)
    assert reading.requests == 30 and analysed.pipelines == 27
    assert reading.stopped_early is not None and "after 30 s" in reading.stopped_early


async def test_the_tool_says_how_much_it_read_and_that_it_stopped(
    gateway: HttpxWoodpeckerGateway, sandbox: Sandbox
) -> None:
    with sandbox.state.lock:
        add_history(sandbox.state.world, 60)
    clock = FakeClock()
    inner = gateway.send

    async def slow(request: Request, credential: Any) -> Any:
        clock.advance(2.0)
        return await inner(request, credential)

    gateway.send = slow  # type: ignore[method-assign]
    runner = ToolRunner(WOODPECKER_TOOLS, gateway, token_configured=True, clock=clock)
    result = await runner.run("analyze_pipeline_history", ARGS, Credential(sandbox.admin_token))
    assert not result.is_error, result.text
    assert result.structured["read"]["stopped_early"] is True and result.structured["read"]["requests"] == 15
    assert "stopped early: no request starts after 30 s" in result.text.splitlines()[1]


async def test_a_repository_that_is_not_there_is_an_error_naming_what_to_list(call: Any) -> None:
    result = await call("analyze_pipeline_history", "ada", repo_id=999)
    assert result.is_error and result.structured["error"]["kind"] == "not_found"
