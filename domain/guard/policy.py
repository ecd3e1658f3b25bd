"""Whether a call asks a person, decided from data alone; unknown conditions ask (fail closed)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from domain.tools import ToolSpec

# The reason every always-guarded tool gives.
ALWAYS = "always"
# The reason given when a tool names a condition nobody supplied a rule for.
NO_RULE = "no_rule"


class WideningRule(Protocol):
    """One forge-specific condition under which a conditionally guarded tool asks."""

    def needs_current(self, args: Mapping[str, Any]) -> bool:
        """True only when a field whose effect depends on the stored object is present."""
        ...

    def reasons(self, args: Mapping[str, Any], current: Mapping[str, Any] | None) -> frozenset[str]:
        """Why this call widens reach; empty when it does not.

        `current` is the stored object, or None when it was not (or could not be) read; a rule
        must then assume the widening case.
        """
        ...


@dataclass(frozen=True, slots=True)
class Decision:
    """Ask or proceed, and the stable reason ids behind an ask."""

    ask: bool
    reasons: frozenset[str]


PROCEED = Decision(ask=False, reasons=frozenset())


def needs_current(tool: ToolSpec, args: Mapping[str, Any], rules: Mapping[str, WideningRule]) -> bool:
    """Whether deciding this call needs the stored object read first."""
    guard = tool.guard
    if guard is None or guard.always or not guard.needs_current_state:
        return False
    rule = rules.get(guard.when)
    return rule is not None and rule.needs_current(args)


def decide(
    tool: ToolSpec,
    args: Mapping[str, Any],
    current: Mapping[str, Any] | None,
    rules: Mapping[str, WideningRule],
) -> Decision:
    """Unguarded: proceed. Always-guarded: ask. Conditional: ask iff the rule finds a widening."""
    guard = tool.guard
    if guard is None:
        return PROCEED
    if guard.always:
        return Decision(ask=True, reasons=frozenset({ALWAYS}))
    rule = rules.get(guard.when)
    if rule is None:
        return Decision(ask=True, reasons=frozenset({NO_RULE}))
    reasons = frozenset(rule.reasons(args, current))
    return Decision(ask=bool(reasons), reasons=reasons)


def covers(approved: frozenset[str], now: frozenset[str]) -> bool:
    """Re-check at apply time: an approval still covers the call iff nothing new widens.

    `now` holds the reasons decided again just before the write; a reason the person did
    not see means asking again.
    """
    return now <= approved
