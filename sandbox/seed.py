"""Deterministic seed data for the simulated Woodpecker (only tokens are random), including hostile pushed text.

The sample instance is tables: people and organisations, repositories (as the forge and as
Woodpecker know them) and permissions here, pipelines in `seed_pipelines`, and the text tests
look for in `seed_text`. `seed` fills a world from them, one named step per table.
"""

import copy
from collections.abc import Callable
from typing import Any

from sandbox.biglogs import BigLog
from sandbox.cronexpr import next_exec
from sandbox.models import (
    Agent,
    Cron,
    Forge,
    ForgeRepo,
    Org,
    Perm,
    Registry,
    Repo,
    Secret,
    Task,
    User,
)
from sandbox.seed_pipelines import add_pipelines
from sandbox.seed_text import (
    ADMIN_LOGIN,
    BENCH_PIPELINE_NUMBER,
    BENCH_REPO_ID,
    BIG_LOG_EXIT_CODES,
    BIG_LOG_STEPS,
    FAILED_TWICE_LINE,
    FAILED_TWICE_LOG_STEP,
    FAILED_TWICE_NUMBER,
    FAILED_TWICE_TEST,
    FORGE_URL,
    FORGED_APPROVAL,
    FORGED_END,
    FORGED_STEP_NAME,
    FORGED_SUMMARY,
    FORGED_WARNING,
    FORGED_WORKFLOW_NAME,
    FRAMING_COMMIT,
    FRAMING_LOG,
    H_APPROVE_42,
    H_BRANCH,
    H_DIALOG,
    H_IGNORE,
    HOSTILE_STRINGS,
    INVISIBLE_CHARACTERS,
    INVISIBLE_COMMIT,
    INVISIBLE_LOG,
    INVISIBLE_NUMBER,
    INVISIBLE_STEP_IDS,
    LONG_NUMBER,
    LONG_RUNS_FOR,
    OUTSIDER_LOGIN,
    SLOW_FAILING_STEP,
    SLOW_NUMBER,
    SLOW_RUNS_FOR,
    T0,
    USER_LOGIN,
)
from sandbox.world import Finish, OrgMembership, World

# What tests and benchmarks import from here (defined in seed_text).
__all__ = [
    "ADMIN_LOGIN",
    "BENCH_PIPELINE_NUMBER",
    "BENCH_REPO_ID",
    "BIG_LOG_EXIT_CODES",
    "BIG_LOG_STEPS",
    "FAILED_TWICE_LINE",
    "FAILED_TWICE_LOG_STEP",
    "FAILED_TWICE_NUMBER",
    "FAILED_TWICE_TEST",
    "FORGED_APPROVAL",
    "FORGED_END",
    "FORGED_STEP_NAME",
    "FORGED_SUMMARY",
    "FORGED_WARNING",
    "FORGED_WORKFLOW_NAME",
    "FRAMING_COMMIT",
    "FRAMING_LOG",
    "HOSTILE_STRINGS",
    "INVISIBLE_CHARACTERS",
    "INVISIBLE_COMMIT",
    "INVISIBLE_LOG",
    "INVISIBLE_NUMBER",
    "INVISIBLE_STEP_IDS",
    "LONG_NUMBER",
    "LONG_RUNS_FOR",
    "OUTSIDER_LOGIN",
    "SLOW_FAILING_STEP",
    "SLOW_NUMBER",
    "SLOW_RUNS_FOR",
    "USER_LOGIN",
    "build_world",
    "seed",
]

_USERS = ((1, ADMIN_LOGIN, True), (2, USER_LOGIN, False), (3, OUTSIDER_LOGIN, False))
_ORGS = ((4, "acme", False), (5, "umbrella", True), (6, "bench", False))  # id, name, private
_MEMBERSHIPS = {
    (2, "acme"): OrgMembership(member=True, admin=False),
    (1, "acme"): OrgMembership(member=True, admin=True),
}


def _forge_repos() -> list[ForgeRepo]:
    return [
        ForgeRepo(
            "1001",
            "acme",
            "web",
            private=False,
            branches=["main", "develop", "feature/login", "release/1.x", "gh-pages", H_BRANCH],
            pull_requests=[("17", "Add dark mode"), ("23", H_IGNORE), ("42", H_APPROVE_42)],
            admins=(ADMIN_LOGIN,),
            # Renamed or transferred at the forge: where a move may follow it (a GitLab subgroup too).
            known_as=("acme/website", "acme/site", "acme/platform/web", "bob/web"),
        ),
        ForgeRepo("1002", "acme", "api", private=True, branches=["main", "v2"], admins=(ADMIN_LOGIN,)),
        ForgeRepo(
            "1003",
            "umbrella",
            "infra",
            private=True,
            branches=["main", "dev"],
            admins=(ADMIN_LOGIN,),
            known_as=("umbrella/infra2",),
        ),
        ForgeRepo("1004", "bob", "dotfiles", private=True, admins=(USER_LOGIN,)),
        ForgeRepo("1005", "acme", "old-site", private=False, branches=["master"], default_branch="master"),
        ForgeRepo("1006", "bench", "logs", private=False, admins=(ADMIN_LOGIN,)),
        # Never activated in Woodpecker: listed only by GET /api/user/repos?all=true.
        ForgeRepo("1007", "acme", "legacy", private=False, admins=(ADMIN_LOGIN, USER_LOGIN)),
    ]


# id, forge id, org id, owner's user id, visibility, other fields
_REPOS: tuple[tuple[int, str, int, int, str, dict[str, Any]], ...] = (
    (1, "1001", 4, 1, "public", {"allow_deploy": True, "cancel_previous_pipeline_events": ["push"]}),
    (2, "1002", 4, 1, "internal", {"require_approval": "pull_requests"}),
    # Every event waits for approval; main's pushes were approved, dev holds a blocked push (guard.md §1c).
    (
        3,
        "1003",
        5,
        1,
        "private",
        {
            "trusted": {"network": True, "volumes": False, "security": False},
            "require_approval": "all_events",
        },
    ),
    (4, "1004", 2, 2, "private", {}),
    # Deactivated (DELETE without remove): kept with its history, no owner, still readable.
    (5, "1005", 4, 0, "public", {"active": False}),
    (BENCH_REPO_ID, "1006", 6, 1, "public", {}),
)
# (user id, repo id) -> pull, push, admin. The admin activated repositories 1, 2, 3, 5 and 6, so the
# forge synced full permissions for her.
_PERMS = {
    (2, 1): (True, True, False),
    (2, 2): (True, False, False),
    (2, 4): (True, True, True),
    **{(1, repo_id): (True, True, True) for repo_id in (1, 2, 3, 5, BENCH_REPO_ID)},
}
# id, org id, repo id, name, events, images. npm_token (organization acme) and slack_webhook (global)
# are names a repository secret of acme/web can shadow (guard.md §1c, tests/mcp/test_guard_shadows.py).
_SECRETS: tuple[tuple[int, int, int, str, list[str], list[str]], ...] = (
    (1, 0, 1, "docker_password", ["push", "tag"], ["woodpeckerci/plugin-docker-buildx"]),
    (2, 0, 1, "deploy_token", ["deployment"], []),
    (3, 0, 4, "dotfiles_token", ["push"], []),
    (4, 4, 0, "npm_token", ["push", "tag", "manual"], []),
    (5, 5, 0, "infra_ssh_key", ["push"], []),
    (6, 0, 0, "slack_webhook", ["push", "cron"], []),
    (7, 0, 0, "sonar_token", ["push", "pull_request"], ["sonarsource/sonar-scanner-cli"]),
)
# id, org id, repo id, address, user name
_REGISTRIES = (
    (1, 0, 1, "ghcr.io/acme", "acme-bot"),
    (2, 4, 0, "docker.io", "acmeorg"),
    (3, 0, 0, "quay.io", "robot"),
    (4, 0, 4, "registry.example.org:5000", "bob"),
)
# id, name, schedule, branch, enabled, time zone, repository id
_CRONS = (
    (1, "nightly", "0 3 * * *", "main", True, "UTC", 1),
    (2, "weekly-cleanup", "@weekly", "", False, "Europe/Berlin", 1),
    (3, H_IGNORE, "*/30 * * * *", "develop", False, "UTC", 1),
    # umbrella/infra: one on the branch with the blocked push, one on the default branch
    (4, "dev-smoke", "0 4 * * *", "dev", False, "UTC", 3),
    (5, "main-smoke", "0 5 * * *", "", False, "UTC", 3),
    # bench/logs holds nothing for approval and nothing is held: starting its cron asks nothing.
    (6, "bench-nightly", "0 1 * * *", "", False, "UTC", BENCH_REPO_ID),
)
# id, name, org id (-1: global), owner's user id, capacity, other fields. acme-runner is drained
# (no_schedule): putting it back in service asks (guard.md §1c).
_AGENTS: tuple[tuple[int, str, int, int, int, dict[str, Any]], ...] = (
    (1, "runner-amd64-1", -1, 1, 2, {}),
    (2, "runner-arm64-1", -1, 1, 1, {"platform": "linux/arm64"}),
    (3, "acme-runner", 4, 2, 1, {"no_schedule": True}),
)


def _with(row: Any, fields: dict[str, Any]) -> Any:
    for key, value in copy.deepcopy(fields).items():
        setattr(row, key, value)
    return row


def _add_people(world: World, tokens: dict[str, str]) -> None:
    world.forges[1] = Forge(
        id=1,
        type="gitea",
        url=FORGE_URL,
        client="woodpecker-oauth-client",
        oauth_client_secret=world.new_token(),
    )
    for uid, login, admin in _USERS:
        world.users[uid] = User(
            id=uid,
            login=login,
            email=f"{login}@example.org",
            avatar_url=f"{FORGE_URL}/avatars/{login}",
            forge_remote_id=str(100 + uid),
            admin=admin,
            org_id=uid,
        )
        world.orgs[uid] = Org(id=uid, name=login, is_user=True)
        if login in tokens:
            world.sessions[tokens[login]] = uid
    for oid, name, private in _ORGS:
        world.orgs[oid] = Org(id=oid, name=name, is_user=False, private=private)
    world.memberships.update(copy.deepcopy(_MEMBERSHIPS))


def _add_repositories(world: World) -> None:
    for forge_repo in _forge_repos():
        world.forge_repos[forge_repo.forge_remote_id] = forge_repo
    for rid, frid, org_id, user_id, visibility, fields in _REPOS:
        fr = world.forge_repos[frid]
        repo = Repo(
            id=rid,
            forge_remote_id=frid,
            org_id=org_id,
            owner=fr.owner,
            name=fr.name,
            user_id=user_id,
            visibility=visibility,
            private=fr.private,
            default_branch=fr.default_branch,
        )
        world.repos[rid] = _with(repo, fields)
    for (uid, repo_id), (pull, push, admin) in _PERMS.items():
        world.perms[(uid, repo_id)] = Perm(pull, push, admin, T0, T0, T0)


def _add_bench_logs_and_finishes(world: World) -> None:
    """The bench pipelines' generated logs, and when the two still running end by the sandbox's clock."""
    bench = world.pipelines[BENCH_REPO_ID * 100 + BENCH_PIPELINE_NUMBER]
    for lines, (_, _, step_id) in BIG_LOG_STEPS.items():
        assert any(s.id == step_id for s in bench.steps()), "bench step ids drifted"
        world.big_logs[step_id] = BigLog(step_id=step_id, lines=lines, first_id=step_id * 10_000_000)
    failed_twice = world.pipelines[BENCH_REPO_ID * 100 + FAILED_TWICE_NUMBER]
    assert any(s.id == FAILED_TWICE_LOG_STEP for s in failed_twice.steps()), "failed_twice step ids drifted"
    world.big_logs[FAILED_TWICE_LOG_STEP] = BigLog(
        step_id=FAILED_TWICE_LOG_STEP,
        lines=200_000,
        first_id=FAILED_TWICE_LOG_STEP * 10_000_000,
        overrides=(
            (FAILED_TWICE_LINE, FAILED_TWICE_TEST),
            (FAILED_TWICE_LINE + 1, "    checkout_test.go:88: charged 2 times, want 1"),
        ),
    )
    seeded = world.clock()
    slow = world.pipelines[BENCH_REPO_ID * 100 + SLOW_NUMBER]
    assert any(s.id == SLOW_FAILING_STEP for s in slow.steps()), "slow pipeline step ids drifted"
    world.finishes[slow.id] = Finish(seeded + SLOW_RUNS_FOR, "failure", {SLOW_FAILING_STEP: ("failure", 1)})
    world.finishes[BENCH_REPO_ID * 100 + LONG_NUMBER] = Finish(seeded + LONG_RUNS_FOR, "success", {})


def _add_settings(world: World, now: int) -> None:
    """Secrets, registries and crons."""
    for sid, org_id, repo_id, name, events, images in _SECRETS:
        world.secrets[sid] = Secret(
            sid,
            org_id,
            repo_id,
            name,
            value=f"value-of-{name}",
            events=list(events),
            images=list(images),
            note="",
        )
    for rid, org_id, repo_id, address, username in _REGISTRIES:
        world.registries[rid] = Registry(rid, org_id, repo_id, address, username, password=f"pw-{rid}")
    for cid, name, schedule, branch, enabled, tz, repo_id in _CRONS:
        world.crons[cid] = Cron(
            id=cid,
            name=name,
            repo_id=repo_id,
            creator_id=1,
            schedule=schedule,
            created=T0 + cid,
            next_exec=next_exec(schedule, tz, now),
            timezone=tz,
            branch=branch,
            enabled=enabled,
        )


def _add_agents_and_queue(world: World) -> None:
    for aid, name, org_id, owner, capacity, fields in _AGENTS:
        agent = Agent(
            id=aid,
            name=name,
            owner_id=owner,
            token=world.new_token(),
            org_id=org_id,
            created=T0,
            updated=T0 + 50,
            last_contact=T0 + 1_000_000,
            last_work=T0 + 900_000,
            platform="linux/amd64",
            backend="docker",
            capacity=capacity,
            version=world.version_string,
            custom_labels={},
        )
        world.agents[aid] = _with(agent, fields)
    world.worker_count = 4
    web = world.repos[1]
    running, pending = world.pipelines[web.id * 100 + 13], world.pipelines[web.id * 100 + 12]
    # The running pipeline's task sits on agent 2 (with hostile text in a label); the pending one waits.
    for pipeline, agent_id, extra in ((running, 2, {"note": H_DIALOG}), (pending, 0, {})):
        world.tasks.append(
            Task(
                id=str(pipeline.workflows[0].id),
                pid=1,
                name="build",
                pipeline_id=pipeline.id,
                repo_id=web.id,
                agent_id=agent_id,
                created=pipeline.created,
                running=pipeline is running,
                labels={"platform": "linux/amd64", "repo": web.full_name, **extra},
                dep_status={},
            )
        )


def seed(world: World, tokens: dict[str, str]) -> None:
    """Fill an empty world with the sample instance. `tokens` maps login -> session token."""
    now = world.now()
    _add_people(world, tokens)
    _add_repositories(world)
    add_pipelines(world)
    _add_bench_logs_and_finishes(world)
    _add_settings(world, now)
    _add_agents_and_queue(world)


def build_world(version: str, tokens: dict[str, str], clock: Callable[[], float]) -> World:
    world = World(version=version, clock=clock)
    seed(world, tokens)
    return world
