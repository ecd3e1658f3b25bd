"""The Concurrency port on anyio: one task group, a capacity limiter bounding the jobs running at once."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


class AnyioConcurrency:
    async def run(self, jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
        results: list[Any] = [None] * len(jobs)
        limiter = anyio.CapacityLimiter(max(limit, 1))

        async def one(index: int, job: Callable[[], Awaitable[T]]) -> None:
            async with limiter:
                results[index] = await job()

        try:
            async with anyio.create_task_group() as group:
                for index, job in enumerate(jobs):
                    group.start_soon(one, index, job)
        except BaseExceptionGroup as raised:
            # The port raises the job's own exception, as running them one at a time would.
            raise raised.exceptions[0] from None
        return results
