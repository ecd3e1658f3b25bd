"""A tool's multi-step workflow, declared as data: the requests it sends in order, and what each needs.

Most tools send one request, planned from their main endpoint (requests.plan). A tool that needs more
(an update Woodpecker applies as a whole record, a grant after a create, a read-back of what was
stored) declares a `Calls` plan; ports/use_cases/tools.py runs every plan the same way and shapes the
answer of the last request sent. Reading a step's log is not an HTTP request of this kind: the tools
that do declare which reading they are (`StepLog`, `StepLogSearch`, `FailureSummary`,
`ServerInfo`), as do `resolve` (`Resolve`), the history (`PipelineHistory`) and the config check (`ValidateConfig`, which
sends nothing), and the runner has one method for each kind, none for a tool.

Checks return the message of what went wrong (the runner reports it as an unreadable answer);
nothing here sends anything.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.woodpecker.requests import Request

Args = Mapping[str, Any]
# The data each earlier request answered, by the call's name.
Answers = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Call:
    """One request of a plan.

    `request` builds it from the arguments and the earlier answers (a ValueError when a stored record
    cannot be read); None is the tool's main request, planned from its main endpoint. `check` reads its answer (data and status): a message when it is not what the
    plan needs, else None. `only_if`: sent only when it holds for the arguments. `failed`: the message
    to give instead when this request or its check fails, from the arguments, the answers so far and
    the failure's own message (the first request's effect stands, the caller must be told).
    """

    name: str
    request: Callable[[Args, Answers], Request] | None = None
    check: Callable[[Args, Answers, Any, int], str | None] | None = None
    only_if: Callable[[Args], bool] | None = None
    failed: Callable[[Args, Answers, str], str] | None = None


@dataclass(frozen=True, slots=True)
class FindInPages:
    """Walk a list page by page until an entry matches; its answer is that entry.

    `page` builds the request for a page number (from 1). A page shorter than `page_size` is the last;
    at most `max_pages` are read (bounded work per call). `not_found` is the message when no entry
    matched; `not_a_list` when a page is not a list.
    """

    name: str
    page: Callable[[Args, int], Request]
    matches: Callable[[Args, Mapping[str, Any]], bool]
    page_size: int
    max_pages: int
    not_found: Callable[[Args], str]
    not_a_list: str
    only_if: Callable[[Args], bool] | None = None


Step = Call | FindInPages


@dataclass(frozen=True, slots=True)
class Calls:
    """Requests sent in order; the answer of the last one sent is the tool's result."""

    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """The version and the health check, at the server root and without a credential."""


@dataclass(frozen=True, slots=True)
class StepLog:
    """A window of one step's log lines, after checking that the step belongs to the pipeline."""


@dataclass(frozen=True, slots=True)
class StepLogSearch:
    """The lines of one step's log that match a pattern, with context."""


@dataclass(frozen=True, slots=True)
class FailureSummary:
    """A pipeline's failed steps, each with its error-looking lines and its last lines."""


@dataclass(frozen=True, slots=True)
class Resolve:
    """Read a pasted link or name (domain/woodpecker/references.py), then look up what it names: the
    repository, the pipeline when a number is named, and a step of it by pid or name."""


@dataclass(frozen=True, slots=True)
class WaitForPipeline:
    """Read a pipeline again and again, pausing on the clock, until it finishes or a window passes."""


@dataclass(frozen=True, slots=True)
class PipelineHistory:
    """List a repository's pipelines in pages, read each finished one with its steps (a few at a time,
    within a request budget and a time bound), and analyse them (domain/woodpecker/history.py)."""


@dataclass(frozen=True, slots=True)
class ValidateConfig:
    """Read the workflow files passed, check them as Woodpecker's linter would, and send nothing
    (domain/woodpecker/workflow_lint.py): it needs no server, no token and no setup."""


Plan = (
    Calls
    | ServerInfo
    | StepLog
    | StepLogSearch
    | FailureSummary
    | Resolve
    | WaitForPipeline
    | PipelineHistory
    | ValidateConfig
)
