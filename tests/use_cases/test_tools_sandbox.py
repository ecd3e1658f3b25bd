"""Every one of the tools run through ToolRunner against the sandbox over real loopback HTTP: one success, one failure each."""

from collections.abc import Callable
from typing import Any

import pytest

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.results import AGENT_TOKEN_MARKER, CALLER_WARNING, ERROR_SIGNS, UNTRUSTED_WARNING
from tests.use_cases.conftest import Call

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

Check = Callable[[dict[str, Any]], bool]
R, S, G = "repository", "organization", "global"


def names(key: str, field: str = "name") -> Callable[[dict[str, Any]], list[Any]]:
    return lambda s: [e.get(field) for e in s[key]]


SUCCESS: list[tuple[str, str | None, dict[str, Any], Check]] = [
    # repositories
    ("list_repositories", "ada", {}, lambda s: "acme/web" in names("repositories", "full_name")(s)),
    (
        "list_repositories",
        "ada",
        {"include_inactive": True},
        lambda s: "1007" in names("repositories", "forge_remote_id")(s),
    ),
    (
        "list_repositories",
        "ada",
        {"scope": "instance", "per_page": 2},
        lambda s: s["count"] == 2 and s["next_page"] == 2,
    ),
    ("get_repository", "ada", {"repo_id": 1}, lambda s: s["repository"]["full_name"] == "acme/web"),
    ("lookup_repository", "ada", {"full_name": "acme/web"}, lambda s: s["repository"]["id"] == 1),
    (
        "get_repository_permissions",
        "bob",
        {"repo_id": 1},
        lambda s: s["permissions"]["push"] and not s["permissions"]["admin"],
    ),
    ("list_repository_branches", "ada", {"repo_id": 1}, lambda s: "main" in s["branches"]),
    (
        "list_pull_requests",
        "ada",
        {"repo_id": 1},
        lambda s: {"17", "23", "42"} == set(names("pull_requests", "index")(s)),
    ),
    (
        "activate_repository",
        "ada",
        {"forge_remote_id": "1007"},
        lambda s: s["repository"]["full_name"] == "acme/legacy",
    ),
    ("update_repository", "ada", {"repo_id": 1, "timeout": 30}, lambda s: s["repository"]["timeout"] == 30),
    (
        "update_repository",
        "ada",
        {"repo_id": 2, "trusted_volumes": True},
        lambda s: s["repository"]["trusted"]["volumes"],
    ),
    ("repair_repository", "ada", {"repo_id": 1}, lambda s: s["done"] is True),
    ("repair_repository", "ada", {"scope": "instance"}, lambda s: s["target"] == {"scope": "instance"}),
    ("move_repository", "ada", {"repo_id": 1, "to": "acme/website"}, lambda s: s["done"] is True),
    ("chown_repository", "ada", {"repo_id": 4}, lambda s: s["repository"]["id"] == 4),
    ("delete_repository", "bob", {"repo_id": 4}, lambda s: s["repository"]["id"] == 4),
    # pipelines
    (
        "list_pipelines",
        "ada",
        {"repo_id": 1, "per_page": 5},
        lambda s: s["count"] == 5 and s["next_page"] == 2,
    ),
    (
        "list_pipelines",
        "ada",
        {"repo_id": 1, "status": "blocked"},
        lambda s: names("pipelines", "number")(s) == [11],
    ),
    (
        "get_pipeline",
        "ada",
        {"repo_id": 1, "number": 2},
        lambda s: s["pipeline"]["workflows"][0]["steps"][2]["id"] == 10204,
    ),
    (
        "get_pipeline_config",
        "ada",
        {"repo_id": 1, "number": 2},
        lambda s: "steps:" in s["files"][0]["content"],
    ),
    ("get_pipeline_metadata", "ada", {"repo_id": 1, "number": 2}, lambda s: isinstance(s["metadata"], dict)),
    ("list_queued_pipelines", "ada", {}, lambda s: s["count"] >= 1),
    (
        "trigger_pipeline",
        "ada",
        {"repo_id": 1, "branch": "main"},
        lambda s: s["created"] and s["pipeline"]["number"] == 14,
    ),
    ("restart_pipeline", "ada", {"repo_id": 1, "number": 2}, lambda s: s["pipeline"]["number"] == 14),
    (
        "restart_pipeline",
        "ada",
        {"repo_id": 1, "number": 9, "event": "deployment", "deploy_to": "staging"},
        lambda s: s["pipeline"]["event"] == "deployment" and s["pipeline"]["deploy_to"] == "staging",
    ),
    ("cancel_pipeline", "ada", {"repo_id": 1, "number": 13}, lambda s: s["done"] is True),
    ("approve_pipeline", "ada", {"repo_id": 1, "number": 11}, lambda s: s["pipeline"]["status"] != "blocked"),
    (
        "decline_pipeline",
        "ada",
        {"repo_id": 1, "number": 11},
        lambda s: s["pipeline"]["status"] == "declined",
    ),
    ("delete_pipeline", "ada", {"repo_id": 1, "number": 1}, lambda s: s["done"] is True),
    (
        "get_step_logs",
        "ada",
        {"repo_id": 1, "number": 2, "step_id": 10204},
        lambda s: (
            s["lines"][-1]["text"] == "exit status 1"
            and s["step"]["exit_code"] == 1
            and s["total_lines"] == 8
        ),
    ),
    (
        "get_step_logs",
        "ada",
        {"repo_id": 1, "number": 2, "step_id": 10204, "from_line": 2, "to_line": 3},
        lambda s: [line["line"] for line in s["lines"]] == [2, 3] and "FAIL" in s["lines"][0]["text"],
    ),
    (
        "search_step_logs",
        "ada",
        {
            "repo_id": 1,
            "number": 2,
            "step_id": 10204,
            "pattern": "--- fail",
            "ignore_case": True,
            "context": 1,
        },
        lambda s: (
            s["total_matches"] == 1
            and s["matches"][0]["line"] == 2
            and s["matches"][0]["text"] == "--- FAIL: TestLogin (0.01s)"
            and [x["line"] for x in s["matches"][0]["before"] + s["matches"][0]["after"]] == [1, 3]
        ),
    ),
    (
        "get_pipeline_failure_summary",
        "ada",
        {"repo_id": 1, "number": 2},
        lambda s: (
            [step["name"] for step in s["failed_steps"]] == ["test"]
            and s["failed_steps"][0]["exit_code"] == 1
            and "--- FAIL: TestLogin (0.01s)" in [e["text"] for e in s["failed_steps"][0]["error_lines"]]
        ),
    ),
    (
        "resolve",
        "ada",
        {"reference": "acme/web#2", "step": "test"},
        lambda s: (s["repo_id"], s["number"], s["step_id"], s["step_state"]) == (1, 2, 10204, "failure"),
    ),
    (
        "wait_for_pipeline",
        "ada",
        {"repo_id": 1, "number": 2},
        lambda s: (
            s["finished"] is True
            and s["status"] == "failure"
            and s["polls"] == 1
            and [step["name"] for step in s["failed_steps"]] == ["test"]
        ),
    ),
    (
        "analyze_pipeline_history",
        "ada",
        {"repo_id": 1},
        lambda s: (
            (s["read"]["listed"], s["read"]["pipelines"], s["read"]["stopped_early"]) == (13, 8, False)
            and [(r["branch"], r["since"]) for r in s["red_since"]] == [("develop", 3)]
            and next(x for x in s["steps"] if x["name"] == "test")["failures"] == 2
        ),
    ),
    (
        "validate_pipeline_config",
        None,
        {"config": "steps:\n  - name: build\n    image: sh\n    commands: [make]\n    privileged: true\n"},
        lambda s: (
            s["valid"] is False
            and [(f["rule"], f["line"], f["column"]) for f in s["findings"] if f["severity"] == "error"]
            == [("untrusted_privileged", 5, 5)]
        ),
    ),
    ("delete_step_logs", "ada", {"repo_id": 1, "number": 2, "step_id": 10204}, lambda s: s["done"] is True),
    ("delete_pipeline_logs", "ada", {"repo_id": 1, "number": 2}, lambda s: s["done"] is True),
    # secrets
    (
        "list_secrets",
        "ada",
        {"scope": R, "repo_id": 1},
        lambda s: s["count"] == 2 and all("value" not in e for e in s["secrets"]),
    ),
    ("list_secrets", "bob", {"scope": G}, lambda s: "slack_webhook" in names("secrets")(s)),
    (
        "get_secret",
        "ada",
        {"scope": S, "org_id": 4, "name": "npm_token"},
        lambda s: s["secret"]["name"] == "npm_token",
    ),
    (
        "create_secret",
        "ada",
        {"scope": G, "name": "new_one", "value": "v4lue", "events": ["push"]},
        lambda s: s["secret"]["name"] == "new_one" and "value" not in s["secret"],
    ),
    (
        "update_secret",
        "ada",
        {"scope": R, "repo_id": 1, "name": "docker_password", "note": "rotated"},
        lambda s: s["secret"]["note"] == "rotated",
    ),
    ("delete_secret", "ada", {"scope": R, "repo_id": 1, "name": "deploy_token"}, lambda s: s["done"] is True),
    # registries
    (
        "list_registries",
        "ada",
        {"scope": R, "repo_id": 1},
        lambda s: names("registries", "address")(s) == ["ghcr.io/acme"],
    ),
    (
        "get_registry",
        "bob",
        {"scope": R, "repo_id": 4, "address": "registry.example.org:5000"},
        lambda s: s["registry"]["username"] == "bob" and "password" not in s["registry"],
    ),
    (
        "create_registry",
        "ada",
        {"scope": S, "org_id": 4, "address": "ghcr.io/umbrella", "username": "u", "password": "p"},
        lambda s: s["registry"]["address"] == "ghcr.io/umbrella",
    ),
    (
        "update_registry",
        "ada",
        {"scope": R, "repo_id": 1, "address": "ghcr.io/acme", "username": "robot2"},
        lambda s: s["registry"]["username"] == "robot2" and s["registry"]["id"] == 1,
    ),
    ("delete_registry", "ada", {"scope": G, "address": "quay.io"}, lambda s: s["done"] is True),
    # crons
    ("list_crons", "ada", {"repo_id": 1}, lambda s: s["count"] == 3),
    ("get_cron", "ada", {"repo_id": 1, "cron_id": 1}, lambda s: s["cron"]["name"] == "nightly"),
    (
        "create_cron",
        "ada",
        {"repo_id": 1, "name": "hourly", "schedule": "0 * * * *"},
        lambda s: s["cron"]["enabled"] is True,
    ),
    (
        "update_cron",
        "ada",
        {"repo_id": 1, "cron_id": 2, "enabled": True},
        lambda s: s["cron"]["enabled"] is True,
    ),
    (
        "run_cron",
        "ada",
        {"repo_id": 1, "cron_id": 1},
        lambda s: s["created"] and s["pipeline"]["event"] == "cron",
    ),
    ("delete_cron", "ada", {"repo_id": 1, "cron_id": 3}, lambda s: s["done"] is True),
    # organizations
    ("list_organizations", "ada", {}, lambda s: "acme" in names("organizations")(s)),
    ("get_organization", "bob", {"org_id": 4}, lambda s: s["organization"]["name"] == "acme"),
    ("lookup_organization", "ada", {"name": "acme"}, lambda s: s["organization"]["id"] == 4),
    ("get_organization_permissions", "bob", {"org_id": 4}, lambda s: s["permissions"]["member"] is True),
    ("delete_organization", "ada", {"org_id": 6}, lambda s: s["done"] is True),
    # users
    ("get_current_user", "bob", {}, lambda s: s["user"]["login"] == "bob" and s["user"]["admin"] is False),
    ("get_pipeline_feed", "bob", {}, lambda s: s["count"] >= 1),
    ("list_users", "ada", {}, lambda s: names("users", "login")(s) == ["ada", "bob", "eve"]),
    ("get_user", "ada", {"login": "bob", "forge_id": 1}, lambda s: s["user"]["email"] == "bob@example.org"),
    (
        "create_user",
        "ada",
        {"login": "carol", "email": "carol@example.org"},
        lambda s: s["user"]["admin"] is False,
    ),
    ("create_user", "ada", {"login": "dave", "admin": True}, lambda s: s["user"]["admin"] is True),
    (
        "update_user",
        "ada",
        {"login": "bob", "forge_id": 1, "admin": True},
        lambda s: s["user"]["admin"] and s["user"]["email"] == "bob@example.org",
    ),
    ("delete_user", "ada", {"login": "eve", "forge_id": 1}, lambda s: s["done"] is True),
    # agents
    (
        "list_agents",
        "ada",
        {},
        lambda s: s["count"] == 3 and {e["token"] for e in s["agents"]} == {AGENT_TOKEN_MARKER},
    ),
    ("list_agents", "ada", {"org_id": 4}, lambda s: names("agents")(s) == ["acme-runner"]),
    ("get_agent", "ada", {"agent_id": 1}, lambda s: s["agent"]["token"] == AGENT_TOKEN_MARKER),
    ("list_agent_tasks", "ada", {"agent_id": 2}, lambda s: s["count"] == 1),
    (
        "create_agent",
        "ada",
        {"name": "fresh"},
        lambda s: len(s["agent"]["token"]) > 20 and "only now" in s["note"],
    ),
    (
        "update_agent",
        "ada",
        {"agent_id": 1, "no_schedule": True},
        lambda s: s["agent"]["name"] == "runner-amd64-1" and s["agent"]["no_schedule"],
    ),
    (
        "update_agent",
        "ada",
        {"agent_id": 3, "org_id": 4, "name": "acme-2"},
        lambda s: s["agent"]["name"] == "acme-2" and s["agent"]["no_schedule"],
    ),
    ("delete_agent", "ada", {"agent_id": 1}, lambda s: s["done"] is True),
    # forges
    ("list_forges", None, {}, lambda s: names("forges", "type")(s) == ["gitea"]),
    ("get_forge", "ada", {"forge_id": 1}, lambda s: s["forge"]["client"] == "woodpecker-oauth-client"),
    (
        "create_forge",
        "ada",
        {"type": "forgejo", "url": "https://code.example.org", "client": "c", "oauth_client_secret": "s"},
        lambda s: s["forge"]["type"] == "forgejo" and "oauth_client_secret" not in s["forge"],
    ),
    (
        "update_forge",
        "ada",
        {"forge_id": 1, "skip_verify": True},
        lambda s: s["forge"]["skip_verify"] and s["forge"]["client"] == "woodpecker-oauth-client",
    ),
    ("delete_forge", "ada", {"forge_id": 1}, lambda s: s["done"] is True),
    # server
    (
        "get_server_info",
        None,
        {},
        lambda s: s["server"]["version"] == "3.17.0" and s["server"]["healthy"] is True,
    ),
    ("get_queue_info", "ada", {}, lambda s: "stats" in s["queue"]),
    ("get_log_level", "ada", {}, lambda s: s["log_level"] == "info"),
    (
        "get_signature_public_key",
        "bob",
        {},
        lambda s: s["public_key"].startswith("-----BEGIN PUBLIC KEY-----\n"),
    ),
    ("pause_queue", "ada", {}, lambda s: s["done"] is True),
    ("resume_queue", "ada", {}, lambda s: s["done"] is True),
    ("set_log_level", "ada", {"level": "debug"}, lambda s: s["log_level"] == "debug"),
]

# tool, login, arguments, error kind, a phrase the text must carry
FAILURES: list[tuple[str, str | None, dict[str, Any], str, str]] = [
    ("list_repositories", "bob", {"scope": "instance"}, "forbidden", "get_current_user"),
    ("get_repository", "ada", {"repo_id": 999}, "not_found", "include_inactive=true"),
    ("lookup_repository", "ada", {"full_name": "acme/legacy"}, "not_found", "include_inactive=true"),
    ("get_repository_permissions", "ada", {"repo_id": 999}, "not_found", "include_inactive=true"),
    ("list_repository_branches", "ada", {"repo_id": 5}, "not_found", "404"),
    ("list_pull_requests", "eve", {"repo_id": 4}, "not_found", "include_inactive=true"),
    ("activate_repository", "ada", {"forge_remote_id": "1001"}, "conflict", "409"),
    ("update_repository", "bob", {"repo_id": 1, "trusted_network": True}, "forbidden", "get_current_user"),
    ("repair_repository", "bob", {"scope": "instance"}, "forbidden", "get_current_user"),
    ("move_repository", "ada", {"repo_id": 999, "to": "acme/x"}, "not_found", "include_inactive=true"),
    ("chown_repository", "bob", {"repo_id": 2}, "forbidden", "403"),
    ("delete_repository", "bob", {"repo_id": 1}, "forbidden", "get_current_user"),
    ("list_pipelines", "ada", {"repo_id": 999}, "not_found", "include_inactive=true"),
    ("get_pipeline", "ada", {"repo_id": 1, "number": 999}, "not_found", "list_pipelines shows"),
    ("get_pipeline_config", "ada", {"repo_id": 1, "number": 999}, "not_found", "list_pipelines shows"),
    ("get_pipeline_metadata", "eve", {"repo_id": 1, "number": 2}, "not_found", "404"),
    ("list_queued_pipelines", "bob", {}, "forbidden", "get_current_user"),
    (
        "trigger_pipeline",
        "ada",
        {"repo_id": 1, "branch": "no-such-branch"},
        "outcome_unknown",  # a write answered 5xx may have reached Woodpecker (guard.md §7)
        "list_repository_branches",
    ),
    ("restart_pipeline", "ada", {"repo_id": 1, "number": 11}, "rejected", "400"),
    ("cancel_pipeline", "ada", {"repo_id": 1, "number": 1}, "rejected", "400"),
    ("approve_pipeline", "ada", {"repo_id": 1, "number": 1}, "rejected", "400"),
    ("decline_pipeline", "ada", {"repo_id": 1, "number": 1}, "outcome_unknown", "get_pipeline"),
    ("delete_pipeline", "ada", {"repo_id": 1, "number": 13}, "rejected", "422"),
    ("get_step_logs", "ada", {"repo_id": 1, "number": 3, "step_id": 10204}, "not_found", "get_pipeline"),
    (
        "get_pipeline_failure_summary",
        "ada",
        {"repo_id": 1, "number": 999},
        "not_found",
        "list_pipelines shows",
    ),
    ("wait_for_pipeline", "ada", {"repo_id": 1, "number": 999}, "not_found", "list_pipelines shows"),
    ("analyze_pipeline_history", "ada", {"repo_id": 999}, "not_found", "list_repositories"),
    (
        "search_step_logs",
        "ada",
        {"repo_id": 1, "number": 2, "step_id": 10204, "pattern": "(?<=x)y"},
        "invalid_arguments",
        "RE2",
    ),
    ("resolve", "ada", {"reference": "https://ci.example.org/repos/1"}, "foreign_link", "WOODPECKER_URL"),
    ("delete_step_logs", "ada", {"repo_id": 1, "number": 13, "step_id": 11303}, "rejected", "422"),
    ("delete_pipeline_logs", "ada", {"repo_id": 1, "number": 13}, "rejected", "422"),
    ("list_secrets", "bob", {"scope": S, "org_id": 4}, "forbidden", "get_current_user"),
    ("get_secret", "ada", {"scope": R, "repo_id": 1, "name": "nope"}, "not_found", "list_secrets shows"),
    ("create_secret", "bob", {"scope": G, "name": "x", "value": "v", "events": ["push"]}, "forbidden", "403"),
    ("update_secret", "ada", {"scope": G, "name": "nope", "note": "n"}, "not_found", "404"),
    ("delete_secret", "ada", {"scope": G, "name": "nope"}, "not_found", "404"),
    ("list_registries", "eve", {"scope": R, "repo_id": 1}, "not_found", "404"),
    ("get_registry", "ada", {"scope": G, "address": "nope.io"}, "not_found", "list_registries shows"),
    (
        "create_registry",
        "bob",
        {"scope": S, "org_id": 4, "address": "x.io", "username": "u", "password": "p"},
        "forbidden",
        "403",
    ),
    ("update_registry", "ada", {"scope": G, "address": "nope.io", "username": "u"}, "not_found", "404"),
    ("delete_registry", "ada", {"scope": G, "address": "nope.io"}, "not_found", "404"),
    ("list_crons", "eve", {"repo_id": 1}, "not_found", "404"),
    ("get_cron", "ada", {"repo_id": 1, "cron_id": 99}, "not_found", "list_crons shows"),
    ("create_cron", "ada", {"repo_id": 1, "name": "six", "schedule": "* * * * * *"}, "rejected", "5 fields"),
    ("update_cron", "ada", {"repo_id": 1, "cron_id": 99, "enabled": True}, "not_found", "404"),
    ("run_cron", "ada", {"repo_id": 1, "cron_id": 99}, "not_found", "404"),
    ("delete_cron", "ada", {"repo_id": 1, "cron_id": 99}, "not_found", "404"),
    ("list_organizations", "bob", {}, "forbidden", "get_current_user"),
    ("get_organization", "eve", {"org_id": 4}, "forbidden", "403"),
    ("lookup_organization", "ada", {"name": "nope"}, "not_found", "list_organizations shows"),
    # A missing organization id is no 404 on a real 3.17.0 (the empty org, id 0: docs/adr/0057); bob is
    # refused it as he is any organization he is not a member of.
    ("get_organization", "bob", {"org_id": 999}, "forbidden", "403"),
    ("delete_organization", "bob", {"org_id": 6}, "forbidden", "403"),
    ("get_current_user", None, {}, "unauthorized", "get_server_info"),
    ("get_pipeline_feed", None, {}, "unauthorized", "WOODPECKER_TOKEN"),
    ("list_users", "bob", {}, "forbidden", "get_current_user"),
    ("get_user", "ada", {"login": "nobody", "forge_id": 1}, "not_found", "list_users shows"),
    ("create_user", "bob", {"login": "carol"}, "forbidden", "get_current_user"),
    ("update_user", "ada", {"login": "nobody", "forge_id": 1, "email": "n@example.org"}, "not_found", "404"),
    ("delete_user", "ada", {"login": "nobody", "forge_id": 1}, "not_found", "404"),
    ("list_agents", "bob", {}, "forbidden", "get_current_user"),
    ("get_agent", "ada", {"agent_id": 99}, "not_found", "list_agents shows"),
    ("list_agent_tasks", "bob", {"agent_id": 2}, "forbidden", "403"),
    ("create_agent", "bob", {"name": "mine"}, "forbidden", "403"),
    ("update_agent", "ada", {"agent_id": 1, "org_id": 4, "name": "x"}, "not_found", "list_agents"),
    ("delete_agent", "ada", {"agent_id": 2}, "conflict", "running tasks"),
    ("get_forge", "ada", {"forge_id": 99}, "not_found", "list_forges shows"),
    (
        "create_forge",
        "bob",
        {"type": "gitea", "url": "https://g.example.org", "client": "c", "oauth_client_secret": "s"},
        "forbidden",
        "403",
    ),
    ("update_forge", "ada", {"forge_id": 99, "skip_verify": True}, "not_found", "404"),
    ("delete_forge", "bob", {"forge_id": 1}, "forbidden", "403"),
    ("get_queue_info", "bob", {}, "forbidden", "get_current_user"),
    ("get_log_level", "bob", {}, "forbidden", "403"),
    ("pause_queue", "bob", {}, "forbidden", "403"),
    ("resume_queue", "bob", {}, "forbidden", "403"),
    ("set_log_level", "bob", {"level": "debug"}, "forbidden", "403"),
]


def _id(case: tuple[Any, ...]) -> str:
    return f"{case[0]}-{case[1]}-{'-'.join(f'{k}={v}' for k, v in case[2].items())}"[:90]


def test_every_tool_has_a_success_and_a_failure_case() -> None:
    assert {c[0] for c in SUCCESS} == set(WOODPECKER_TOOLS.names)
    # These fail only when Woodpecker does (anybody may read them): see the fault tests below.
    # get_organization_permissions too: a real 3.17.0 answers any org id, a missing one as the empty org
    # (docs/adr/0057).
    anybody = {"list_forges", "get_server_info", "get_signature_public_key", "get_organization_permissions"}
    # validate_pipeline_config sends nothing: it refuses only its arguments (tests/use_cases/test_config_check.py).
    offline = {"validate_pipeline_config"}
    assert {c[0] for c in FAILURES} | anybody | offline == set(WOODPECKER_TOOLS.names)


@pytest.mark.parametrize(("tool", "who", "args", "check"), SUCCESS, ids=[_id(c) for c in SUCCESS])
async def test_the_tool_succeeds_against_the_sandbox(
    call: Call, tool: str, who: str | None, args: dict[str, Any], check: Check
) -> None:
    result = await call(tool, who, **args)
    assert not result.is_error, result.text
    assert check(dict(result.structured)), result.structured
    notice = CALLER_WARNING if tool == "validate_pipeline_config" else UNTRUSTED_WARNING
    assert result.text.startswith(notice) == WOODPECKER_TOOLS.get(tool).untrusted_output


@pytest.mark.parametrize(("tool", "who", "args", "kind", "phrase"), FAILURES, ids=[_id(c) for c in FAILURES])
async def test_the_tool_fails_with_a_hint(
    call: Call, tool: str, who: str | None, args: dict[str, Any], kind: str, phrase: str
) -> None:
    result = await call(tool, who, **args)
    assert result.is_error, result.text
    assert result.structured["error"]["kind"] == kind, result.text
    assert phrase in result.text
    if kind == "outcome_unknown":
        # Never "failed" (nor "try again"): the write may have been carried out.
        assert result.text.startswith(f"{tool}: The outcome is unknown: ")
        assert "try again" not in result.text
    else:
        assert result.text.startswith(f"{tool} failed: ")


async def test_a_list_of_one_says_one_of_a_thing(call: Call) -> None:
    # "1 pipelines of repository 1" read as a slip, and a model quoting it repeats it.
    result = await call("list_pipelines", "ada", repo_id=1, status="failure")
    assert result.structured["count"] == 1
    assert "\n1 pipeline of repository 1 (page 1). 1 failed: pipeline 2. " in result.text, result.text
    many = await call("list_repositories", "ada")
    assert f"{many.structured['count']} repositories of this account" in many.text, many.text


async def test_the_failure_summary_lists_its_error_signs_only_when_asked(call: Call) -> None:
    plain = await call("get_pipeline_failure_summary", "ada", repo_id=6, number=2)
    asked = await call("get_pipeline_failure_summary", "ada", repo_id=6, number=2, error_signs=True)
    assert "error_signs" not in plain.structured and '"error_signs"' not in plain.text
    assert asked.structured["error_signs"] == [name for name, _ in ERROR_SIGNS]
    # The same failed steps either way.
    assert asked.structured["failed_steps"] == plain.structured["failed_steps"]
