"""A repository's pipeline history, analysed: per step, flaky steps, red branches and steps failing together.

Pure: it takes the pipelines as Woodpecker answered them (each with its workflows and steps, as
`GET /api/repos/{id}/pipelines/{number}` gives them) and returns plain records. Reading them, in
pages and within a budget, is ports/use_cases/history.py's work; wording them is
results/history.py's.

A step is known by its workflow and its name (two workflows may each have a `test`). A *run* is a
step that finished (success, or one of the failed states the failure summary counts: failure,
killed, error); a skipped, cancelled or unstarted step is no run. A step is *flaky* on a commit
when a run of it failed and a later pipeline of the same commit (a restart, whose `parent` is the
failed one or a restart of it, or a new pipeline of that commit) ran it and it passed.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

FAILED_STATES = ("failure", "killed", "error")
RAN_STATES = ("success", *FAILED_STATES)
# A pipeline's own outcome: what turns a branch red or green again. Others (running, blocked,
# declined, canceled, skipped) say nothing about the branch's code.
RED_STATUSES = ("failure", "error", "killed")
GREEN_STATUSES = ("success",)
# The events whose pipelines build a branch itself: a pull request's `branch` is its target.
BRANCH_EVENTS = ("push", "manual", "cron")
TOGETHER_AT_LEAST = 2  # pipelines two steps failed in together before the pair is shown

StepKey = tuple[str, str]  # (workflow name, step name)


@dataclass(frozen=True, slots=True)
class Run:
    """One finished run of a step."""

    number: int  # the pipeline's number
    commit: str
    failed: bool
    seconds: int | None  # finished - started, when Woodpecker gave both
    pid: int | None


@dataclass(frozen=True, slots=True)
class Half:
    runs: int
    failures: int
    median_seconds: int | None


@dataclass(frozen=True, slots=True)
class StepStats:
    key: StepKey
    runs: int
    failures: int
    flaky: int  # failed runs a later run of the same commit passed
    median_seconds: int | None
    p90_seconds: int | None
    older: Half
    newer: Half
    latest_pid: int | None  # the step's pid in the newest pipeline that ran it

    @property
    def failure_rate(self) -> float:
        return round(self.failures / self.runs, 3) if self.runs else 0.0

    @property
    def trend(self) -> Literal["worse", "better", "steady"]:
        """The failure rate of the newer half against the older half's."""
        old = self.older.failures * max(self.newer.runs, 1)
        new = self.newer.failures * max(self.older.runs, 1)
        return "worse" if new > old else "better" if new < old else "steady"


@dataclass(frozen=True, slots=True)
class Flake:
    """A step's failed run, and the later run of the same commit that passed."""

    key: StepKey
    commit: str
    failed: int  # pipeline number
    passed: int  # pipeline number
    via: Literal["restart", "new pipeline"]


@dataclass(frozen=True, slots=True)
class RedBranch:
    """A branch whose newest finished pipeline failed: the first failing one after its last success
    (None: no success was read), and every failing pipeline and commit since, oldest first."""

    branch: str
    since: int
    last_success: int | None
    failing: tuple[int, ...]
    commits: tuple[str, ...]
    last_success_commit: str | None = None  # what the failing commits are compared with


@dataclass(frozen=True, slots=True)
class Together:
    first: StepKey
    second: StepKey
    pipelines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class History:
    pipelines: int  # read with their steps
    numbers: tuple[int, ...]  # oldest first
    steps: tuple[StepStats, ...]  # most failures first
    flakes: tuple[Flake, ...]
    red: tuple[RedBranch, ...]
    together: tuple[Together, ...]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def runs_of(pipeline: Mapping[str, Any]) -> dict[StepKey, Run]:
    """The finished steps of one pipeline by key (a key twice in one pipeline: its first run)."""
    number = _int(pipeline.get("number"))
    if number is None:
        return {}
    out: dict[StepKey, Run] = {}
    for workflow in pipeline.get("workflows") or []:
        if not isinstance(workflow, Mapping):
            continue
        for step in workflow.get("children") or []:
            if not isinstance(step, Mapping) or step.get("state") not in RAN_STATES:
                continue
            key = (_text(workflow.get("name")), _text(step.get("name")))
            started, finished = _int(step.get("started")), _int(step.get("finished"))
            seconds = finished - started if started and finished and finished >= started else None
            out.setdefault(
                key,
                Run(
                    number,
                    _text(pipeline.get("commit")),
                    step.get("state") in FAILED_STATES,
                    seconds,
                    _int(step.get("pid")),
                ),
            )
    return out


def percentile(values: Sequence[int], fraction: float) -> int | None:
    """The nearest-rank percentile (0.5: the median) of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-int(fraction * 1000) * len(ordered) // 1000))  # ceil without floats drifting
    return ordered[min(rank, len(ordered)) - 1]


def _half(runs: Sequence[Run]) -> Half:
    return Half(
        len(runs),
        sum(r.failed for r in runs),
        percentile([r.seconds for r in runs if r.seconds is not None], 0.5),
    )


def _restart_of(child: int, ancestor: int, parents: Mapping[int, int]) -> bool:
    """Whether pipeline `child` is a restart of `ancestor`, through its chain of parents."""
    seen = set()
    at = parents.get(child, 0)
    while at and at not in seen:
        if at == ancestor:
            return True
        seen.add(at)
        at = parents.get(at, 0)
    return False


def _flakes(by_step: Mapping[StepKey, Sequence[Run]], parents: Mapping[int, int]) -> list[Flake]:
    out = []
    for key, runs in by_step.items():
        for i, run in enumerate(runs):
            if not run.failed or not run.commit:
                continue
            later = next(
                (r for r in runs[i + 1 :] if r.commit == run.commit and not r.failed),
                None,
            )
            if later is not None:
                via: Literal["restart", "new pipeline"] = (
                    "restart" if _restart_of(later.number, run.number, parents) else "new pipeline"
                )
                out.append(Flake(key, run.commit, run.number, later.number, via))
    return out


def red_branches(
    pipelines: Iterable[Mapping[str, Any]], events: Sequence[str] = BRANCH_EVENTS
) -> list[RedBranch]:
    """Each branch whose newest finished pipeline (of `events`) failed, from the pipelines' list
    fields alone (number, branch, event, status, commit)."""
    by_branch: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in pipelines:
        if _int(p.get("number")) is None or p.get("event") not in events:
            continue
        if p.get("status") in RED_STATUSES or p.get("status") in GREEN_STATUSES:
            by_branch[_text(p.get("branch"))].append(p)
    out = []
    for branch, finished in by_branch.items():
        finished.sort(key=lambda p: p["number"])
        if finished[-1].get("status") not in RED_STATUSES:
            continue
        last_green = next(
            (i for i in range(len(finished) - 1, -1, -1) if finished[i]["status"] in GREEN_STATUSES), None
        )
        failing = finished[(last_green + 1) if last_green is not None else 0 :]
        commits: list[str] = []
        for p in failing:
            commit = _text(p.get("commit"))
            if commit and commit not in commits:
                commits.append(commit)
        out.append(
            RedBranch(
                branch,
                failing[0]["number"],
                None if last_green is None else finished[last_green]["number"],
                tuple(p["number"] for p in failing),
                tuple(commits),
                None if last_green is None else (_text(finished[last_green].get("commit")) or None),
            )
        )
    return sorted(out, key=lambda r: (r.since, r.branch))


def _together(failed_in: Mapping[int, Sequence[StepKey]]) -> list[Together]:
    pairs: dict[tuple[StepKey, StepKey], list[int]] = defaultdict(list)
    for number in sorted(failed_in):
        for first, second in combinations(sorted(set(failed_in[number])), 2):
            pairs[(first, second)].append(number)
    found = [Together(a, b, tuple(ns)) for (a, b), ns in pairs.items() if len(ns) >= TOGETHER_AT_LEAST]
    return sorted(found, key=lambda t: (-len(t.pipelines), t.first, t.second))


def analyse(
    pipelines: Iterable[Mapping[str, Any]],
    listed: Iterable[Mapping[str, Any]] = (),
    red_events: Sequence[str] = BRANCH_EVENTS,
) -> History:
    """The history of `pipelines` (read with their steps, any order). `listed`: the list entries
    read, for the branches' outcomes (a pipeline not read with its steps still turns a branch red);
    the pipelines themselves count too. `red_events`: the events whose pipelines build a branch."""
    read = {n: p for p in pipelines if (n := _int(p.get("number"))) is not None}
    numbers = tuple(sorted(read))
    parents = {n: _int(read[n].get("parent")) or 0 for n in numbers}
    by_step: dict[StepKey, list[Run]] = defaultdict(list)
    failed_in: dict[int, list[StepKey]] = defaultdict(list)
    for n in numbers:
        for key, run in runs_of(read[n]).items():
            by_step[key].append(run)
            if run.failed:
                failed_in[n].append(key)
    flakes = _flakes(by_step, parents)
    flaky = Counter(f.key for f in flakes)
    stats = []
    for key, runs in by_step.items():
        durations = [r.seconds for r in runs if r.seconds is not None]
        middle = len(runs) // 2
        stats.append(
            StepStats(
                key,
                len(runs),
                sum(r.failed for r in runs),
                flaky[key],
                percentile(durations, 0.5),
                percentile(durations, 0.9),
                _half(runs[:middle]),
                _half(runs[middle:]),
                runs[-1].pid,
            )
        )
    stats.sort(key=lambda s: (-s.failures, -s.flaky, s.key))
    outcomes = {n: p for p in listed if (n := _int(p.get("number"))) is not None}
    outcomes.update(read)
    return History(
        len(numbers),
        numbers,
        tuple(stats),
        tuple(sorted(flakes, key=lambda f: (f.key, f.failed))),
        tuple(red_branches(outcomes.values(), red_events)),
        tuple(_together(failed_in)),
    )
