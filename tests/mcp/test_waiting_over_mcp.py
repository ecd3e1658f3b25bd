"""wait_for_pipeline over the Python SDK client against the sandbox, with one FakeClock for both.

The sandbox's slow pipeline fails 30 s after the seed and its long one runs for an hour; the clock
moves only when the server sleeps between two looks, so the test waits for nothing real.
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from adapters.mcp_http import build_http_app
from domain.woodpecker.waiting import DEFAULT_WINDOW
from sandbox.seed import (
    BENCH_REPO_ID,
    LONG_NUMBER,
    LONG_RUNS_FOR,
    SLOW_FAILING_STEP,
    SLOW_NUMBER,
    SLOW_RUNS_FOR,
)
from sandbox.server import Sandbox, running_sandbox
from tests.fakes.clock import FakeClock
from tests.fixtures.mcp import Person, harness_for, serving

pytestmark = pytest.mark.anyio

START = 1_760_500_000.0


@pytest.fixture(scope="module")
def clock_and_sandbox() -> Iterator[tuple[FakeClock, Sandbox]]:
    """A sandbox of its own whose running pipelines finish by this FakeClock."""
    clock = FakeClock(START)
    with running_sandbox("3.17", clock=clock.now) as sandbox:
        yield clock, sandbox


@pytest.fixture
def clocked(clock_and_sandbox: tuple[FakeClock, Sandbox]) -> tuple[FakeClock, Sandbox]:
    clock, sandbox = clock_and_sandbox
    clock.set(START)
    clock.sleeps.clear()
    sandbox.reset()  # seeded at START: the slow pipeline ends at START + 30 s
    return clock, sandbox


class Progress:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))


@asynccontextmanager
async def client_for(sandbox: Sandbox, clock: FakeClock, transport: str, mode: str) -> AsyncIterator[Client]:
    async with harness_for(sandbox.url, sandbox.admin_token, clock=clock) as harness:
        if transport == "memory":
            async with Client(harness.server, mode=mode) as client:
                yield client
            return
        # Over HTTP, progress travels on the call's SSE response: a session that may be asked has one.
        async with serving(build_http_app(harness.server)) as base:
            async with Client(f"{base}/mcp", mode=mode, elicitation_callback=Person()) as client:
                yield client


def text_of(result: Any) -> str:
    return "\n".join(part.text for part in result.content if getattr(part, "text", None))


TRANSPORTS = [("memory", "legacy"), ("memory", "2026-07-28"), ("http", "legacy")]


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
async def test_a_pipeline_that_finishes_inside_the_window_answers_finished_with_its_state(
    clocked: tuple[FakeClock, Sandbox], transport: str, mode: str
) -> None:
    clock, sandbox = clocked
    progress = Progress()
    with anyio.fail_after(60):
        async with client_for(sandbox, clock, transport, mode) as client:
            result = await client.call_tool(
                "wait_for_pipeline",
                {"repo_id": BENCH_REPO_ID, "number": SLOW_NUMBER},
                progress_callback=progress,
            )
    assert not result.is_error, text_of(result)
    out = result.structured_content or {}
    assert (out["finished"], out["status"]) == (True, "failure")
    assert SLOW_RUNS_FOR <= out["waited_seconds"] <= DEFAULT_WINDOW
    assert [(s["name"], s["step_id"], s["exit_code"]) for s in out["failed_steps"]] == [
        ("test", SLOW_FAILING_STEP, 1)
    ]
    text = text_of(result)
    assert f"Pipeline {SLOW_NUMBER} of repository {BENCH_REPO_ID} finished: failure" in text
    assert '"finished":true' in text and "get_pipeline_failure_summary" in text
    # The client heard how the wait went: growing progress out of the window, while it was running.
    assert progress.seen, "no progress notification reached the client"
    values = [p for p, _, _ in progress.seen]
    assert values == sorted(set(values)) and values[-1] < SLOW_RUNS_FOR + 1
    assert {total for _, total, _ in progress.seen} == {float(DEFAULT_WINDOW)}
    assert all(m and "is running" in m for _, _, m in progress.seen)
    # Every pause was on the clock, none past the window.
    assert clock.sleeps and sum(clock.sleeps) <= DEFAULT_WINDOW


@pytest.mark.parametrize(("transport", "mode"), TRANSPORTS)
async def test_a_pipeline_still_running_when_the_window_passes_answers_not_finished_without_error(
    clocked: tuple[FakeClock, Sandbox], transport: str, mode: str
) -> None:
    clock, sandbox = clocked
    where = {"repo_id": BENCH_REPO_ID, "number": LONG_NUMBER}
    with anyio.fail_after(60):
        async with client_for(sandbox, clock, transport, mode) as client:
            first = await client.call_tool("wait_for_pipeline", {**where, "timeout_seconds": 20})
            clock.advance(LONG_RUNS_FOR)  # the model calls again, an hour later
            again = await client.call_tool("wait_for_pipeline", where)
    assert not first.is_error, text_of(first)
    out = first.structured_content or {}
    assert (out["finished"], out["status"], out["waited_seconds"]) == (False, "running", 20.0)
    assert f"Pipeline {LONG_NUMBER} of repository {BENCH_REPO_ID} has not finished" in text_of(first)
    assert "wait_for_pipeline again" in text_of(first) and '"finished":false' in text_of(first)
    assert not again.is_error, text_of(again)
    after = again.structured_content or {}
    assert (after["finished"], after["status"], after["polls"]) == (True, "success", 1)
    assert "finished: success" in text_of(again)


async def test_the_sandbox_finishes_its_running_pipelines_by_its_clock(
    clocked: tuple[FakeClock, Sandbox],
) -> None:
    clock, sandbox = clocked
    with sandbox.state.lock:
        sandbox.world.settle()
        assert sandbox.world.pipeline(BENCH_REPO_ID, SLOW_NUMBER).status == "running"  # type: ignore[union-attr]
    clock.advance(SLOW_RUNS_FOR)
    with sandbox.state.lock:
        sandbox.world.settle()
        slow = sandbox.world.pipeline(BENCH_REPO_ID, SLOW_NUMBER)
        long = sandbox.world.pipeline(BENCH_REPO_ID, LONG_NUMBER)
        assert slow is not None and long is not None
        assert (slow.status, slow.finished) == ("failure", int(START) + SLOW_RUNS_FOR)
        assert [(s.name, s.state, s.exit_code) for s in slow.steps()] == [
            ("clone", "success", 0),
            ("test", "failure", 1),
        ]
        assert slow.workflows[0].state == "failure" and long.status == "running"
