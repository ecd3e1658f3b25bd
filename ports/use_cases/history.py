"""Reading a repository's pipeline history for analyze_pipeline_history: list pages, then each pipeline
with its steps, a few at a time, within a request budget and a time bound (docs/adr/0100).

Woodpecker's list entries carry no workflows, so each pipeline is read once more by number. The
pages are read one after another (each says whether another follows); the pipelines, at most
CONCURRENCY at a time through the Concurrency port. No request starts once the call has sent
REQUEST_BUDGET of them or has spent READ_SECONDS, so that it answers before clients give up
(commonly after 60 s); the answer then says it stopped early, and analyses what it read.
"""

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.woodpecker import history
from domain.woodpecker.faults import Unexpected
from domain.woodpecker.requests import Request, segment
from domain.woodpecker.results.history import Reading, budget_spent, out_of_time, page_unread
from ports.clock import Clock
from ports.concurrency import Concurrency, OneAtATime
from ports.woodpecker import ApiResponse, TokenEchoed, WoodpeckerError, failed

PAGE_SIZE = 50  # Woodpecker's largest page
CONCURRENCY = 4  # pipeline reads in flight at once
MAX_LIMIT = 500
REQUEST_BUDGET = -(-MAX_LIMIT // PAGE_SIZE) + MAX_LIMIT  # every page and every pipeline of the largest limit
READ_SECONDS = 30
# The pipelines read with their steps: those whose steps have finished. Running, pending, blocked
# and declined ones still count for a branch's outcome from their list entry.
READ_STATUSES = ("success", "failure", "killed", "error", "canceled")

Send = Callable[[Request], Awaitable[ApiResponse]]


@dataclass
class _Spent:
    requests: int = 0
    stopped: str | None = None


class HistoryReader:
    """Reads the pipelines one call of analyze_pipeline_history analyses."""

    def __init__(
        self,
        send: Send,
        *,
        concurrency: Concurrency | None = None,
        clock: Clock | None = None,
        budget: int = REQUEST_BUDGET,
        seconds: float = READ_SECONDS,
        limit: int = CONCURRENCY,
    ) -> None:
        self.send = send
        self.concurrency = concurrency or OneAtATime()
        self.clock = clock
        self.budget = budget
        self.seconds = seconds
        self.limit = limit

    async def read(self, args: Mapping[str, Any]) -> tuple[history.History, Reading]:
        """The history of the pipelines `args` name, analysed, and how it was read. Raises the
        gateway's error when the first page cannot be read (there is nothing to analyse)."""
        start = self.clock.now() if self.clock is not None else 0.0
        spent = _Spent()

        def may_send() -> bool:
            if spent.stopped is not None:
                return False
            if spent.requests >= self.budget:
                spent.stopped = budget_spent(self.budget)
            elif self.clock is not None and self.clock.now() - start >= self.seconds:
                spent.stopped = out_of_time(self.seconds)
            if spent.stopped is not None:
                return False
            spent.requests += 1
            return True

        listed = await self._pages(args, spent, may_send)
        wanted = [p for p in listed if p.get("status") in READ_STATUSES and _number(p) is not None]
        repo = f"/api/repos/{segment(args['repo_id'])}"

        def job(entry: Mapping[str, Any]) -> Callable[[], Awaitable[Mapping[str, Any] | None]]:
            async def read_one() -> Mapping[str, Any] | None:
                if not may_send():
                    return None
                try:
                    data = (await self.send(Request("GET", f"{repo}/pipelines/{_number(entry)}"))).data
                except TokenEchoed:
                    raise  # an answer that echoes the token refuses the whole call (ADR 0047)
                except WoodpeckerError:
                    return None  # deleted meanwhile, or unreadable: counted as unread
                return data if isinstance(data, Mapping) else None

            return read_one

        read = await self.concurrency.run([job(p) for p in wanted], self.limit)
        pipelines = [p for p in read if p is not None]
        events = (args["event"],) if args.get("event") else history.BRANCH_EVENTS
        analysed = history.analyse(pipelines, listed, events)
        reading = Reading(
            limit=args["limit"],
            listed=len(listed),
            requests=spent.requests,
            stopped_early=spent.stopped,
            unread=len(wanted) - len(pipelines),
        )
        return analysed, reading

    async def _pages(
        self, args: Mapping[str, Any], spent: _Spent, may_send: Callable[[], bool]
    ) -> list[Mapping[str, Any]]:
        limit = int(args["limit"])
        query = {k: str(args[k]) for k in ("branch", "event") if args.get(k)}
        path = f"/api/repos/{segment(args['repo_id'])}/pipelines"
        listed: list[Mapping[str, Any]] = []
        page = 1
        while len(listed) < limit and may_send():
            request = Request("GET", path, query={**query, "page": str(page), "perPage": str(PAGE_SIZE)})
            try:
                data = (await self.send(request)).data
            except TokenEchoed:
                raise
            except WoodpeckerError:
                if page == 1:
                    raise
                spent.stopped = page_unread(page)
                break
            if data is None:
                data = []
            if not isinstance(data, list):
                if page == 1:
                    raise failed(Unexpected("list of pipelines"))
                spent.stopped = page_unread(page)
                break
            listed.extend(p for p in data if isinstance(p, Mapping))
            if len(data) < PAGE_SIZE:
                break
            page += 1
        return listed[:limit]


def _number(entry: Mapping[str, Any]) -> int | None:
    n = entry.get("number")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None
