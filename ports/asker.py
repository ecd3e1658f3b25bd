"""Putting a question to the person at the client, while the call waits (2025-11-25 push)."""

from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back. Only `action == "accept"` with `confirmed` true is a yes.

    `answered` is False when no answer came back at all (the client failed, timed out, or sent
    something that is no elicitation result): a decline nobody gave, worded as such.
    """

    action: Literal["accept", "decline", "cancel"]
    confirmed: bool = False
    answered: bool = True

    @property
    def is_yes(self) -> bool:
        return self.action == "accept" and self.confirmed


class Asker(Protocol):
    async def ask(self, message: str) -> Answer:
        """Show `message` with one required boolean field, `confirm`, and wait for the answer.

        A malformed or failed answer is returned as a decline, never raised.
        """
        ...
