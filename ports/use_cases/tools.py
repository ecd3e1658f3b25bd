"""Running one tool against Woodpecker: validate, plan the requests, send them, shape the result.

(Interface pinned for parallel work; the implementation lands with the tools issue.)
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.tools import Catalogue
from ports.woodpecker import Credential, WoodpeckerGateway


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call answers: structured content, a short text, and whether it is an error."""

    structured: Mapping[str, Any]
    text: str
    is_error: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)


class InvalidArguments(ValueError):
    """The arguments do not fit the tool's schema. `str(e)` names the problem and the fix."""


class ToolRunner:
    def __init__(self, catalogue: Catalogue, gateway: WoodpeckerGateway) -> None:
        self.catalogue = catalogue
        self.gateway = gateway

    def validate(self, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Return the normalised arguments (defaults applied), or raise InvalidArguments.

        Never touches Woodpecker.
        """
        raise NotImplementedError

    async def read_current(
        self, tool: str, arguments: Mapping[str, Any], credential: Credential | None
    ) -> Mapping[str, Any] | None:
        """The stored object a conditional guard compares against, or None when no comparing
        field is present (then nothing is read)."""
        raise NotImplementedError

    async def run(
        self, tool: str, arguments: Mapping[str, Any], credential: Credential | None
    ) -> ToolResult:
        """Execute the tool (no guard here: the caller has already decided). Woodpecker
        failures come back as an error ToolResult with a hint, never as an exception."""
        raise NotImplementedError
