"""The result of a write whose outcome is unknown (guard.md §7): said as unknown, with what one read
found since, and never "try again" (a person who reads that says yes again, and it runs twice)."""

from collections.abc import Mapping
from typing import Any

from domain.calls import ToolResult
from domain.tools import ToolSpec
from domain.woodpecker.faults import Answered, Fault, Unreachable
from domain.woodpecker.read_back import Finding
from domain.woodpecker.results.errors import failed_repos, one_line, tool_hint

_LISTS = frozenset(
    {"pipelines", "secrets", "registries", "crons", "organizations", "users", "agents", "forges"}
)


def _reader(tool: ToolSpec) -> str:
    """The tool that shows what the call changed."""
    if tool.group in _LISTS:
        return f"list_{tool.group} or the matching get_* tool"
    if tool.group == "repositories":
        return "get_repository"
    return "the matching get_* or list_* tool"


def _kind(cause: Fault | None) -> str:
    """The failure kind the observed fault would have had, for the tool's own hints about it."""
    if isinstance(cause, Answered):
        return "server_error"
    return "unavailable" if isinstance(cause, Unreachable) else "bad_response"


def unknown_outcome(
    tool: ToolSpec, args: Mapping[str, Any], message: str, finding: Finding, cause: Fault | None = None
) -> ToolResult:
    """`message` says what was observed (`faults.Unsettled`'s words), `cause` the fault itself;
    `finding` what the read-back found. The tool's own hints for that fault come first (a 3.11 move
    answers 500 after moving; an instance repair names the repositories that failed)."""
    detail = cause.detail if isinstance(cause, Answered) else None
    specific = tool_hint(tool, args, _kind(cause), detail)
    if finding.found in ("none", "unread"):
        hint = (
            f"Read what Woodpecker holds now ({_reader(tool)}) before calling it again: calling it again may "
            "do it twice."
        )
    else:
        hint = (
            "A new call of this tool may do it twice if this attempt is still being carried out; when it is "
            "guarded, it is a new question to a person."
        )
    important = f"Important: {specific}" if specific else ""
    parts = (f"{tool.name}: {message.rstrip('.')}.", finding.words, important, hint)
    text = one_line(" ".join(part for part in parts if part))
    error: dict[str, Any] = {"kind": "outcome_unknown", "message": one_line(message), "hint": hint}
    if specific:
        error["hint"] = f"{specific} {hint}"
    if isinstance(cause, Answered):
        error["status"] = cause.status
    failed = failed_repos(detail) if tool.name == "repair_repository" else []
    if failed:
        error["failed_repos"] = failed
    structured: dict[str, Any] = {"error": error, "outcome": "unknown", "read_back": finding.found}
    if finding.words:
        structured["found"] = finding.words
    return ToolResult(structured, text, is_error=True, unknown=finding.found)
