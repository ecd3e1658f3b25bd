"""Telling the approvers that a question waits on the approval page, and that it ended (OAuth mode,
ADR 0087). What is told holds our own words, the tool's name, the page's id and life, and the link,
which acts only for a signed-in approver: never text from the forge or the caller, never a secret."""

from dataclasses import dataclass
from typing import Literal, Protocol

Ended = Literal["approved", "declined", "expired"]


@dataclass(frozen=True, slots=True)
class Notice:
    tool: str
    page_id: str  # the page's public id digest, as the elicitation names it
    url: str
    expires_in_seconds: int
    four_eyes: bool


class ApprovalNotices(Protocol):
    def waiting(self, notice: Notice) -> None:
        """A question waits on `notice.url`. Returns at once; delivery is bounded and never raises."""
        ...

    def ended(self, notice: Notice, how: Ended) -> None:
        """The question of `notice` ended `how`. Returns at once; delivery never raises."""
        ...
