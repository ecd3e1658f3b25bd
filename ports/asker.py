"""Putting a question to the person at the client, while the call waits (2025-11-25 push)."""

from dataclasses import dataclass
from typing import Literal, Protocol

from domain.guard.outcomes import NoAnswer


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back. Only `action == "accept"` with `confirmed` true is a yes.

    `no_answer` says why, when no answer came back at all (the client answered with an error, the
    question timed out, or what came back is no elicitation result): a no nobody gave, recorded and
    worded as such, never as the person's decline. Its `action` is then "decline" (fail closed).
    """

    action: Literal["accept", "decline", "cancel"]
    confirmed: bool = False
    no_answer: NoAnswer | None = None

    @property
    def answered(self) -> bool:
        return self.no_answer is None

    @property
    def is_yes(self) -> bool:
        return self.answered and self.action == "accept" and self.confirmed


class Asker(Protocol):
    async def ask(self, message: str) -> Answer:
        """Show `message` with one required boolean field, `confirm`, and wait for the answer.

        A malformed, failed or timed-out answer is returned as `no_answer(why)`, never raised.
        """
        ...


def no_answer(why: NoAnswer) -> Answer:
    """What an Asker returns when nothing that answers the question came back."""
    return Answer("decline", no_answer=why)
