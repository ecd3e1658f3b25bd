"""One tool call whose arguments were checked once (what the guard, the planner and the gateway
take), and what a tool call answers."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.tools import ToolSpec


@dataclass(frozen=True, slots=True)
class ValidCall:
    """A tool's declaration with arguments that fit it (defaults applied, normalised).

    Only a forge's `prepare` makes one, after validating; everything after it trusts `args`
    and never validates or looks the tool up again.
    """

    spec: ToolSpec
    args: Mapping[str, Any]

    @property
    def tool(self) -> str:
        return self.spec.name

    def without(self, name: str) -> "ValidCall":
        """The same call without argument `name` (e.g. the confirm_token, which is no part of the call)."""
        if name not in self.args:
            return self
        return ValidCall(self.spec, {key: value for key, value in self.args.items() if key != name})


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call answers: structured content, its text (the forge's shaping renders it from
    the content), and whether it is an error. The one result type from the shaping in the domain
    to the MCP adapter."""

    structured: Mapping[str, Any]
    text: str
    is_error: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    # Resources that read what this result left out (the whole log, its next page): the forge's own
    # link records (Woodpecker's are domain.woodpecker.resources.Link); the guard never reads them.
    links: tuple[Any, ...] = ()
    # Set when the call's outcome is unknown (its write may have reached the forge and the answer
    # was lost): what one read found since, in the forge's words for the audit ("approved", "gone",
    # "none" when no read can tell). The guard records `unknown` with it, and remembers it.
    unknown: str | None = None
