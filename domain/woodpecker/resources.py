"""Woodpecker objects as MCP resources: three URI templates, each read through one read-only tool, and the links a cut result carries.

A resource is a tool call by another name (docs/adr/0028-resolve-pasted-links-and-serve-resources.md):
`woodpecker://repos/{repo_id}` is `get_repository`, `.../pipelines/{number}` is `get_pipeline`, and
`.../pipelines/{number}/steps/{step_id}/log{?from_line}` is `get_step_logs` reading forward from
`from_line` (0 when absent), one page at a time. So reading one goes through the same argument
checks, gateway, budgets, redaction and untrusted markers as the tool, and is served only to a
caller who may call that tool.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.logs import lines_around
from domain.woodpecker.answers import Answer, FailedSteps, LogLines, LogMatches

SCHEME = "woodpecker"
LOG_PAGE_LINES = 1000  # lines asked for per page of a log; the byte budget may show fewer


@dataclass(frozen=True, slots=True)
class Template:
    """One resource template and the read-only tool that reads what it names."""

    uri_template: str
    name: str
    title: str
    description: str
    tool: str
    arguments: tuple[str, ...]  # the template's variables, in order


REPOSITORY = Template(
    f"{SCHEME}://repos/{{repo_id}}",
    "repository",
    "Repository",
    "A Woodpecker repository and its settings (what get_repository answers).",
    "get_repository",
    ("repo_id",),
)
PIPELINE = Template(
    f"{SCHEME}://repos/{{repo_id}}/pipelines/{{number}}",
    "pipeline",
    "Pipeline",
    "A pipeline with its workflows and steps, their states and exit codes (what get_pipeline answers).",
    "get_pipeline",
    ("repo_id", "number"),
)
STEP_LOG = Template(
    f"{SCHEME}://repos/{{repo_id}}/pipelines/{{number}}/steps/{{step_id}}/log{{?from_line}}",
    "step-log",
    "Step log",
    "A step's log from line from_line on (0 when left out), as many lines as fit one result; the "
    "result's last_line + 1 is where the next page starts. step_id is the step's id, not its pid.",
    "get_step_logs",
    ("repo_id", "number", "step_id", "from_line"),
)
TEMPLATES: tuple[Template, ...] = (REPOSITORY, PIPELINE, STEP_LOG)

_ID = r"([0-9]{1,16})"
_URI = re.compile(
    rf"^{SCHEME}://repos/{_ID}(?:/pipelines/{_ID}(?:/steps/{_ID}/log(?:\?from_line={_ID})?)?)?$"
)


class NotAResource(ValueError):
    """A URI none of the templates names. `str(e)` says which ones there are."""


def not_served(template: Template) -> NotAResource:
    """A template this caller may not read: its tool is not in the caller's list."""
    return NotAResource(f"{template.title} resources are not served to this caller.")


@dataclass(frozen=True, slots=True)
class ResourceRead:
    """The tool call that reads a resource."""

    template: Template
    tool: str
    arguments: dict[str, Any]


def read_of(uri: str) -> ResourceRead:
    """The tool call for `uri`. Ids are ASCII digits; the tool's own checks bound them.

    Raises:
        NotAResource: `uri` is not one of the three shapes.
    """
    found = _URI.fullmatch(uri)
    if found is None:
        shapes = ", ".join(t.uri_template for t in TEMPLATES)
        raise NotAResource(f"Not a resource of this server; the resources are {shapes}.")
    repo_id, number, step_id, from_line = found.groups()
    if number is None:
        return ResourceRead(REPOSITORY, REPOSITORY.tool, {"repo_id": int(repo_id)})
    if step_id is None:
        return ResourceRead(PIPELINE, PIPELINE.tool, {"repo_id": int(repo_id), "number": int(number)})
    args = {
        "repo_id": int(repo_id),
        "number": int(number),
        "step_id": int(step_id),
        "from_line": int(from_line or 0),
        "limit": LOG_PAGE_LINES,
    }
    return ResourceRead(STEP_LOG, STEP_LOG.tool, args)


def repository_uri(repo_id: int) -> str:
    return f"{SCHEME}://repos/{repo_id}"


def pipeline_uri(repo_id: int, number: int) -> str:
    return f"{repository_uri(repo_id)}/pipelines/{number}"


def log_uri(repo_id: int, number: int, step_id: int, from_line: int | None = None) -> str:
    uri = f"{pipeline_uri(repo_id, number)}/steps/{step_id}/log"
    return uri if not from_line else f"{uri}?from_line={from_line}"


# ---------------------------------------------------------------------- links in a cut result


@dataclass(frozen=True, slots=True)
class Link:
    """A `resource_link` content block: a resource that reads what a result left out."""

    uri: str
    name: str
    description: str
    tool: str = STEP_LOG.tool  # the tool that reads it


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _whole_log(repo_id: int, number: int, step_id: int) -> Link:
    return Link(
        log_uri(repo_id, number, step_id),
        f"log of step {step_id}",
        f"The whole log of step {step_id}, a page at a time from its first line.",
    )


def _log_links(repo_id: int, number: int, step_id: int, structured: Mapping[str, Any]) -> list[Link]:
    total = _int(structured.get("total_lines")) or 0
    first, last = _int(structured.get("first_line")), _int(structured.get("last_line"))
    cut = bool(structured.get("cut_lines"))
    whole = first == 0 and last is not None and last + 1 >= total and not cut
    if total == 0 or whole:
        return []
    links = [_whole_log(repo_id, number, step_id)]
    _, after = lines_around(first, last, total)  # the same next page the result's text names
    if after is not None:
        links.append(
            Link(
                log_uri(repo_id, number, step_id, after),
                f"log of step {step_id} from line {after}",
                f"The next page of this log: lines {after} on.",
            )
        )
    return links


def links_for(
    answer: Answer | None, args: Mapping[str, Any], structured: Mapping[str, Any]
) -> tuple[Link, ...]:
    """The resources that read what a successful result did not show, by the kind of its answer: a log
    window links the whole log and its next page, a search the whole log, a failure summary the log of
    each failed step it left lines of. None for a result that shows everything."""
    repo_id, number, step_id = _int(args.get("repo_id")), _int(args.get("number")), _int(args.get("step_id"))
    if repo_id is None or number is None:
        return ()
    if isinstance(answer, LogLines) and step_id is not None:
        return tuple(_log_links(repo_id, number, step_id, structured))
    if isinstance(answer, LogMatches) and step_id is not None:
        # A search shows matching lines, not the log: the whole log reads around them.
        return (_whole_log(repo_id, number, step_id),) if _int(structured.get("total_lines")) else ()
    if isinstance(answer, FailedSteps):
        failed = [
            s for s in structured.get("failed_steps") or [] if isinstance(s, Mapping) and s.get("left_out")
        ]
        return tuple(
            _whole_log(repo_id, number, i) for s in failed if (i := _int(s.get("step_id"))) is not None
        )
    return ()


# -------------------------------------------------------------------------------- completion

MAX_COMPLETIONS = 100  # the most values one completion may carry (MCP)


def complete(value: str, candidates: list[tuple[str, str]]) -> tuple[list[str], int]:
    """The candidate values (`(value, label)`, e.g. a repository's id and full name) that the typed
    `value` starts, or that it occurs in the label of (case-insensitive); at most MAX_COMPLETIONS,
    and how many matched in all."""
    typed = value.strip().casefold()
    matched = [v for v, label in candidates if not typed or v.startswith(typed) or typed in label.casefold()]
    unique = list(dict.fromkeys(matched))
    return unique[:MAX_COMPLETIONS], len(unique)
