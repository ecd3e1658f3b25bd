"""What a forge gives the guarded-call use case: its catalogue, its rules and questions, and one port.

Nothing here knows Woodpecker. A server for another forge provides a `Forge` record (its
tool declarations, its widening rules, a function writing its questions, and an object
implementing `ForgeCalls`) and gets the whole guarded flow unchanged: the push dialog, the
sealed 2026-07-28 answer, the two-call token, the re-check right before the write, the audit.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from domain.calls import ToolResult as ToolResult
from domain.calls import ValidCall
from domain.guard.policy import Decision, WideningRule
from domain.tools import Catalogue, ToolSpec
from ports.credential import Credential
from ports.progress import Progress


class InvalidArguments(ValueError):
    """The arguments do not fit the tool's schema. `str(e)` names the problem and the fix."""


class ForgeError(Exception):
    """A forge could not be asked or refused: `str(e)` is safe to show a user (no credential in it)."""


class ForgeCalls(Protocol):
    """The one port the guarded use case drives a forge through."""

    def prepare(self, tool: str, arguments: Mapping[str, Any] | None) -> ValidCall:
        """Look `tool` up and validate `arguments` once; never touches the forge.

        Raises:
            InvalidArguments: unknown tool or arguments that do not fit; `str(e)` says how to fix them.
        """
        ...

    def setup_for(self, credential: Credential | None) -> str | None:
        """Setup instructions when a call with `credential` cannot reach the forge, else None."""
        ...

    async def current(self, call: ValidCall, credential: Credential | None) -> Mapping[str, Any] | None:
        """The stored object the call's guard rule compares against; None when nothing needs reading.

        Raises:
            ForgeError: it could not be read (the guarded call then does nothing).
        """
        ...

    async def check(self, call: ValidCall, credential: Credential | None) -> ToolResult | None:
        """Why the call cannot be what it names (the forge answers for another object than the one
        named), as an error result, before a person is asked about it; None when it may go ahead.
        `execute` checks again before it sends."""
        ...

    async def before_asking(self, call: ValidCall, credential: Credential | None) -> "Prelude":
        """Before a person is asked: what one read of the call's target found, never a write. Its
        `answer` ends a call that leaves nothing to decide (its target is not there, or its effect is
        in place already); its `facts` are reason ids the question then says. A read that fails, or
        a tool with nothing to read first, gives no answer (the call asks as before)."""
        ...

    async def execute(
        self, call: ValidCall, credential: Credential | None, progress: Progress | None = None
    ) -> ToolResult:
        """Run the call (the guard has decided). Failures are error results, never exceptions.
        `progress` hears how a long call is going, when the client asked."""
        ...


@dataclass(frozen=True, slots=True)
class Prelude:
    """What the read before a question found: `answer`, the whole answer of a call that leaves
    nothing to decide (nothing was sent); `facts`, reason ids the question says (they join the
    decision's reasons, so an approval covers only a question that said them)."""

    answer: ToolResult | None = None
    facts: frozenset[str] = frozenset()
    # An answer that ends the call whatever it carries (the read's answer echoed the token, ADR 0047).
    refusal: ToolResult | None = None


NOTHING_FOUND = Prelude()


# Writes the question a person sees for one call, given what the policy decided.
QuestionFor = Callable[[ToolSpec, Mapping[str, Any], Decision], str]


@dataclass(frozen=True, slots=True)
class Forge:
    """One forge as the guarded use case needs it."""

    catalogue: Catalogue
    rules: Mapping[str, WideningRule]
    question: QuestionFor
    calls: ForgeCalls
