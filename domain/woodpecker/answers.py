"""What a tool answers, as part of its declaration: the shape its result is given and how its summary reads.

A summary's `{fields}` come from the answered object, then from the caller's arguments (see
results/shaping.py).
"""

from dataclasses import dataclass
from typing import Literal

# How a kept field is read: `id` a positive integer (0 is none), `flag` a boolean kept only when
# true, `time` Unix seconds (0 is not yet) kept beside `<name>_at` in ISO 8601 UTC, `subject` the
# first line of the first non-empty source, cut short, `ref` a ref left out when it only names the
# entry's branch.
FieldKind = Literal["id", "string", "boolean", "flag", "time", "subject", "ref"]


@dataclass(frozen=True, slots=True)
class Kept:
    """A field each entry of a list keeps: its name, how it is read, where from (its name by default)."""

    name: str
    kind: FieldKind
    sources: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True, slots=True)
class Glance:
    """What each entry of a list keeps (the fields a person acts on), `nested` objects kept the same
    way, and `more`: the call that has every field of one entry. `pipeline`: where an entry's
    pipeline is (None: the entry is one; else the key of a nested one) and `repo`: the entry's field
    holding its repository's id (None: the call's repo_id), for the summary's statuses."""

    fields: tuple[Kept, ...]
    more: str
    nested: tuple[tuple[str, "Glance"], ...] = ()
    pipeline: str | None = None
    repo: str | None = None


@dataclass(frozen=True, slots=True)
class Listed:
    """A list under `key`, trimmed to the budget by whole entries; with a `glance`, each entry keeps
    only its fields (docs/adr/0070)."""

    key: str
    glance: Glance | None = None


@dataclass(frozen=True, slots=True)
class One:
    """One object under `key`, summarised by `summary`. `filtered`: the call starts a pipeline, and a
    204 or a Pipeline-Filtered header means none was created (the object is then null)."""

    key: str
    summary: str
    filtered: bool = False


@dataclass(frozen=True, slots=True)
class Value:
    """One value under `key`, read from the answered object's `field` (None: the answer is the value,
    a text/plain body); `summary` names it as {value}."""

    key: str
    summary: str
    field: str | None


@dataclass(frozen=True, slots=True)
class Done:
    """An empty success (204): the result says what was done to which target."""

    summary: str


@dataclass(frozen=True, slots=True)
class LogLines:
    """A window of a step's log lines (results/logs.py)."""


@dataclass(frozen=True, slots=True)
class LogMatches:
    """A step's log lines that match a pattern, with context (results/logs.py)."""


@dataclass(frozen=True, slots=True)
class FailedSteps:
    """A pipeline's failed steps with their error-looking and last lines (results/failures.py)."""


@dataclass(frozen=True, slots=True)
class Ids:
    """The ids a pasted reference stands for, with their names and states (results/resolved.py)."""


@dataclass(frozen=True, slots=True)
class Waited:
    """A pipeline's state after waiting for it to finish, and whether it did (results/waiting.py)."""


@dataclass(frozen=True, slots=True)
class Analysed:
    """A pipeline history's analysis: per step, flaky steps, red branches, steps failing together
    (results/history.py)."""


@dataclass(frozen=True, slots=True)
class Validated:
    """Workflow files checked as Woodpecker would judge them, each finding with its line and column
    (results/config_check.py)."""


Answer = (
    Listed | One | Value | Done | LogLines | LogMatches | FailedSteps | Ids | Waited | Analysed | Validated
)
