"""wait_for_pipeline's loop on the Clock port: it answers when the pipeline finishes, never waits past its
window, and reports growing progress; time is a FakeClock that moves only when the code sleeps or a poll
takes time (no real sleeps)."""

from collections.abc import Sequence
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st

from domain.tools import Catalogue
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.catalogue.pipelines import with_wait_window
from domain.woodpecker.results import output_schema
from domain.woodpecker.waiting import FINISHED_STATES, MAX_POLL, MAX_WINDOW, next_pause, poll_delay
from ports.use_cases.tools import ToolRunner
from ports.woodpecker import ApiResponse, Credential, Request
from tests.fakes.clock import FakeClock
from tests.fakes.woodpecker import FakeWoodpecker

PATH = "/api/repos/6/pipelines/3"
START = 1_700_000_000.0


class TimedWoodpecker(FakeWoodpecker):
    """Each look at the pipeline takes the next of `durations` seconds on `clock`; from look `finish_at`
    (counted from 0) on, the pipeline has `final` status."""

    def __init__(
        self, clock: FakeClock, durations: Sequence[float], finish_at: int | None, final: str = "failure"
    ) -> None:
        super().__init__()
        self.clock, self.durations, self.finish_at, self.final = clock, list(durations), finish_at, final
        self.starts: list[float] = []

    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        assert (call.method, call.path) == ("GET", PATH)
        look = len(self.starts)
        self.starts.append(self.clock.now())
        self.clock.advance(self.durations[look % len(self.durations)] if self.durations else 0.0)
        done = self.finish_at is not None and look >= self.finish_at
        status = self.final if done else "running"
        steps = [{"id": 60303, "name": "test", "state": "failure" if done else "running", "exit_code": 1}]
        return ApiResponse(
            200, {"number": 3, "status": status, "workflows": [{"name": "ci", "children": steps}]}
        )


class Recorder:
    def __init__(self) -> None:
        self.reports: list[tuple[float, float | None, str]] = []

    async def report(self, progress: float, total: float | None, message: str) -> None:
        self.reports.append((progress, total, message))


async def wait(
    clock: FakeClock,
    gateway: TimedWoodpecker,
    progress: Recorder | None = None,
    tools: Catalogue = WOODPECKER_TOOLS,
    **args: Any,
) -> dict[str, Any]:
    runner = ToolRunner(tools, gateway, token_configured=True, clock=clock)
    result = await runner.run("wait_for_pipeline", {"repo_id": 6, "number": 3, **args}, None, progress)
    assert not result.is_error, result.text
    return {**result.structured, "_text": result.text}


def test_pauses_grow_to_the_cap_and_never_reach_past_the_window() -> None:
    assert [poll_delay(i) for i in range(6)] == [1.0, 1.5, 2.25, 3.375, 5.0, 5.0]
    assert next_pause(0, 44.5, 45) == 0.5 and next_pause(3, 45, 45) is None and next_pause(0, 50, 45) is None


@given(
    window=st.integers(1, MAX_WINDOW),
    durations=st.lists(st.floats(0, 20, allow_nan=False), max_size=12),
    finish_at=st.none() | st.integers(0, 40),
)
def test_the_wait_never_outlasts_its_window_whatever_each_poll_takes(
    window: int, durations: list[float], finish_at: int | None
) -> None:
    clock = FakeClock(START)
    gateway = TimedWoodpecker(clock, durations, finish_at)
    progress = Recorder()
    out = anyio.run(lambda: wait(clock, gateway, progress, timeout_seconds=window))
    # No look starts after the window, and no pause reaches past it.
    assert all(start <= START + window for start in gateway.starts)
    assert all(0 < pause <= MAX_POLL for pause in clock.sleeps)
    assert sum(clock.sleeps) <= window
    # What it says matches what happened.
    looks = len(gateway.starts)
    assert out["polls"] == looks
    assert out["finished"] is (finish_at is not None and finish_at < looks)
    took = [durations[i % len(durations)] if durations else 0.0 for i in range(looks)]
    # Only a finish, or room too small for a look as slow as the slowest so far, ends it early ...
    assert out["finished"] or out["waited_seconds"] >= window - max(took) - 0.05
    # ... and the last look ends within the window unless it was slower than every look before it.
    assert out["waited_seconds"] <= window + max(took[-1] - max(took[:-1], default=0.0), 0.0) + 0.05
    # Progress grows with every report and never passes the window.
    values = [p for p, _, _ in progress.reports]
    assert values == sorted(set(values)) and all(v <= window for v in values)
    assert all(total == window for _, total, _ in progress.reports)
    assert len(progress.reports) == len(clock.sleeps)


async def test_a_pipeline_that_finishes_inside_the_window_answers_then_with_its_failed_steps() -> None:
    clock = FakeClock(START)
    out = await wait(clock, TimedWoodpecker(clock, [0.2], finish_at=4))
    assert (out["finished"], out["status"], out["polls"]) == (True, "failure", 5)
    assert out["waited_seconds"] < 45
    assert out["failed_steps"] == [
        {"workflow": "ci", "step_id": 60303, "name": "test", "state": "failure", "exit_code": 1}
    ]
    assert "finished: failure" in out["_text"] and "get_pipeline_failure_summary" in out["_text"]
    assert '"finished":true' in out["_text"]


async def test_a_pipeline_still_running_at_the_end_of_the_window_is_no_error() -> None:
    clock = FakeClock(START)
    out = await wait(clock, TimedWoodpecker(clock, [0.0], finish_at=None), timeout_seconds=10)
    assert (out["finished"], out["status"], out["waited_seconds"]) == (False, "running", 10.0)
    assert "has not finished" in out["_text"] and "wait_for_pipeline again" in out["_text"]
    assert "failed_steps" not in out


async def test_a_call_without_timeout_seconds_waits_the_window_the_operator_configured() -> None:
    # WOODPECKER_MCP_WAIT_SECONDS=20, WOODPECKER_MCP_WAIT_MAX_SECONDS=120 (entrypoints/settings.py).
    tools = with_wait_window(WOODPECKER_TOOLS, 20, 120)
    clock = FakeClock(START)
    out = await wait(clock, TimedWoodpecker(clock, [0.0], finish_at=None), tools=tools)
    assert (out["finished"], out["waited_seconds"]) == (False, 20.0)
    clock = FakeClock(START)
    out = await wait(clock, TimedWoodpecker(clock, [0.0], finish_at=None), tools=tools, timeout_seconds=120)
    assert (out["finished"], out["waited_seconds"]) == (False, 120.0)


async def test_a_finished_or_blocked_pipeline_answers_at_once() -> None:
    for status in (*sorted(FINISHED_STATES), "blocked"):
        clock = FakeClock(START)
        out = await wait(clock, TimedWoodpecker(clock, [0.0], finish_at=0, final=status))
        assert (out["polls"], clock.sleeps, out["status"]) == (1, [], status)
        assert out["finished"] is (status != "blocked")
    assert "approve_pipeline" in out["next"]


async def test_the_result_fits_the_tools_output_schema() -> None:
    import jsonschema

    clock = FakeClock(START)
    out = await wait(clock, TimedWoodpecker(clock, [1.0], finish_at=2))
    out.pop("_text")
    jsonschema.validate(out, output_schema(WOODPECKER_TOOLS.get("wait_for_pipeline")))
    assert out["untrusted"] is True and out["source"] == "woodpecker"
