"""Time, as the core sees it."""

from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch (wall clock; tokens and seals expire by it)."""
        ...
