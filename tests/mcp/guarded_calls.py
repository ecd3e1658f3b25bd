"""The calls the guard tests make against the seeded sandbox: one widening call per guarded tool, one harmless call per conditional tool."""

from typing import Any

from mcp import Client

from sandbox.seed import HOSTILE_STRINGS
from sandbox.server import Sandbox
from tests.fixtures.mcp import REPLIES, Person, Reply

# One call per guarded tool that widens reach (so it must ask) and succeeds on the seeded data.
WIDENING: dict[str, dict[str, Any]] = {
    "update_repository": {"repo_id": 2, "require_approval": "none"},
    "repair_repository": {"scope": "instance"},
    "move_repository": {"repo_id": 1, "to": "bob/web"},
    "chown_repository": {"repo_id": 1},
    "delete_repository": {"repo_id": 1},
    "approve_pipeline": {"repo_id": 1, "number": 11},
    "delete_pipeline": {"repo_id": 1, "number": 10},
    "delete_step_logs": {"repo_id": 1, "number": 2, "step_id": 10203},
    "delete_pipeline_logs": {"repo_id": 1, "number": 2},
    "update_secret": {"scope": "repository", "repo_id": 1, "name": "docker_password", "value": "rotated"},
    "delete_secret": {"scope": "repository", "repo_id": 1, "name": "deploy_token"},
    "update_registry": {
        "scope": "repository",
        "repo_id": 1,
        "address": "ghcr.io/acme",
        "password": "rotated",
    },
    "delete_registry": {"scope": "global", "address": "quay.io"},
    "delete_cron": {"repo_id": 1, "cron_id": 1},
    "delete_organization": {"org_id": 5},
    "create_user": {"login": "carol", "admin": True},
    "update_user": {"login": "bob", "forge_id": 1, "admin": True},
    "delete_user": {"login": "eve", "forge_id": 1},
    "delete_agent": {"agent_id": 1},
    "update_forge": {"forge_id": 1, "url": "https://forge2.example.org"},
    "delete_forge": {"forge_id": 1},
    "pause_queue": {},
    "set_log_level": {"level": "disabled"},
    # guard.md §1b
    "restart_pipeline": {"repo_id": 1, "number": 7},  # a declined pull request from a fork
    "activate_repository": {"forge_remote_id": "1005"},  # acme/old-site: known to Woodpecker, inactive
    "create_secret": {
        "scope": "repository",
        "repo_id": 1,
        "name": "pr_token",
        "value": "fresh",
        "events": ["push", "pull_request"],
    },
    "create_agent": {"name": "runner-9"},
    # guard.md §1c
    "create_registry": {  # docker.io is also a login of organization 4, which repository 1 belongs to
        "scope": "repository",
        "repo_id": 1,
        "address": "docker.io",
        "username": "web-ci",
        "password": "fresh",
    },
    "update_agent": {"agent_id": 3, "no_schedule": False},  # acme-runner: drained
    "create_forge": {
        "type": "gitea",
        "url": "https://gitea.example.org",
        "client": "oauth-app",
        "oauth_client_secret": "fresh",
    },
    # guard.md §1c: umbrella/infra (3) requires approval for every event and holds a blocked push on dev.
    "trigger_pipeline": {"repo_id": 3, "branch": "dev"},
    "create_cron": {"repo_id": 3, "name": "dev-nightly", "schedule": "0 2 * * *", "branch": "dev"},
    "update_cron": {"repo_id": 3, "cron_id": 5, "branch": "dev"},  # main-smoke, moved to dev
    "run_cron": {"repo_id": 3, "cron_id": 4},  # dev-smoke
}

# The harmless direction of each conditional tool: applies on the first call, no question.
HARMLESS: dict[str, dict[str, Any]] = {
    "update_repository": {"repo_id": 2, "require_approval": "all_events", "trusted_network": False},
    "repair_repository": {"scope": "repository", "repo_id": 1},
    "update_secret": {"scope": "repository", "repo_id": 1, "name": "docker_password", "events": ["push"]},
    "update_registry": {
        "scope": "repository",
        "repo_id": 1,
        "address": "ghcr.io/acme",
        "username": "acme-ci",
    },
    "restart_pipeline": {"repo_id": 1, "number": 1},  # a finished push pipeline
    "activate_repository": {"forge_remote_id": "1007"},  # acme/legacy: never activated
    "create_secret": {
        "scope": "repository",
        "repo_id": 1,
        "name": "push_token",
        "value": "x",
        "events": ["push"],
    },
    "update_user": {"login": "bob", "forge_id": 1, "email": "bob@new.example.org"},
    "set_log_level": {"level": "debug"},
    "update_agent": {"agent_id": 1, "no_schedule": False},  # runner-amd64-1: takes work already
    # guard.md §1c: bench/logs holds only fork pull requests for approval and its main holds nothing
    # (umbrella/infra requires approval for every event, so every start there asks).
    "trigger_pipeline": {"repo_id": 6, "branch": "main"},
    "create_cron": {"repo_id": 6, "name": "main-nightly", "schedule": "0 2 * * *"},  # the default branch
    "update_cron": {"repo_id": 6, "cron_id": 6, "branch": "main"},  # bench-nightly, named main
    "run_cron": {"repo_id": 6, "cron_id": 6},  # bench-nightly: no branch, so the default one
}
# Conditional tools without a harmless direction: create_registry's password is required, and a password asks.
NO_HARMLESS = frozenset({"create_registry"})

# Writes one approved call makes. create_user with admin creates the account, then grants admin
# (Woodpecker's create ignores the flag), so two.
WRITES: dict[str, int] = {name: 1 for name in WIDENING} | {"create_user": 2}


def numeric_ids(args: dict[str, Any]) -> list[str]:
    return [str(v) for v in args.values() if isinstance(v, int) and not isinstance(v, bool)]


def hostile_fragments() -> list[str]:
    """Every line of every hostile string long enough to mean something on its own."""
    out: list[str] = []
    for text in HOSTILE_STRINGS:
        out.append(text)
        out.extend(line.strip() for line in text.splitlines() if len(line.strip()) >= 8)
    return out


def assert_clean_question(question: str, args: dict[str, Any]) -> None:
    for number in numeric_ids(args):
        assert number in question, f"id {number} missing from the question"
    for fragment in hostile_fragments():
        assert fragment not in question, f"pushed text reached the question: {fragment!r}"


async def check_guarded_call(
    client: Client, person: Person, sandbox: Sandbox, tool: str, replies: tuple[Reply, ...] = REPLIES
) -> None:
    """The widening call of `tool`, once per reply: one question with ids and no pushed text each
    time; a yes makes exactly the tool's writes, any other answer none and says nothing was done."""
    args = WIDENING[tool]
    for reply in replies:
        sandbox.reset()
        person.reply, person.questions = reply, []
        result = await client.call_tool(tool, dict(args))
        writes = [(w.method, w.path) for w in sandbox.state_changing_requests()]
        where = f"{tool} answered {reply}"
        assert len(person.questions) == 1, f"{where}: asked {len(person.questions)} times"
        assert_clean_question(person.questions[0], args)
        if reply == "accept":
            assert not result.is_error, (where, result.content)
            assert len(writes) == WRITES[tool], (where, writes)
        else:
            assert writes == [], (where, writes)
            assert "nothing was done" in str(getattr(result.content[0], "text", "")), (where, result.content)
