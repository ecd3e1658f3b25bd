"""The approvers' channel through Apprise (ADR 0087): each notice goes to every URL of
WOODPECKER_MCP_APPROVAL_NOTIFY (Slack, Matrix, ntfy, e-mail, Teams, a JSON webhook, ...), on a thread,
in the background, within `timeout_seconds`. A failure or a time-out is logged (never the URLs, which
hold tokens) and changes nothing: the page still decides, a notice never approves or blocks."""

import asyncio
import logging
import warnings
from collections.abc import Sequence

import anyio

from domain.guard.outcomes import duration_words
from ports.approval_notices import Ended, Notice

logger = logging.getLogger(__name__)

_SAID: dict[Ended, str] = {
    "approved": "was approved; the call runs once",
    "declined": "was declined; nothing was done",
    "expired": "expired unanswered, which is a no; nothing was done",
}


def waiting_text(notice: Notice) -> tuple[str, str]:
    """The title and body of a waiting question's notice: our words, the tool, the page, the link."""
    who = "someone other than the caller (four eyes)" if notice.four_eyes else "an allowed approver"
    body = (
        f"A call of {notice.tool} waits for {who} on the approval page {notice.page_id[:12]}. "
        f"Sign in on the page to see the question and answer it; it expires in "
        f"{duration_words(notice.expires_in_seconds)}, which is a no.\n{notice.url}"
    )
    return f"Approval waiting: {notice.tool}", body


def ended_text(notice: Notice, how: Ended) -> tuple[str, str]:
    return (
        f"Approval ended: {notice.tool}",
        f"The question of {notice.tool} on the approval page {notice.page_id[:12]} {_SAID[how]}.",
    )


class AppriseNotices:
    """ApprovalNotices over Apprise."""

    def __init__(self, urls: Sequence[str], *, timeout_seconds: float = 10.0) -> None:
        with warnings.catch_warnings():
            # Apprise 2.2 imports the standard library's deprecated `imghdr` (gone in 3.13): its
            # warning is Apprise's to fix, not this server's to print at every start.
            warnings.simplefilter("ignore", DeprecationWarning)
            # Its plugins load at the first `add`, here at start, not on a delivery thread.
            import apprise

            self._apprise = apprise.Apprise()
            for url in urls:
                if not self._apprise.add(url):
                    logger.warning(
                        "an approval notification URL was not understood by Apprise; it is skipped"
                    )
        self._timeout = timeout_seconds
        self._tasks: set[asyncio.Task[None]] = set()

    def waiting(self, notice: Notice) -> None:
        self._send(*waiting_text(notice))

    def ended(self, notice: Notice, how: Ended) -> None:
        self._send(*ended_text(notice, how))

    def _send(self, title: str, body: str) -> None:
        try:
            task = asyncio.get_running_loop().create_task(self._deliver(title, body))
        except RuntimeError:
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, title: str, body: str) -> None:
        delivered = False
        try:
            with anyio.move_on_after(self._timeout):
                delivered = await anyio.to_thread.run_sync(
                    lambda: bool(self._apprise.notify(title=title, body=body)), abandon_on_cancel=True
                )
        except Exception as e:  # Apprise's own failure: logged, never the call's
            logger.warning("the approvers could not be told (%s)", type(e).__name__)
            return
        if not delivered:
            logger.warning("the approvers could not be told (a notification failed or timed out)")

    async def settle(self) -> None:
        """Wait for the notices under way (for tests and shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
