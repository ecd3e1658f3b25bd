"""The Clock port on the operating system's wall clock."""

import time

import anyio


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)
