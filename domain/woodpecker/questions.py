"""The question a guarded Woodpecker tool asks: each tool declares its own (domain/woodpecker/catalogue/).

How a question is put together, and what may appear in it, is domain/woodpecker/asking.py.
"""

from collections.abc import Mapping
from typing import Any

from domain.guard.policy import POLICY_ASK, Decision
from domain.guard.question import build
from domain.tools import ToolSpec
from domain.woodpecker.asking import UNDESCRIBED, Builder, argument_lines, field_lines
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.tool import WoodpeckerTool, woodpecker


def question_for(tool: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    """The dialog message for this call. Deterministic: same tool, arguments and decision, same text.

    A question the operator's policy added (`POLICY_ASK`) says so in its last sentence; a tool with
    no question of its own then lists the arguments it runs with (ADR 0079).
    """
    builder = woodpecker(tool).question
    if POLICY_ASK in decision.reasons:
        if builder is None:
            what = f"This will run {tool.name}."
            cost = [_READS] if tool.is_read else []
            return build(what, [*cost, POLICY_ASKS], argument_lines(tool, args)).message
        message = builder(tool, args, decision.reasons).message
        return f"{message}{'' if message.endswith(chr(10)) else ' '}{POLICY_ASKS}"
    if builder is None:
        # A guarded tool without its own text still asks; its name is ours, never Woodpecker's.
        return build(f"This will run {tool.name}.", [UNDESCRIBED], field_lines(tool, args)).message
    return builder(tool, args, decision.reasons).message


# The last sentence of a question the operator's policy added.
POLICY_ASKS = "This server's policy asks a person before every call of this tool."
_READS = "It changes nothing in Woodpecker."

_DECLARED = [t for t in WOODPECKER_TOOLS if isinstance(t, WoodpeckerTool)]
# Each guarded tool's question, by name (read from the declarations; for tests and documentation).
QUESTIONS: Mapping[str, Builder] = {t.name: t.question for t in _DECLARED if t.question is not None}
# Why each guarded tool asks, in a sentence: the guard table of docs/tools.md and the guide.
WHY_IT_ASKS: Mapping[str, str] = {t.name: t.why for t in _DECLARED if t.why is not None}
