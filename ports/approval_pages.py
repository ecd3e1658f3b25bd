"""Putting a question on a page the server shows the person itself, in a browser on this machine (stdio).

A page is keyed by the call it asks about (its keyed fingerprint and the reasons it asks), so that a
retry of the same call waits on the same page, and another call never collects its answer.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from domain.guard.approval_page import Collected
from ports.progress import Progress

Shown = Literal["shown", "refused", "unavailable"]


class PageOpener(Protocol):
    """Another way to bring the page before the person than the server's own browser: URL-mode
    elicitation, where the client shows the link to the person (never to the model)."""

    async def open(self, url: str, message: str) -> Literal["opened", "refused", "unavailable"]:
        """Offer `url`; `opened`: the person agreed to open it (only that: the page decides);
        `refused`: they would not; `unavailable`: the client could not be asked."""
        ...

    async def done(self) -> None:
        """The page has been answered (URL mode's `notifications/elicitation/complete`). Never raises."""
        ...


@dataclass(frozen=True, slots=True)
class Offered:
    """A page's link for the client to offer the person (2026-07-28: in an `input_required` result),
    and the elicitation id that names it there. Never shown to the model."""

    url: str
    elicitation_id: str


@dataclass(frozen=True, slots=True)
class Approver:
    """Who answered a page behind a sign-in (OAuth mode): the identity provider's subject, a name or
    e-mail for the audit, and whether they are someone other than the caller (four eyes held)."""

    subject: str
    name: str
    other_than_caller: bool


@dataclass(frozen=True, slots=True)
class Asking:
    """Who asks a page's question (OAuth mode): the tool, the caller's principal (by default only the
    caller may answer), and where a refused answer is recorded (the audit), as it happens. `line`: that
    refused audit line made ahead without its approver, for a replica that serves the page but did not
    ask it (it holds no call to record through)."""

    tool: str
    principal: str | None
    refused: Callable[[Approver], None]
    line: Mapping[str, object] | None = None


class ApprovalPages(Protocol):
    # How long one call waits for the page's decision (WOODPECKER_MCP_APPROVAL_WAIT_SECONDS): under
    # the 60 s after which clients commonly give up.
    window_seconds: float

    async def available(self) -> bool:
        """Whether a browser can be opened at all (a graphical one, or the program `$BROWSER` names)."""
        ...

    async def show(
        self,
        key: str,
        question: str,
        ttl_seconds: int,
        via: PageOpener | None = None,
        asking: Asking | None = None,
    ) -> Shown:
        """Put `question` on a page for `key` in front of the person: the page already open for `key`
        (no second tab), or a new one, opened in the browser or offered `via` the client. `unavailable`:
        no browser could be opened (or the client could not be asked); `refused`: the person would not
        open it."""
        ...

    async def offer(
        self, key: str, question: str, ttl_seconds: int, asking: Asking | None = None
    ) -> Offered | None:
        """The link of the page for `key`: the one still pending for it (the same URL again), or a new
        one showing `question`. Opens nothing: the client offers it. None: no page can be served."""
        ...

    async def withdraw(self, key: str) -> None:
        """The person would not open the page of `key`: it says declined, and nobody collects it."""
        ...

    async def wait(self, key: str, window_seconds: float, progress: Progress | None) -> Collected:
        """Wait up to `window_seconds` for the page of `key` to be decided. A decision is collected
        exactly once; `pending` when none came in the window (the page stays open), `expired` when
        the page's life ended unanswered."""
        ...

    def decided_by(self, key: str) -> Approver | None:
        """Who decided the page of `key` that `wait` last collected, once (None: nobody signed in)."""
        ...
