"""Running a few awaitables at once, at most so many at a time (the history tool's pipeline reads)."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")


class Concurrency(Protocol):
    async def run(self, jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
        """Each job's result, in the jobs' order, with at most `limit` of them running at a time.
        A job that raises ends the others and the exception propagates (jobs catch what they expect)."""
        ...


class OneAtATime:
    """The Concurrency port without an event loop's help: each job after the other (what a runner
    built without a Concurrency adapter uses)."""

    async def run(self, jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
        return [await job() for job in jobs]
