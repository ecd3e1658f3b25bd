"""A failed pipeline's failed steps in one result: exit codes, error-looking lines and last lines, one budget shared fairly."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.calls import ToolResult
from domain.logs import LogLine
from domain.tools import ToolSpec
from domain.woodpecker.results.budget import LOG_BUDGET, size
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, known
from domain.woodpecker.results.logs import LINE_CAP
from domain.woodpecker.results.render import Summarised, TextMode, fit
from domain.woodpecker.results.text import cut, log_text, short

# What "looks like an error" in a build log: one RE2 alternative per kind of tool output, matched
# within each line (docs/tools.md lists them under get_pipeline_failure_summary).
ERROR_SIGNS: tuple[tuple[str, str], ...] = (
    ("a failed Go test", r"--- FAIL: "),
    ("a test runner's FAIL line (go test, jest)", r"^\s*FAIL\b"),
    ("pytest's summary of a failed test", r"^FAILED "),
    ("error: from a compiler, linter or tool (gcc, rustc, go vet, git)", r"(?i:\berror(?:\[[A-Z]*\d+\])?:)"),
    ("a Go panic", r"\bpanic:"),
    ("a Python traceback", r"Traceback \(most recent call last\)"),
    (
        "an exception or error with its message (Java, Python, JavaScript)",
        r"\b[A-Za-z_.$]*(?:Exception|Error): ",
    ),
    ("fatal:", r"(?i:\bfatal(?: error)?:)"),
    ("npm's errors", r"npm ERR!"),
    ("Maven and Gradle failures", r"\[ERROR\]|BUILD FAILURE|BUILD FAILED|FAILURE: Build failed"),
    ("a crashed process", r"Segmentation fault|core dumped|Killed\s*$"),
    ("make giving up", r"make(?:\[\d+\])?: \*\*\*"),
    ("a non-zero exit status", r"\bexit (?:status|code) [1-9]"),
)
ERROR_PATTERN = "|".join(f"(?:{pattern})" for _, pattern in ERROR_SIGNS)
FAILED_STATES = ("failure", "killed", "error")
TAIL_LINES = 30  # last lines read per failed step
ERROR_LINES = 20  # error-looking lines kept per failed step (all are counted)
# Lines kept after each error-looking line: what explains it (a Go test's file:line and want/got, a
# traceback's frames, a compiler's source line) follows it.
AFTER_LINES = 3
# No further step log is started once one call has spent this long: common clients give up on a
# request after 60 s, and a pipeline with many failed steps and slow, long logs would otherwise
# keep reading one after another (worst case: this plus one log read).
READ_SECONDS = 30


def not_read_in_time(step_id: object) -> str:
    """Why a failed step's log was left unread, and the call that reads it."""
    return (
        f"not read: this call starts no log read after {READ_SECONDS} s, so that it answers before "
        f"clients give up; search_step_logs or get_step_logs with step_id {short(step_id)} reads it"
    )


@dataclass(frozen=True, slots=True)
class StepFailure:
    """One failed step, what its log showed, or why it could not be read."""

    workflow: str
    step: Mapping[str, Any]
    errors: Sequence[LogLine] = ()
    error_count: int = 0
    # The lines after each error line, in the same order as `errors` (missing or shorter: none).
    following: Sequence[Sequence[LogLine]] = ()
    last: Sequence[LogLine] = ()
    total_lines: int = 0
    unreadable: str | None = None


def failed_steps(pipeline: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(workflow name, step) for every step in a failed state, in the pipeline's order."""
    out = []
    for workflow in pipeline.get("workflows") or []:
        if not isinstance(workflow, Mapping):
            continue
        for step in workflow.get("children") or []:
            if isinstance(step, Mapping) and step.get("state") in FAILED_STATES:
                out.append((str(workflow.get("name", "")), step))
    return out


def _line(piece: LogLine) -> dict[str, Any]:
    text = log_text(piece.text)
    return {"line": piece.number, "text": cut(text, LINE_CAP) if len(text) > LINE_CAP else text}


def _error_lines(failure: StepFailure) -> list[dict[str, Any]]:
    """Each error line, with the lines after it that are not error lines shown themselves."""
    shown = {p.number for p in failure.errors}
    out = []
    for i, piece in enumerate(failure.errors):
        entry = _line(piece)
        after = failure.following[i] if i < len(failure.following) else ()
        kept = [_line(p) for p in after[:AFTER_LINES] if p.number not in shown]
        if kept:
            entry["after"] = kept
        out.append(entry)
    return out


def _entry(failure: StepFailure) -> dict[str, Any]:
    step = failure.step
    out: dict[str, Any] = {
        "workflow": failure.workflow,
        **known(
            step_id=step.get("id"),
            pid=step.get("pid"),
            name=step.get("name"),
            state=step.get("state"),
            exit_code=step.get("exit_code"),
        ),
        "total_lines": failure.total_lines,
        "error_lines_found": failure.error_count,
        "error_lines": _error_lines(failure),
        "last_lines": [_line(p) for p in failure.last],
    }
    if failure.unreadable:
        out["log_unreadable"] = failure.unreadable
    return out


def _fit(entry: dict[str, Any], room: int) -> dict[str, Any]:
    """The entry under `room` bytes: the oldest last lines go first, then the lines after the latest
    error lines, then the latest error lines themselves."""
    # Copies, lists of after lines too: the cuts below must not reach the entry they are made from.
    errors = [{**e, "after": list(e["after"])} if "after" in e else dict(e) for e in entry["error_lines"]]
    last = list(entry["last_lines"])
    while size({**entry, "error_lines": errors, "last_lines": last}) > room and (errors or last):
        if last and (len(last) > 3 or not errors):
            last.pop(0)
        elif followed := [e for e in errors if e.get("after")]:
            followed[-1]["after"].pop()
            if not followed[-1]["after"]:
                del followed[-1]["after"]
        else:
            errors.pop()
    return {**entry, "error_lines": errors, "last_lines": last}


def _read_more(args: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    where = f"repo_id={args.get('repo_id')}, number={args.get('number')}, step_id={entry.get('step_id')}"
    return (
        f"search_step_logs({where}, pattern=...) finds any line; get_step_logs({where}, from_line=N) "
        "reads around one"
    )


def shape_failure_summary(
    tool: ToolSpec,
    args: Mapping[str, Any],
    pipeline: Mapping[str, Any],
    failures: Sequence[StepFailure],
    *,
    budget: int = LOG_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    """Every failed step with its exit code, error-looking lines and last lines, sharing `budget`
    (structured content and text together) fairly.

    Each step first gets an equal share; what a step does not need goes to the others
    (water-filling), so a short failure never starves a long one of room it could use.
    """
    return fit(lambda inner: _summary(args, pipeline, failures, inner), budget, text)


def _summary(
    args: Mapping[str, Any], pipeline: Mapping[str, Any], failures: Sequence[StepFailure], budget: int
) -> Summarised:
    header: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "pipeline": {
            k: pipeline[k] for k in ("number", "status", "event", "branch", "commit") if k in pipeline
        },
        "failed_step_count": len(failures),
    }
    if args.get("error_signs"):  # the same list in every summary: only when asked (docs/adr/0070)
        header["error_signs"] = [name for name, _ in ERROR_SIGNS]
    header["failed_steps"] = []
    entries = [_entry(f) for f in failures]
    room = max(budget - size(header) - 200, 0)
    needs = [size(e) + 1 for e in entries]
    shares = [0] * len(entries)
    left, pending = room, sorted(range(len(entries)), key=lambda i: needs[i])
    while pending:
        fair = left // len(pending)
        i = pending.pop(0)
        shares[i] = min(needs[i], fair)
        left -= shares[i]
    fitted = []
    for entry, share in zip(entries, shares, strict=True):
        kept = _fit(entry, share)
        left_out = {
            # Found but not shown: past the per-step cap, or cut for the budget.
            "error_lines": entry["error_lines_found"] - len(kept["error_lines"]),
            # Lines of the log shown neither as an error line nor as a last line.
            "other_lines": max(entry["total_lines"] - len(kept["last_lines"]) - len(kept["error_lines"]), 0),
        }
        if any(left_out.values()):
            kept["left_out"] = left_out
            kept["read_more"] = _read_more(args, entry)
        fitted.append(kept)
    out = {**header, "failed_steps": fitted}
    return Summarised(out, _text(args, pipeline, fitted))


def _text(args: Mapping[str, Any], pipeline: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> str:
    """The one-line summary; the lines themselves follow as data (see `render`). It names each step
    by its id and pid: its name and workflow, which whoever can push chose, stay in the data."""
    what = f"Pipeline {args.get('number')} of repository {args.get('repo_id')}"
    status = short(pipeline.get("status", "unknown"))
    if not steps:
        return (
            f"{what} has status {status} and no failed or killed step (a config error or a decline fails a "
            "pipeline without one; get_pipeline shows its errors)."
        )
    parts = []
    for s in steps:
        part = (
            f"step_id {short(s.get('step_id'))} (pid {short(s.get('pid'))}) {short(s.get('state'))}, exit code "
            f"{short(s.get('exit_code'))}, {s['error_lines_found']} error-looking of {s['total_lines']} lines"
        )
        if s.get("log_unreadable"):
            part += ", log not read"
        parts.append(part)
    more = (
        " Some lines are not shown: each step's read_more says which call reads them."
        if any("read_more" in s for s in steps)
        else ""
    )
    return (
        f"{what} has status {status}; {len(steps)} failed or killed step(s): " + "; ".join(parts) + "." + more
    )
