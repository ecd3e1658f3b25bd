"""What analyze_pipeline_history answers: per step, flaky steps, red branches, steps failing together.

The summary is the line a person would say ("step pid 4 (steps[0]) failed 9 of 50 runs, 4 of them
flaky (passed on rerun); the branch red since #212"), then how much was read. It names steps by pid
and by their place in `steps`, pipelines by number and commits by SHA: a step's name and workflow,
a branch's name, a commit's message and author are written by whoever can push, and stay in the data
(docs/adr/0045).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.calls import ToolResult
from domain.woodpecker.history import History, StepKey, StepStats
from domain.woodpecker.results.budget import RESULT_BUDGET, size
from domain.woodpecker.results.envelope import UNTRUSTED_MARKERS, known
from domain.woodpecker.results.render import Summarised, TextMode, fit

# Entries of each list at most (the rest are counted under `dropped`), and pipeline numbers per entry.
LIST_CAP = 50
NUMBERS_CAP = 20
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass(frozen=True, slots=True)
class Reading:
    """How the history was read: list entries, requests sent, and why it stopped before `limit`
    (None: it read every pipeline asked for, or all there were)."""

    limit: int
    listed: int
    requests: int
    stopped_early: str | None = None
    unread: int = 0  # listed pipelines whose steps could not be read


def budget_spent(budget: int) -> str:
    """Why a read stopped: the call sent as many requests as it may."""
    return f"its request budget ({budget}) was spent"


def out_of_time(seconds: float) -> str:
    """Why a read stopped: the call has run as long as a request may start."""
    return f"no request starts after {seconds:g} s, so that it answers before clients give up"


def page_unread(page: int) -> str:
    """Why a read stopped: a later page of the list failed or was no list."""
    return f"page {page} of the list could not be read"


def _step(key: StepKey) -> dict[str, str]:
    return {"workflow": key[0], "name": key[1]}


def _stats(s: StepStats) -> dict[str, Any]:
    def half(h: Any) -> dict[str, Any]:
        return {"runs": h.runs, "failures": h.failures, **known(median_seconds=h.median_seconds)}

    return {
        **_step(s.key),
        **known(pid=s.latest_pid),
        "runs": s.runs,
        "failures": s.failures,
        "failure_rate": s.failure_rate,
        "flaky": s.flaky,
        **known(median_seconds=s.median_seconds, p90_seconds=s.p90_seconds),
        "trend": s.trend,
        "older_half": half(s.older),
        "newer_half": half(s.newer),
    }


def _full(history: History, reading: Reading) -> dict[str, Any]:
    numbers = history.numbers
    read: dict[str, Any] = {
        "limit": reading.limit,
        "listed": reading.listed,
        "pipelines": history.pipelines,
        "requests": reading.requests,
        "stopped_early": reading.stopped_early is not None,
        **known(stopped_because=reading.stopped_early),
        **known(oldest=numbers[0] if numbers else None, newest=numbers[-1] if numbers else None),
    }
    if reading.unread:
        read["unread"] = reading.unread
    return {
        **UNTRUSTED_MARKERS,
        "read": read,
        "steps": [_stats(s) for s in history.steps],
        "flaky": [
            {
                **_step(f.key),
                "commit": f.commit,
                "failed_pipeline": f.failed,
                "passed_pipeline": f.passed,
                "via": f.via,
            }
            for f in history.flakes
        ],
        "red_since": [
            {
                "branch": r.branch,
                "since": r.since,
                **known(last_success=r.last_success, last_success_commit=r.last_success_commit),
                "failing_pipelines": list(r.failing),
                "commits": list(r.commits),
            }
            for r in history.red
        ],
        "fail_together": [
            {
                "steps": [_step(t.first), _step(t.second)],
                "count": len(t.pipelines),
                "pipelines": list(t.pipelines),
            }
            for t in history.together
        ],
    }


_LISTS = ("steps", "flaky", "red_since", "fail_together")
_NUMBER_LISTS = ("failing_pipelines", "commits", "pipelines")


def _capped(full: dict[str, Any], cap: int, numbers: int) -> dict[str, Any]:
    out = dict(full)
    dropped: dict[str, int] = {}
    for key in _LISTS:
        entries = []
        for entry in full[key][:cap]:
            entry = dict(entry)
            for inner in _NUMBER_LISTS:
                if inner in entry and len(entry[inner]) > numbers:
                    entry[f"{inner}_dropped"] = len(entry[inner]) - numbers
                    entry[inner] = entry[inner][-numbers:]  # the newest
            entries.append(entry)
        out[key] = entries
        if len(full[key]) > cap:
            dropped[key] = len(full[key]) - cap
    if dropped:
        out["dropped"] = dropped
    return out


def _within(full: dict[str, Any], budget: int) -> dict[str, Any]:
    """The result under `budget` bytes: lists cut to LIST_CAP, then fewer entries per list until it fits."""
    cap, numbers = LIST_CAP, NUMBERS_CAP
    out = _capped(full, cap, numbers)
    while size(out) > budget and cap > 1:
        cap, numbers = max(cap * 3 // 4, 1), max(numbers * 3 // 4, 1)
        out = _capped(full, cap, numbers)
    return out


def shape_history(
    args: Mapping[str, Any],
    history: History,
    reading: Reading,
    *,
    budget: int = RESULT_BUDGET,
    text: TextMode = "full",
) -> ToolResult:
    full = _full(history, reading)
    return fit(lambda inner: Summarised(_within(full, inner), headline(args, history, reading)), budget, text)


def _sha(commit: str) -> str | None:
    """The commit as Woodpecker gave it, when it is a hex SHA (anything else stays in the data)."""
    return commit if _SHA.match(commit) else None


def _lead(steps: Sequence[StepStats], history: History) -> str:
    failing = [s for s in steps if s.failures]
    if not steps:
        return "No step finished in the pipelines read"
    if not failing:
        return f"No step failed: {len(steps)} step(s), {sum(s.runs for s in steps)} runs"
    top = failing[0]
    who = f"step pid {top.latest_pid} (steps[0])" if top.latest_pid is not None else "steps[0]"
    line = f"{who} failed {top.failures} of {top.runs} runs, {top.flaky} of them flaky (passed on rerun"
    first = next((f for f in history.flakes if f.key == top.key), None)
    if first is not None:
        line += f", e.g. #{first.failed} then #{first.passed}"
    line += ")"
    others = len(failing) - 1
    if others:
        line += f"; {others} other step(s) failed too"
    return line[0].upper() + line[1:]


def _red(args: Mapping[str, Any], history: History) -> str:
    if not history.red:
        return "no branch is red" if "branch" not in args else "the branch is not red"
    first = history.red[0]
    since = f"red since #{first.since}"
    sha = _sha(first.commits[0]) if first.commits else None
    if sha is not None:
        since += f" (commit {sha})"
    if first.last_success is not None:
        since += f", last green #{first.last_success}"
    if "branch" in args:
        return (
            f"the branch {since}, {len(first.failing)} failing pipeline(s) and {len(first.commits)} commit(s)"
        )
    return f"{len(history.red)} branch(es) red, red_since[0] {since.removeprefix('red ')}"


def _read(history: History, reading: Reading) -> str:
    numbers = history.numbers
    span = f" (#{numbers[0]} to #{numbers[-1]})" if numbers else ""
    line = f"{history.pipelines} pipeline(s) read{span}"
    if history.pipelines < reading.listed:
        why = "had not finished" if not reading.unread else "had not finished or could not be read"
        line += f", of {reading.listed} listed (the others {why}),"
    line += f" in {reading.requests} request(s)"
    if reading.stopped_early is not None:
        return f"{line}; stopped early: {reading.stopped_early}."
    if reading.listed < reading.limit:
        return f"{line}; that is all the repository has of what was asked."
    return f"{line}, all {reading.limit} asked for."


def headline(args: Mapping[str, Any], history: History, reading: Reading) -> str:
    """The one line a person would say, then how much was read. Numbers and SHAs only."""
    return f"{_lead(history.steps, history)}; {_red(args, history)}. {_read(history, reading)}"
