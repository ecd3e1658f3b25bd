"""A window of a step's log as a result: cleaned lines, cut at a line boundary under the log budget."""

from collections.abc import Mapping, Sequence
from typing import Any

from domain.calls import ToolResult
from domain.logs import LogLine, LogMatch, lines_around
from domain.tools import ToolSpec
from domain.woodpecker.results.budget import LOG_BUDGET, fit_prefix
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, known
from domain.woodpecker.results.render import Summarised, TextMode, fit
from domain.woodpecker.results.text import cut, log_text, short

LINE_CAP = 4_000  # characters of one log line


def _clean(piece: LogLine) -> dict[str, Any]:
    text = log_text(piece.text)
    return {"line": piece.number, "text": cut(text, LINE_CAP) if len(text) > LINE_CAP else text}


def _step_info(step: Mapping[str, Any] | None) -> dict[str, Any]:
    if step is None:
        return {}
    return {k: step[k] for k in ("id", "pid", "name", "state", "exit_code", "type") if k in step}


def _where(args: Mapping[str, Any]) -> str:
    return f"step {args.get('step_id')} of pipeline {args.get('number')} of repository {args.get('repo_id')}"


def _outcome(info: Mapping[str, Any]) -> str:
    return (
        f"state {short(info.get('state', 'unknown'))}, exit code {short(info.get('exit_code', 'unknown'))}."
    )


def shape_logs(
    tool: ToolSpec,
    args: Mapping[str, Any],
    lines: Sequence[LogLine],
    total_lines: int,
    step: Mapping[str, Any] | None,
    *,
    budget: int = LOG_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    """A window of a step's log, cut at a line boundary so that its structured content and text
    together stay under `budget` bytes (the lines nearest the end being read are kept), with the
    step's state and exit code."""
    cleaned = [_clean(piece) for piece in sorted(lines, key=lambda p: p.number)]
    return fit(lambda inner: _window(args, cleaned, total_lines, step, inner), budget, text)


def _window(
    args: Mapping[str, Any],
    cleaned: Sequence[Mapping[str, Any]],
    total_lines: int,
    step: Mapping[str, Any] | None,
    budget: int,
) -> Summarised:
    from_end = args.get("from", "tail")
    info = _step_info(step)
    out: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "step": info,
        "total_lines": total_lines,
        "from": from_end,
        "limit": args.get("limit", 200),
        **known(exit_code=info.get("exit_code"), state=info.get("state")),
        "lines": [],
    }
    for bound in ("from_line", "to_line"):
        if args.get(bound) is not None:
            out[bound] = args[bound]
    # Keep the lines nearest the end being read: a prefix of the reversed list for a tail window.
    ordered = list(cleaned) if from_end == "head" else list(reversed(cleaned))
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
    where, outcome = _where(args), _outcome(info)
    if kept:
        first, last = out["first_line"], out["last_line"]
        summary = f"Lines {first}–{last} ({len(kept)} shown) of {total_lines} of {where}; {outcome}"
    else:
        summary = f"No log lines for {where} ({total_lines} in all); {outcome}"
    if "cut_lines" in out:
        summary += f" {out['cut_lines']} lines of the window left out to fit the size budget."
    return Summarised(out, summary + _around(kept, total_lines))


def _around(kept: Sequence[Mapping[str, Any]], total_lines: int) -> str:
    """The calls that read the lines before and after a window that is not the whole log, for a
    model that reads only the text (a client that drops the resource links drops the next page)."""
    if not kept or len(kept) >= total_lines:
        return ""
    before, after = lines_around(kept[0]["line"], kept[-1]["line"], total_lines)
    more = ""
    if before is not None:
        more += f" Earlier lines: get_step_logs with to_line={before}."
    if after is not None:
        more += f" Later lines: get_step_logs with from_line={after}."
    return more


def shape_search(
    tool: ToolSpec,
    args: Mapping[str, Any],
    hits: Sequence[LogMatch],
    total_matches: int,
    total_lines: int,
    step: Mapping[str, Any] | None,
    *,
    budget: int = LOG_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    """The matches of a log search in log order, as many as fit `budget` (structured content and
    text together), each with its context lines."""
    info = _step_info(step)
    matches = [
        {
            **_clean(hit.line),
            "before": [_clean(p) for p in hit.before],
            "after": [_clean(p) for p in hit.after],
        }
        for hit in hits
    ]
    out: dict[str, Any] = {
        **UNTRUSTED_MARKERS,
        "step": info,
        "pattern": args.get("pattern"),
        "total_lines": total_lines,
        "total_matches": total_matches,
        **known(exit_code=info.get("exit_code"), state=info.get("state")),
        "matches": [],
    }
    return fit(
        lambda inner: _search(args, out, matches, total_matches, total_lines, info, inner), budget, text
    )


def _search(
    args: Mapping[str, Any],
    envelope: Mapping[str, Any],
    matches: Sequence[Mapping[str, Any]],
    total_matches: int,
    total_lines: int,
    info: Mapping[str, Any],
    budget: int,
) -> Summarised:
    out = fit_prefix(
        envelope, "matches", matches, budget, "ask for fewer matches with max_matches or less context"
    )
    shown = out.pop("count", 0)
    cut_matches = out.pop("dropped", 0)
    out["shown_matches"] = shown
    if cut_matches:
        out["cut_matches"] = cut_matches
    where, outcome = _where(args), _outcome(info)
    pattern = short(args.get("pattern", ""))
    if not total_matches:
        summary = f"No line of {where} matches {pattern} ({total_lines} lines searched); {outcome}"
    else:
        numbers = ", ".join(str(m["line"]) for m in out["matches"])
        summary = (
            f"{total_matches} of {total_lines} lines of {where} match {pattern}; "
            f"showing {shown} (lines {numbers}) with {args.get('context', 0)} lines of context; {outcome}"
        )
        if shown < total_matches:
            summary += (
                f" {total_matches - shown} more not shown: raise max_matches, narrow the pattern, or read "
                "around a line with get_step_logs from_line."
            )
    return Summarised(out, summary)
