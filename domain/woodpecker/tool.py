"""A Woodpecker tool's one declaration: what every forge's tool has (ToolSpec), and what Woodpecker adds.

The resource modules of domain/woodpecker/catalogue/ declare each tool once, with everything the
server needs to list it, validate a call, ask a person, send its requests, shape its answer and
explain its failures. Nothing about a tool is kept in a table keyed by its name elsewhere.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from domain.tools import ToolSpec
from domain.woodpecker.answers import Answer
from domain.woodpecker.asking import Builder

if TYPE_CHECKING:  # requests reads the declarations, so these are imported for the types only
    from typing import TypeAlias

    from domain.woodpecker.before_asking import BeforeAsking
    from domain.woodpecker.plans import FindInPages, Plan
    from domain.woodpecker.read_back import ReadBack
    from domain.woodpecker.reads import Probe
    from domain.woodpecker.requests import Request

    GuardRead: TypeAlias = Request | Probe | FindInPages

# The read a conditional guard compares against, or None when no comparing field is present.
# A mapping names several reads; the guard then gets one object with each answer under its key
# (a Probe or a FindInPages among them: domain/woodpecker/reads.py).
CurrentReads = Callable[[Mapping[str, Any]], "Request | Mapping[str, GuardRead] | None"]
# What a tool's quirks add to the hint for a failure of a kind: a sentence, or one worked out from
# the arguments and Woodpecker's error detail.
Hint = str | Callable[[Mapping[str, Any], str | None], str | None]


@dataclass(frozen=True, slots=True)
class WoodpeckerTool(ToolSpec):
    """A tool of the Woodpecker catalogue.

    `answer`: the shape of its result. `question` and `why`: for a guarded tool, the dialog's text
    and the sentence the guide's guard table shows. `hints`: failure kind -> what this tool's own
    quirks add. `changes`: for an update, the arguments it can change (a call naming none is
    refused). `unsupported`: an argument the schema accepts but Woodpecker discards, and why (a
    call carrying it is refused). `wildcard`: the path argument Woodpecker routes as a wildcard
    (its slashes travel literally). `current`: the reads its conditional guard compares against.
    `plan`: how it runs when that is more than its one main request (domain/woodpecker/plans.py).
    `settled`: the one read that tells whether its write took effect, when its outcome is unknown
    (domain/woodpecker/read_back.py). `before_asking`: the one read made before a person is asked,
    which can find nothing to decide or a fact the question says (domain/woodpecker/before_asking.py).
    `arguments_check`: a rule across its arguments the schema cannot say (one of two, a total size):
    the refusal's words, naming the problem and the fix, or None.
    """

    answer: Answer | None = None
    question: Builder | None = None
    why: str | None = None
    hints: Mapping[str, Hint] = field(default_factory=dict)
    changes: tuple[str, ...] = ()
    unsupported: tuple[str, str] | None = None
    wildcard: str | None = None
    current: CurrentReads | None = None
    plan: "Plan | None" = None
    settled: "ReadBack | None" = None
    before_asking: "BeforeAsking | None" = None
    arguments_check: Callable[[Mapping[str, Any]], str | None] | None = None


def woodpecker(tool: ToolSpec) -> WoodpeckerTool:
    """The tool's Woodpecker declaration. A ToolSpec built by hand (a test's) gets the declaration of
    the catalogue's tool of that name, or declares nothing more."""
    if isinstance(tool, WoodpeckerTool):
        return tool
    from domain.woodpecker.catalogue import WOODPECKER_TOOLS  # the catalogue imports this module

    declared = WOODPECKER_TOOLS.get(tool.name) if tool.name in WOODPECKER_TOOLS else None
    extra = {f: getattr(declared, f) for f in _OWN_FIELDS} if isinstance(declared, WoodpeckerTool) else {}
    return WoodpeckerTool(**{f: getattr(tool, f) for f in ToolSpec.__dataclass_fields__}, **extra)


_OWN_FIELDS = tuple(f for f in WoodpeckerTool.__dataclass_fields__ if f not in ToolSpec.__dataclass_fields__)
