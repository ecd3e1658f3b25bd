"""The anyio Concurrency adapter: results in the jobs' order, never more than `limit` at once, and a
job's own exception (not an exception group) when one fails, as running them one at a time would."""

from collections.abc import Awaitable, Callable

import anyio
import pytest

from adapters.anyio_concurrency import AnyioConcurrency
from ports.concurrency import OneAtATime

pytestmark = pytest.mark.anyio


def jobs(count: int, state: dict[str, int]) -> list[Callable[[], Awaitable[int]]]:
    def job(i: int) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            await anyio.sleep(0.001 * (count - i))  # later jobs finish first
            state["now"] -= 1
            return i

        return run

    return [job(i) for i in range(count)]


@pytest.mark.parametrize("limit", [1, 3, 8])
async def test_results_keep_the_jobs_order_and_at_most_limit_run_at_once(limit: int) -> None:
    state = {"now": 0, "most": 0}
    assert await AnyioConcurrency().run(jobs(12, state), limit) == list(range(12))
    assert state["most"] == limit


class Refused(Exception):
    pass


@pytest.mark.parametrize("runner", [AnyioConcurrency(), OneAtATime()], ids=["anyio", "one-at-a-time"])
async def test_a_failing_job_raises_its_own_exception(runner: AnyioConcurrency | OneAtATime) -> None:
    async def fails() -> int:
        raise Refused("echoed")

    async def fine() -> int:
        return 1

    with pytest.raises(Refused, match="echoed"):
        await runner.run([fine, fails, fine], 2)
