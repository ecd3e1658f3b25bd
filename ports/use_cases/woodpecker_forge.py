"""Woodpecker as the guarded-call use case sees it: its tools, widening rules, questions and runner."""

from domain.tools import Catalogue
from domain.woodpecker.questions import question_for
from domain.woodpecker.rules import WOODPECKER_RULES
from ports.forge import Forge
from ports.use_cases.tools import ToolRunner


def woodpecker_forge(catalogue: Catalogue, runner: ToolRunner) -> Forge:
    """`catalogue`: the tools this server offers (all of Woodpecker's, or the configured selection)."""
    return Forge(catalogue=catalogue, rules=WOODPECKER_RULES, question=question_for, calls=runner)
