"""SystemClock reads the wall clock."""

import time

from adapters.system_clock import SystemClock


def test_the_system_clock_reads_wall_clock_seconds_since_the_epoch() -> None:
    before = time.time()
    now = SystemClock().now()
    after = time.time()
    assert before <= now <= after


async def test_the_system_clock_sleeps_through_the_event_loop() -> None:
    # Only that it returns through anyio (a timed assert would fail by chance on a loaded machine).
    await SystemClock().sleep(0)
