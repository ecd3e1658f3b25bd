"""A Clock that moves only when a test says so, or when the code under test sleeps on it."""

import anyio.lowlevel


class FakeClock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def set(self, now: float) -> None:
        self._now = now

    async def sleep(self, seconds: float) -> None:
        """Time passes at once (no real wait); other tasks get their turn, as with a real sleep."""
        self.sleeps.append(seconds)
        self._now += max(seconds, 0.0)
        await anyio.lowlevel.checkpoint()
