"""One tool call whose arguments were checked once: what the guard, the planner and the gateway take."""

from collections.abc import Mapping
from dataclasses import dataclass
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
