"""Whether a call asks a person, decided from data alone; unknown conditions ask (fail closed)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from domain.tools import ToolSpec

# The reason every always-guarded tool gives.
ALWAYS = "always"
# The reason given when a tool names a condition nobody supplied a rule for.
NO_RULE = "no_rule"
# The reason given when the operator's policy (`ask = "always"`) makes a call ask that would not
# have asked otherwise: a question the policy added (docs/adr/0079).
POLICY_ASK = "policy"
# The `when` of the guard rule the policy gives a tool that had none: it asks only by the policy.
BY_POLICY = "policy"


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
    """Unguarded: proceed. Always-guarded: ask. Conditional: ask iff the rule finds a widening.

    The operator's policy can only add a question: a tool whose policy says `ask_always` asks on
    every call, with the reason `POLICY_ASK` when nothing else would have asked. (A denied tool
    is refused before anything is decided: `denied`.)
    """
    decision = _decide(tool, args, current, rules)
    if not decision.ask and tool.policy is not None and tool.policy.ask_always:
        return Decision(ask=True, reasons=frozenset({POLICY_ASK}))
    return decision


def _decide(
    tool: ToolSpec,
    args: Mapping[str, Any],
    current: Mapping[str, Any] | None,
    rules: Mapping[str, WideningRule],
) -> Decision:
    guard = tool.guard
    if guard is None or guard.when == BY_POLICY:
        return PROCEED
    if guard.always:
        return Decision(ask=True, reasons=frozenset({ALWAYS}))
    rule = rules.get(guard.when)
    if rule is None:
        return Decision(ask=True, reasons=frozenset({NO_RULE}))
    reasons = frozenset(rule.reasons(args, current))
    return Decision(ask=bool(reasons), reasons=reasons)


def denied(tool: ToolSpec) -> bool:
    """Whether the operator's policy denies every call of this tool."""
    return tool.policy is not None and tool.policy.deny


def runs_unasked(tool: ToolSpec) -> bool:
    """Whether every call of this tool runs with no question and no refusal: only such a tool can be
    read as a resource, which has no way to ask (a tool the policy makes ask has a guard then)."""
    return tool.guard is None and not denied(tool)


def lifetime(tool: ToolSpec, default: int) -> int:
    """How long this tool's question, seal, ticket or token lives: `default`, or the policy's
    shorter `expires_in` (a policy never makes one live longer)."""
    if tool.policy is None or tool.policy.expires_in is None:
        return default
    return min(default, tool.policy.expires_in)


def covers(approved: frozenset[str], now: frozenset[str]) -> bool:
    """Re-check at apply time: an approval still covers the call iff nothing new widens.

    `now` holds the reasons decided again just before the write; a reason the person did
    not see means asking again. `POLICY_ASK` asks only that a person approve this call, which
    any approval of it is.
    """
    return now - {POLICY_ASK} <= approved
