"""The question a guarded Woodpecker tool asks: each tool declares its own (domain/woodpecker/catalogue/).

How a question is put together, and what may appear in it, is domain/woodpecker/asking.py.
"""

from collections.abc import Mapping
from typing import Any

from domain.guard.policy import Decision
from domain.guard.question import build
from domain.tools import ToolSpec
from domain.woodpecker.asking import UNDESCRIBED, Builder, field_lines
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.tool import WoodpeckerTool, woodpecker


def question_for(tool: ToolSpec, args: Mapping[str, Any], decision: Decision) -> str:
    """The dialog message for this call. Deterministic: same tool, arguments and decision, same text."""
    builder = woodpecker(tool).question
    if builder is None:
        # A guarded tool without its own text still asks; its name is ours, never Woodpecker's.
        return build(f"This will run {tool.name}.", [UNDESCRIBED], field_lines(tool, args)).message
    return builder(tool, args, decision.reasons).message


_DECLARED = [t for t in WOODPECKER_TOOLS if isinstance(t, WoodpeckerTool)]
# Each guarded tool's question, by name (read from the declarations; for tests and documentation).
QUESTIONS: Mapping[str, Builder] = {t.name: t.question for t in _DECLARED if t.question is not None}
# Why each guarded tool asks, in a sentence: the guard table of docs/tools.md and the guide.
WHY_IT_ASKS: Mapping[str, str] = {t.name: t.why for t in _DECLARED if t.why is not None}
