"""Time, as the core sees it."""

from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch (wall clock; tokens and seals expire by it)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Let `seconds` pass (a waiting tool between two polls). A test clock moves its own time."""
        ...
