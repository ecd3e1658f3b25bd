"""The pipeline history's analysis (domain/woodpecker/history.py) and its answer (results/history.py),
property-tested over generated histories: every count, flake, red branch and pair is checked against
the pipelines themselves, by a brute-force reading that shares no code with the analysis."""

import json
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.history import FAILED_STATES, analyse, percentile
from domain.woodpecker.results import output_schema
from domain.woodpecker.results.history import Reading, shape_history

STEPS = ("N4m3-alpha", "N4m3-beta", "N4m3-gamma")  # a marker no sentence of ours contains
BRANCHES = ("B7anch-main", "B7anch-dev")
STATES = ("success", "failure", "killed", "error", "skipped", "canceled", "pending")
STATUSES = ("success", "failure", "error", "killed", "running", "blocked", "canceled")
TOOL = WOODPECKER_TOOLS.get("analyze_pipeline_history")
SCHEMA = jsonschema.Draft202012Validator(output_schema(TOOL))


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Pipelines 1..n of a few commits and two branches; a restart copies its parent's commit and branch."""
    n = draw(st.integers(0, 30))
    out: list[dict[str, Any]] = []
    for number in range(1, n + 1):
        parent = draw(st.sampled_from([0, *range(1, number)])) if number > 1 else 0
        if parent and draw(st.booleans()):
            commit, branch = out[parent - 1]["commit"], out[parent - 1]["branch"]
        else:
            parent = 0
            commit = draw(st.sampled_from(["a1" * 20, "b2" * 20, "c3" * 20, "d4" * 20]))
            branch = draw(st.sampled_from(BRANCHES))
        steps = []
        for pid, name in enumerate(draw(st.lists(st.sampled_from(STEPS), unique=True)), start=2):
            started = draw(st.integers(0, 1000))
            steps.append(
                {
                    "id": number * 100 + pid,
                    "pid": pid,
                    "name": name,
                    "state": draw(st.sampled_from(STATES)),
                    "started": started,
                    "finished": started + draw(st.integers(-5, 600)),
                }
            )
        out.append(
            {
                "number": number,
                "parent": parent,
                "commit": commit,
                "branch": branch,
                "event": draw(st.sampled_from(["push", "push", "manual", "pull_request"])),
                "status": draw(st.sampled_from(STATUSES)),
                "workflows": [{"name": "w", "children": steps}],
            }
        )
    return out


def _state(pipeline: Mapping[str, Any], name: str) -> str | None:
    return next((s["state"] for s in pipeline["workflows"][0]["children"] if s["name"] == name), None)


@given(histories())
def test_no_step_fails_more_often_than_it_ran_nor_is_flaky_more_often_than_it_failed(
    pipelines: list[dict[str, Any]],
) -> None:
    history = analyse(pipelines)
    for s in history.steps:
        ran = [p for p in pipelines if _state(p, s.key[1]) in ("success", *FAILED_STATES)]
        failed = [p for p in ran if _state(p, s.key[1]) in FAILED_STATES]
        assert (s.runs, s.failures) == (len(ran), len(failed))
        assert 0 <= s.flaky <= s.failures <= s.runs
        assert s.older.runs + s.newer.runs == s.runs and s.older.failures + s.newer.failures == s.failures
        assert 0.0 <= s.failure_rate <= 1.0
        if s.median_seconds is not None and s.p90_seconds is not None:
            assert s.median_seconds <= s.p90_seconds
    assert history.pipelines == len(pipelines)


@given(histories())
def test_a_flaky_step_always_has_a_failed_and_a_later_passed_run_of_the_same_commit(
    pipelines: list[dict[str, Any]],
) -> None:
    by_number = {p["number"]: p for p in pipelines}
    history = analyse(pipelines)
    for f in history.flakes:
        failed, passed = by_number[f.failed], by_number[f.passed]
        assert f.failed < f.passed and failed["commit"] == passed["commit"] == f.commit
        assert _state(failed, f.key[1]) in FAILED_STATES and _state(passed, f.key[1]) == "success"
        chain, at = [], passed["parent"]
        while at:
            chain.append(at)
            at = by_number[at]["parent"]
        assert (f.via == "restart") == (f.failed in chain)
    # Every failed run followed by a passing run of its commit is one.
    expected = {
        (name, a["number"])
        for a in pipelines
        for name in STEPS
        if _state(a, name) in FAILED_STATES
        and any(
            b["number"] > a["number"] and b["commit"] == a["commit"] and _state(b, name) == "success"
            for b in pipelines
        )
    }
    assert {(f.key[1], f.failed) for f in history.flakes} == expected


@given(histories())
def test_a_red_branch_failed_last_and_has_no_success_since_its_first_failure(
    pipelines: list[dict[str, Any]],
) -> None:
    history = analyse(pipelines)
    finished = [
        p
        for p in pipelines
        if p["event"] != "pull_request" and p["status"] in ("success", "failure", "error", "killed")
    ]
    red = {r.branch: r for r in history.red}
    for branch in BRANCHES:
        mine = [p for p in finished if p["branch"] == branch]
        if not mine or mine[-1]["status"] == "success":
            assert branch not in red
            continue
        r = red[branch]
        greens = [p["number"] for p in mine if p["status"] == "success"]
        assert r.last_success == (greens[-1] if greens else None)
        assert r.last_success_commit == (
            next(p["commit"] for p in mine if p["number"] == greens[-1]) if greens else None
        )
        since_green = [p for p in mine if p["number"] > (r.last_success or 0)]
        assert list(r.failing) == [p["number"] for p in since_green] and r.since == r.failing[0]
        assert all(p["status"] != "success" for p in since_green)
        assert set(r.commits) == {p["commit"] for p in since_green}


@given(histories())
def test_pairs_failing_together_are_every_pair_that_failed_in_two_pipelines_or_more(
    pipelines: list[dict[str, Any]],
) -> None:
    history = analyse(pipelines)
    counted: dict[tuple[str, str], list[int]] = {}
    for p in pipelines:
        failed = sorted(n for n in STEPS if _state(p, n) in FAILED_STATES)
        for a, b in combinations(failed, 2):
            counted.setdefault((a, b), []).append(p["number"])
    expected = {pair: numbers for pair, numbers in counted.items() if len(numbers) >= 2}
    assert {(t.first[1], t.second[1]): list(t.pipelines) for t in history.together} == expected


@given(histories(), st.booleans(), st.sampled_from([None, "its request budget (510) was spent"]))
def test_the_answer_fits_its_schema_and_its_summary_names_no_step_or_branch(
    pipelines: list[dict[str, Any]], with_branch: bool, stopped: str | None
) -> None:
    args: dict[str, Any] = {"repo_id": 1, "limit": 50, **({"branch": BRANCHES[0]} if with_branch else {})}
    reading = Reading(limit=50, listed=len(pipelines), requests=len(pipelines) + 1, stopped_early=stopped)
    result = shape_history(args, analyse(pipelines), reading)
    SCHEMA.validate(result.structured)
    summary = result.text.splitlines()[1]
    assert "N4m3" not in summary and "B7anch" not in summary
    assert (stopped is not None) == ("stopped early" in summary) == result.structured["read"]["stopped_early"]
    assert f"{len(pipelines)} pipeline(s) read" in summary
    assert json.loads(result.text.splitlines()[2])["read"]["pipelines"] == len(pipelines)


def test_the_answer_stays_under_its_budget_however_many_steps_failed() -> None:
    pipelines = [
        {
            "number": n,
            "commit": f"{n:040x}",
            "branch": "main",
            "event": "push",
            "status": "failure",
            "workflows": [
                {"name": "w", "children": [{"name": f"s{i}", "state": "failure"} for i in range(60)]}
            ],
        }
        for n in range(1, 41)
    ]
    result = shape_history({"repo_id": 1}, analyse(pipelines), Reading(limit=40, listed=40, requests=41))
    assert len(json.dumps(result.structured)) + len(json.dumps(result.text)) <= 60_000
    assert result.structured["dropped"]["fail_together"] > 0


@given(st.lists(st.integers(0, 10_000), min_size=1))
def test_a_percentile_is_a_value_with_that_share_at_or_below_it(values: list[int]) -> None:
    for fraction in (0.5, 0.9):
        p = percentile(values, fraction)
        assert p in values
        assert sum(v <= p for v in values) >= fraction * len(values)
        assert sum(v < p for v in values) < fraction * len(values)
