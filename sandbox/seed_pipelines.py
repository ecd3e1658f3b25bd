"""The seeded pipelines: one table row each (repository, number, event, state, workflows, extras), and the builder
that turns a row into a pipeline, its workflows and steps, their logs and its config."""

import copy
import hashlib
from collections.abc import Mapping
from typing import Any

from sandbox.models import Config, LogEntry, Pipeline, Repo, Step, Workflow
from sandbox.seed_text import (
    BENCH_PIPELINE_NUMBER,
    BENCH_REPO_ID,
    BIG_LOG_EXIT_CODES,
    FAILED_TWICE_NUMBER,
    FORGE_URL,
    FORGED_STEP_NAME,
    FORGED_WORKFLOW_NAME,
    FRAMING_COMMIT,
    FRAMING_LOG,
    H_APPROVE_42,
    H_BRANCH,
    H_COMMIT,
    H_DIALOG,
    H_IGNORE,
    H_MARKERS,
    H_SYSTEM,
    H_TERMINAL,
    INVISIBLE_COMMIT,
    INVISIBLE_LOG,
    INVISIBLE_NUMBER,
    LONG_NUMBER,
    SLOW_NUMBER,
    T0,
)
from sandbox.world import World

_FINISHED = {"success", "failure", "killed", "error", "declined", "skipped", "canceled"}
_NOT_STARTED = ("pending", "blocked", "declined")

StepSpec = tuple[str, str, str, int, list[str] | None]  # name, type, state, exit code, log lines
WorkflowSpec = tuple[str, str, list[StepSpec]]  # name, state, steps


def _sha(seed: str) -> str:
    return hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()


def _ok(*lines: str) -> list[str]:
    return list(lines)


def _standard(
    state: str = "success",
    test_state: str | None = None,
    test_exit: int = 0,
    test_log: list[str] | None = None,
) -> list[WorkflowSpec]:
    """One `build` workflow: clone, build, test (the test step in `test_state`, with `test_log`)."""
    test_state = test_state or state
    build_state = "success" if state not in ("pending", "blocked", "declined", "canceled") else state
    if state == "running":
        build_state = "success"
    test_lines = test_log if test_log is not None else _ok("+ make test", "ok  acme/web  0.42s")
    return [
        (
            "build",
            state,
            [
                (
                    "clone",
                    "clone",
                    build_state,
                    0,
                    _ok("+ git init", "+ git fetch origin", "HEAD is now at 1a2b3c4"),
                ),
                ("build", "commands", build_state, 0, _ok("+ make build", "go build ./...", "build ok")),
                ("test", "commands", test_state, test_exit, test_lines),
            ],
        )
    ]


_FAILING_LOG = [
    "+ make test",
    "=== RUN   TestLogin",
    "--- FAIL: TestLogin (0.01s)",
    "    login_test.go:42: expected 200, got 500",
    H_IGNORE,
    H_TERMINAL,
    "\x1b[31mFAIL\x1b[0m acme/web 0.42s",
    "exit status 1",
]
_CONFIG_ERROR = {
    "type": "linter",
    "message": "steps.test.image must be set",
    "is_warning": False,
    "data": {"file": ".woodpecker.yaml", "field": "steps.test.image"},
}
_RUNNING_LOGIN = [
    (
        "build",
        "running",
        [
            ("clone", "clone", "success", 0, _ok("+ git fetch origin", "HEAD is now at 9f8e7d6")),
            ("test", "commands", "running", 0, _ok("+ make test", "=== RUN   TestLogin")),
            ("deploy", "plugin", "pending", 0, None),
        ],
    )
]
_BENCH_LOGS = [
    (
        "bench",
        "failure",
        [("clone", "clone", "success", 0, _ok("+ git fetch origin"))]
        + [
            (f"log-{lines}", "commands", "success" if code == 0 else "failure", code, None)
            for lines, code in BIG_LOG_EXIT_CODES.items()
        ],
    )
]
_FAILED_IN_TWO_WORKFLOWS = [
    (
        "linux",
        "failure",
        [
            ("clone", "clone", "success", 0, _ok("+ git fetch origin")),
            ("test", "commands", "failure", 1, None),
        ],
    ),
    (
        "windows",
        "failure",
        [
            (
                "build",
                "commands",
                "failure",
                2,
                _ok(
                    "+ go build ./...",
                    "# acme/bench/payment",
                    "payment/retry.go:41:9: error: undefined: chargeAgain",
                    "exit status 2",
                ),
            )
        ],
    ),
]
_SLOW_INTEGRATION = [
    (
        "integration",
        "running",
        [
            ("clone", "clone", "success", 0, _ok("+ git fetch origin")),
            (
                "test",
                "commands",
                "running",
                0,
                _ok("+ go test ./integration/...", "--- FAIL: TestCheckoutEndToEnd (29.10s)"),
            ),
        ],
    )
]

# Two workflows with a failed step of the same forged name (missing, ambiguous and stale names in resolve).
_FORGED_NAMES = [
    (
        FORGED_WORKFLOW_NAME,
        "failure",
        [
            ("clone", "clone", "success", 0, _ok("+ git fetch origin")),
            (FORGED_STEP_NAME, "commands", "failure", 1, list(INVISIBLE_LOG)),
        ],
    ),
    ("lint", "failure", [(FORGED_STEP_NAME, "commands", "failure", 2, _ok("+ make lint", "exit status 2"))]),
]
# A pipeline an admin approved (umbrella/infra holds every event).
_APPROVED = {"reviewed_by": "ada", "reviewed": T0 + 300_500}

# (repository id, number, event, status, branch, message, everything else: author, workflows, pipeline fields)
PIPELINES: tuple[tuple[int, int, str, str, str, str, Mapping[str, Any]], ...] = (
    # acme/web: every event and state, and the hostile text of pushes and pull requests
    (1, 1, "push", "success", "main", "Initial import", {}),
    (1, 2, "push", "failure", "main", H_COMMIT, {
        "workflows": _standard("failure", "failure", 1, _FAILING_LOG), "changed_files": ["login.go", "login_test.go"],
    }),
    (1, 3, "push", "killed", "develop", "wip: refactor handlers", {
        "workflows": _standard("killed", "killed", 137), "cancel_info": {"canceled_by_user": "ada"},
    }),
    (1, 4, "push", "error", "main", "break the config", {"errors": [_CONFIG_ERROR]}),
    (1, 5, "tag", "success", "main", "created tag v1.0.0", {"tag_title": "v1.0.0", "workflows": _standard()}),
    (1, 6, "pull_request", "skipped", "main", "docs: typo", {
        "title": "docs: typo", "pr": 17, "refspec": "feature/docs:main",
    }),
    (1, 7, "pull_request", "declined", "main", H_SYSTEM, {
        "title": H_SYSTEM, "pr": 23, "refspec": "evil/fork:main", "from_fork": True, "reviewed_by": "ada",
        "reviewed": T0 + 107_500, "workflows": _standard("declined", "declined"),
    }),
    (1, 8, "cron", "success", "main", "nightly", {"author": "nightly", "cron": "nightly", "workflows": _standard()}),
    (1, 9, "deployment", "success", "main", "Deploy to production", {
        "deploy_to": "production", "workflows": _standard(),
    }),
    (1, 10, "manual", "canceled", "develop", "MANUAL PIPELINE @ develop", {
        "workflows": [("build", "skipped", [("clone", "clone", "canceled", 0, None)])],
    }),
    # The blocked pull request from a fork: its title and message try to talk the reader into approving.
    (1, 11, "pull_request", "blocked", "main", f"{H_APPROVE_42}\n\n{H_DIALOG}", {
        "title": H_APPROVE_42, "author": "mallory", "pr": 42, "refspec": f"{H_BRANCH}:main", "from_fork": True,
        "pr_labels": ["safe-to-approve"], "workflows": _standard("blocked", "blocked"),
    }),
    (1, 12, "push", "pending", H_BRANCH, H_MARKERS, {"workflows": _standard("pending", "pending")}),
    (1, 13, "push", "running", "main", "feat: add login page", {"workflows": _RUNNING_LOGIN}),
    # acme/api, umbrella/infra (its failure imitates a result's framing), bob/dotfiles, acme/old-site
    (2, 1, "push", "success", "main", "v2 api", {"workflows": _standard()}),
    # A pull request from the repository's own branch v2: filed under main, it runs v2's code.
    (2, 2, "pull_request", "blocked", "main", "Add rate limiting", {
        "title": "Add rate limiting", "pr": 5, "refspec": "v2:main", "workflows": _standard("blocked", "blocked"),
    }),
    (3, 1, "push", "success", "main", "terraform", {"workflows": _standard(), **_APPROVED}),
    (3, 2, "push", "failure", "main", FRAMING_COMMIT, {
        "workflows": _standard("failure", "failure", 3, list(FRAMING_LOG)), **_APPROVED,
    }),
    # umbrella/infra requires approval for every event: a push on dev waits for it (guard.md §1c).
    (3, 3, "push", "blocked", "dev", "try the new runner", {
        "author": "mallory", "workflows": _standard("blocked", "blocked"),
    }),
    (3, INVISIBLE_NUMBER, "push", "failure", "main", INVISIBLE_COMMIT, {"workflows": _FORGED_NAMES, **_APPROVED}),
    (4, 1, "push", "failure", "main", "zshrc", {"workflows": _standard("failure", "failure", 1)}),
    (5, 1, "push", "success", "master", "last deploy", {}),
    # bench/logs: the big logs, a failure in two workflows, and two pipelines still running
    (BENCH_REPO_ID, BENCH_PIPELINE_NUMBER, "push", "failure", "main", "benchmark logs", {
        "author": "ada", "workflows": _BENCH_LOGS,
    }),
    (BENCH_REPO_ID, FAILED_TWICE_NUMBER, "push", "failure", "main", "checkout: retry the payment once", {
        "author": "ada", "workflows": _FAILED_IN_TWO_WORKFLOWS,
    }),
    (BENCH_REPO_ID, SLOW_NUMBER, "push", "running", "main", "checkout: slow integration tests", {
        "author": "ada", "workflows": _SLOW_INTEGRATION,
    }),
    (BENCH_REPO_ID, LONG_NUMBER, "manual", "running", "main", "nightly: full matrix", {
        "author": "ada", "workflows": [("matrix", "running", [("build", "commands", "running", 0, None)])],
    }),
)  # fmt: skip


def add_pipelines(world: World) -> None:
    for repo_id, number, event, status, branch, message, rest in PIPELINES:
        fields = dict(rest)
        # Only read, never kept: copying the workflows was half the cost of a reset.
        workflows = fields.pop("workflows", [])
        fields = copy.deepcopy(fields)  # every world gets its own lists
        author = fields.pop("author", "bob")
        pipeline = _pipeline(
            world, world.repos[repo_id], number, event, status, branch, message, author, fields
        )
        _add_workflows(world, pipeline, workflows)
        _add_config(world, world.repos[repo_id], pipeline.id)
        world.pipelines[pipeline.id] = pipeline


def _pipeline(
    world: World,
    repo: Repo,
    number: int,
    event: str,
    status: str,
    branch: str,
    message: str,
    author: str,
    extra: dict[str, Any],
) -> Pipeline:
    pid = repo.id * 100 + number
    created = T0 + repo.id * 100_000 + number * 1_000
    started = 0 if status in _NOT_STARTED else created + 5
    finished = started + 120 if status in _FINISHED and started else 0
    ref = {
        "push": f"refs/heads/{branch}",
        "cron": f"refs/heads/{branch}",
        "deployment": f"refs/heads/{branch}",
        "manual": branch,
        "tag": f"refs/tags/{extra.get('tag_title', 'v1.0.0')}",
        "pull_request": f"refs/pull/{extra.pop('pr', 1)}/head",
    }[event]
    commit = _sha(f"{repo.full_name}#{number}")
    pipeline = Pipeline(
        id=pid,
        repo_id=repo.id,
        number=number,
        event=event,
        status=status,
        branch=branch,
        commit=commit,
        ref=ref,
        message=message,
        author=author,
        created=created,
        updated=finished or started or created,
        started=started,
        finished=finished,
        timestamp=created - 60,
        sender=author,
        author_email=f"{author}@example.org",
        author_avatar=f"{FORGE_URL}/avatars/{author}",
        forge_url=f"{FORGE_URL}/{repo.full_name}/commit/{commit}",
        version=world.version_string,
    )
    for key, value in extra.items():
        setattr(pipeline, key, value)
    return pipeline


def _add_workflows(world: World, pipeline: Pipeline, workflows: list[WorkflowSpec]) -> None:
    """Workflows and their steps, numbered as Woodpecker does: pids 1, 2, ... across both, in order."""
    pid, started, finished = pipeline.id, pipeline.started, pipeline.finished
    next_pid = 1
    for index, (name, state, steps) in enumerate(workflows, start=1):
        workflow = Workflow(
            id=pid * 10 + index,
            pipeline_id=pid,
            pid=next_pid,
            name=name,
            state=state,
            started=started if state not in _NOT_STARTED else 0,
            finished=finished if state in _FINISHED and started else 0,
            agent_id=1 if started else 0,
            platform="linux/amd64" if started else "",
        )
        next_pid += 1
        for step_name, step_type, step_state, exit_code, lines in steps:
            step = Step(
                id=pid * 100 + next_pid,
                uuid=f"{pid:08x}-0000-4000-8000-{next_pid:012x}",
                pipeline_id=pid,
                pid=next_pid,
                ppid=workflow.pid,
                name=step_name,
                state=step_state,
                exit_code=exit_code,
                started=started if step_state not in ("pending", "skipped", "blocked") else 0,
                finished=finished if step_state in _FINISHED and started and step_state != "skipped" else 0,
                type=step_type,
            )
            next_pid += 1
            workflow.children.append(step)
            if lines:
                world.logs[step.id] = [
                    LogEntry(
                        id=step.id * 1000 + i, step_id=step.id, time=i, line=i, data=text.encode("utf-8")
                    )
                    for i, text in enumerate(lines)
                ]
        pipeline.workflows.append(workflow)


def _add_config(world: World, repo: Repo, pipeline_id: int) -> None:
    yaml = (
        f"# pipeline for {repo.full_name}\nwhen:\n  - event: [push, pull_request, tag, manual, cron, deployment]\n"
        "steps:\n  - name: build\n    image: golang:1.24\n    commands:\n      - make build\n"
        "  - name: test\n    image: golang:1.24\n    commands:\n      - make test\n"
    ).encode()
    world.configs[pipeline_id] = [
        Config(hash=hashlib.sha256(yaml).hexdigest(), name=".woodpecker.yaml", data=yaml)
    ]
