"""Putting a question on a page the server shows the person itself, in a browser on this machine (stdio).

A page is keyed by the call it asks about (its keyed fingerprint and the reasons it asks), so that a
retry of the same call waits on the same page, and another call never collects its answer.
"""

from typing import Protocol

from domain.guard.approval_page import Collected
from ports.progress import Progress


class ApprovalPages(Protocol):
    # How long one call waits for the page's decision (WOODPECKER_MCP_APPROVAL_WAIT_SECONDS): under
    # the 60 s after which clients commonly give up.
    window_seconds: float

    async def available(self) -> bool:
        """Whether a browser can be opened at all (a graphical one, or the program `$BROWSER` names)."""
        ...

    async def show(self, key: str, question: str, ttl_seconds: int) -> bool:
        """Put `question` on a page for `key` in front of the person: the page already open for `key`
        (no second tab), or a new one opened in the browser. False: no browser could be opened."""
        ...

    async def wait(self, key: str, window_seconds: float, progress: Progress | None) -> Collected:
        """Wait up to `window_seconds` for the page of `key` to be decided. A decision is collected
        exactly once; `pending` when none came in the window (the page stays open), `expired` when
        the page's life ended unanswered."""
        ...
