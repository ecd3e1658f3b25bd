"""A window of a step's log as a result: cleaned lines, cut at a line boundary under the log budget."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.tools import ToolSpec
from domain.woodpecker.results.budget import LOG_BUDGET, fit_prefix
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, Shaped, warned
from domain.woodpecker.results.text import cut, log_text, short

LINE_CAP = 4_000  # characters of one log line


@dataclass(frozen=True, slots=True)
class LogPiece:
    number: int
    text: str


def shape_logs(
    tool: ToolSpec,
    args: Mapping[str, Any],
    lines: Sequence[LogPiece],
    total_lines: int,
    step: Mapping[str, Any] | None,
    *,
    budget: int = LOG_BUDGET,
) -> Shaped:
    """A window of a step's log, cut at a line boundary under `budget` bytes (the lines nearest the end
    being read are kept), with the step's state and exit code."""
    from_end = args.get("from", "tail")
    cleaned = []
    for piece in sorted(lines, key=lambda p: p.number):
        text = log_text(piece.text)
        if len(text) > LINE_CAP:
            text = cut(text, LINE_CAP)
        cleaned.append({"line": piece.number, "text": text})
    info: dict[str, Any] = {}
    if step is not None:
        info = {k: step[k] for k in ("id", "pid", "name", "state", "exit_code", "type") if k in step}
    out: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "step": info,
        "total_lines": total_lines,
        "from": from_end,
        "limit": args.get("limit", 200),
        "exit_code": info.get("exit_code"),
        "state": info.get("state"),
        "first_line": None,
        "last_line": None,
        "lines": [],
    }
    # Keep the lines nearest the end being read: a prefix of the reversed list for a tail window.
    ordered = cleaned if from_end == "head" else list(reversed(cleaned))
    out = fit_prefix(
        out, "lines", ordered, budget, "read a smaller window with limit, or the other end with from"
    )
    kept = out["lines"] if from_end == "head" else list(reversed(out["lines"]))
    out["lines"] = kept
    out.pop("count", None)
    if "dropped" in out:
        out["cut_lines"] = out.pop("dropped")
    if kept:
        out["first_line"] = kept[0]["line"]
        out["last_line"] = kept[-1]["line"]
    where = f"step {args.get('step_id')} of pipeline {args.get('number')} of repository {args.get('repo_id')}"
    outcome = (
        f"state {short(info.get('state', 'unknown'))}, exit code {short(info.get('exit_code', 'unknown'))}."
    )
    if kept:
        first, last = out["first_line"], out["last_line"]
        text = f"Lines {first}–{last} ({len(kept)} shown) of {total_lines} of {where}; {outcome}"
    else:
        text = f"No log lines for {where} ({total_lines} in all); {outcome}"
    if "cut_lines" in out:
        text += f" {out['cut_lines']} lines of the window left out to fit the size budget."
    return Shaped(out, warned(text))
