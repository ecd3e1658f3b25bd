"""A seeded pipeline history for analyze_pipeline_history's tests and bench: many pushes to one branch, a
flaky step restarted and passing, a flaky step passing in a new pipeline of the same commit, two steps
failing together, and the branch red at the end.

`add_history` adds it to a repository of a world (the bench repository by default), numbered after its
pipelines, and returns what it seeded, so a test compares the tool's answer with the seed's own record.
"""

import dataclasses
from dataclasses import dataclass

from sandbox.models import Pipeline
from sandbox.seed_pipelines import StepSpec, _add_config, _add_workflows, _pipeline, _sha
from sandbox.seed_text import BENCH_REPO_ID, T0
from sandbox.world import World

HISTORY_BRANCH = "main"
HISTORY_WORKFLOW = "build"
HISTORY_STEPS = ("clone", "build", "test", "lint")
RED_TAIL = 3  # the last pipelines, each a new commit whose test fails
FLAKY_EVERY = 10  # commit c with c % 10 == 3: test fails, a restart of it passes
TOGETHER_EVERY = 25  # c % 25 == 7: test and lint fail together
REPUSH_EVERY = 40  # c % 40 == 11: test fails, a new pipeline of the same commit passes
MIN_COUNT = RED_TAIL + 2


@dataclass(frozen=True)
class Row:
    commit: int  # commit index
    failing: frozenset[str]
    restart_of: int | None = None  # index of the row it restarts


@dataclass
class SeededHistory:
    """What add_history seeded: pipeline numbers, oldest first, and the facts the analysis should find."""

    numbers: list[int] = dataclasses.field(default_factory=list)
    commits: dict[int, str] = dataclasses.field(default_factory=dict)  # number -> SHA
    flakes: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)  # failed, passed, via
    together: list[int] = dataclasses.field(default_factory=list)  # pipelines where test and lint failed
    test_failures: int = 0
    red_since: int = 0
    last_success: int = 0
    red_commits: list[str] = dataclasses.field(default_factory=list)


def plan(count: int) -> list[Row]:
    """`count` rows: the history, ending in a success and then RED_TAIL failing commits."""
    if count < MIN_COUNT:
        raise ValueError(f"a history has at least {MIN_COUNT} pipelines")
    body = count - RED_TAIL - 1  # then one success, then the red tail
    rows: list[Row] = []
    c = 0
    while len(rows) < body:
        room = body - len(rows)
        if c % FLAKY_EVERY == 3 and room >= 2:
            rows.append(Row(c, frozenset({"test"})))
            rows.append(Row(c, frozenset(), restart_of=len(rows) - 1))
        elif c % REPUSH_EVERY == 11 and room >= 2:
            rows.append(Row(c, frozenset({"test"})))
            rows.append(Row(c, frozenset()))
        elif c % TOGETHER_EVERY == 7:
            rows.append(Row(c, frozenset({"test", "lint"})))
        else:
            rows.append(Row(c, frozenset()))
        c += 1
    rows.append(Row(c, frozenset()))
    rows.extend(Row(c + 1 + i, frozenset({"test"})) for i in range(RED_TAIL))
    return rows


def _seconds(step: str, commit: int) -> int:
    return {"clone": 5, "build": 30 + commit % 10, "test": 60 + (commit * 7) % 50, "lint": 10}[step]


def add_history(world: World, count: int = 500, repo_id: int = BENCH_REPO_ID) -> SeededHistory:
    """Seed `count` pipelines of pushes to HISTORY_BRANCH in repository `repo_id`."""
    repo = world.repos[repo_id]
    seeded = SeededHistory()
    first = world.next_number(repo_id)
    rows = plan(count)
    for index, row in enumerate(rows):
        number = first + index
        status = "failure" if row.failing else "success"
        steps: list[StepSpec] = [
            (
                name,
                "commands",
                "failure" if name in row.failing else "success",
                1 if name in row.failing else 0,
                None,
            )
            for name in HISTORY_STEPS
        ]
        pipeline: Pipeline = _pipeline(
            world, repo, number, "push", status, HISTORY_BRANCH, f"commit {row.commit}", "ada", {}
        )
        pipeline.id = world.new_id()  # clear of every seeded id and of the ids new rows take
        pipeline.commit = _sha(f"{repo.full_name}@history/{row.commit}")
        pipeline.created = T0 + 5_000_000 + index * 600
        pipeline.started = pipeline.created + 5
        if row.restart_of is not None:
            pipeline.parent = first + row.restart_of
            pipeline.rerun_count = 1
        _add_workflows(world, pipeline, [(HISTORY_WORKFLOW, status, steps)])
        at = pipeline.started
        for step in pipeline.steps():
            step.started, step.finished = at, at + _seconds(step.name, row.commit)
            at = step.finished
        pipeline.finished = pipeline.updated = at
        for workflow in pipeline.workflows:
            workflow.started, workflow.finished = pipeline.started, at
        _add_config(world, repo, pipeline.id)
        world.pipelines[pipeline.id] = pipeline
        seeded.numbers.append(number)
        seeded.commits[number] = pipeline.commit
        if "test" in row.failing:
            seeded.test_failures += 1
        if row.failing == {"test", "lint"}:
            seeded.together.append(number)
    # The facts, from the rows: a failed test followed by a passing run of the same commit.
    for index, row in enumerate(rows):
        if "test" not in row.failing:
            continue
        later = next((j for j in range(index + 1, len(rows)) if rows[j].commit == row.commit), None)
        if later is not None and not rows[later].failing:
            via = "restart" if rows[later].restart_of == index else "new pipeline"
            seeded.flakes.append((first + index, first + later, via))
    tail = len(rows) - RED_TAIL
    seeded.red_since, seeded.last_success = first + tail, first + tail - 1
    seeded.red_commits = [seeded.commits[first + i] for i in range(tail, len(rows))]
    return seeded
