"""ToolRunner behaviour beyond one call per tool: setup answers, validation, guard reads, merges, faults, logs."""

import json
from typing import Any

import anyio
import httpx
import pytest

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.plans import ValidateConfig
from domain.woodpecker.reads import ABSENT
from domain.woodpecker.results import LOG_BUDGET
from domain.woodpecker.results.render import wire_size
from domain.woodpecker.tool import woodpecker
from ports.use_cases.tools import InvalidArguments, ToolRunner
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.use_cases.conftest import Call, _gateway, check_result

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# Tools that send nothing to Woodpecker, so need no setup (validate_pipeline_config).
NEEDS_NO_SERVER = {t.name for t in WOODPECKER_TOOLS if isinstance(woodpecker(t).plan, ValidateConfig)}
WRITES = [t for t in WOODPECKER_TOOLS if not t.is_read]


def _cred(sandbox: Sandbox, login: str = "ada") -> Credential:
    return Credential(sandbox.tokens[login])


# ----------------------------------------------------------------------------------- setup


async def test_without_a_url_every_tool_but_get_server_info_answers_setup_instructions_and_sends_nothing(
    sandbox: Sandbox,
) -> None:
    async with HttpxWoodpeckerGateway(None) as gateway:
        runner = ToolRunner(WOODPECKER_TOOLS, gateway, configured=False)
        for tool in WOODPECKER_TOOLS:
            if tool.name in NEEDS_NO_SERVER:
                continue
            result = await runner.run(tool.name, {}, None)
            assert result.is_error, tool.name
            assert "WOODPECKER_URL" in result.text and "README" in result.text, tool.name
    assert sandbox.requests == []


async def test_without_a_token_only_get_server_info_reaches_woodpecker(sandbox: Sandbox) -> None:
    gateway = await _gateway(sandbox)
    async with gateway:
        runner = ToolRunner(WOODPECKER_TOOLS, gateway)  # no default credential: no token
        result = await runner.run("get_current_user", {}, None)
        assert result.is_error and "WOODPECKER_TOKEN" in result.text
        assert sandbox.requests == []
        info = await runner.run("get_server_info", {}, None)
        assert not info.is_error and info.structured["server"]["token_configured"] is False
        assert "No token is configured" in info.text
        assert [r.path for r in sandbox.requests] == ["/version", "/healthz"]
        assert {r.login for r in sandbox.requests} == {None}


async def test_a_call_without_a_credential_uses_the_default_one(sandbox: Sandbox) -> None:
    gateway = await _gateway(sandbox)
    async with gateway:
        runner = ToolRunner(WOODPECKER_TOOLS, gateway, default_credential=_cred(sandbox, "bob"))
        result = await runner.run("get_current_user", {}, None)
        assert result.structured["user"]["login"] == "bob"
        mine = await runner.run("get_current_user", {}, _cred(sandbox, "eve"))
        assert mine.structured["user"]["login"] == "eve"


async def test_get_server_info_sends_no_credential(call: Call, sandbox: Sandbox) -> None:
    await call("get_server_info", "ada")
    assert [(r.path, r.login) for r in sandbox.requests] == [("/version", None), ("/healthz", None)]


async def test_get_server_info_sends_no_token_when_the_server_holds_one(sandbox: Sandbox) -> None:
    # Wired as the container wires it: the gateway holds the token and the runner falls back to it.
    token = _cred(sandbox)
    transport = httpx.AsyncHTTPTransport(verify=False)
    async with HttpxWoodpeckerGateway(sandbox.url, token=token, trust_env=False, transport=transport) as gw:
        runner = ToolRunner(WOODPECKER_TOOLS, gw, default_credential=token)
        info = await runner.run("get_server_info", {}, None)
        me = await runner.run("get_current_user", {}, None)
    assert not info.is_error and not me.is_error
    assert [(r.path, r.login) for r in sandbox.requests] == [
        ("/version", None),
        ("/healthz", None),
        ("/api/user", "ada"),
    ]


async def test_get_server_info_without_a_url_answers_setup_instructions() -> None:
    async with HttpxWoodpeckerGateway(None) as gateway:
        result = await ToolRunner(WOODPECKER_TOOLS, gateway, configured=False).run(
            "get_server_info", {}, None
        )
    assert result.is_error and "WOODPECKER_URL" in result.text


# ------------------------------------------------------------------------------ validation


async def test_validate_applies_defaults_and_raises_invalid_arguments(runner: ToolRunner) -> None:
    assert runner.validate("get_step_logs", {"repo_id": 1, "number": 2, "step_id": 3}) == {
        "repo_id": 1,
        "number": 2,
        "step_id": 3,
        "limit": 200,
        "from": "tail",
    }
    with pytest.raises(InvalidArguments, match="repo_id"):
        runner.validate("get_repository", {"repo_id": "1"})
    with pytest.raises(InvalidArguments, match="Unknown tool"):
        runner.validate("no_such_tool", {})


async def test_validate_refuses_custom_labels_and_updates_with_nothing_to_change(runner: ToolRunner) -> None:
    with pytest.raises(InvalidArguments, match="custom_labels"):
        runner.validate("create_agent", {"name": "a", "custom_labels": {"gpu": "1"}})
    with pytest.raises(InvalidArguments, match="nothing to change"):
        runner.validate("update_forge", {"forge_id": 1})


async def test_invalid_arguments_come_back_as_an_error_result_and_send_nothing(
    call: Call, sandbox: Sandbox
) -> None:
    result = await call("update_agent", "ada", agent_id=1, custom_labels={"gpu": "1"})
    assert result.is_error and result.structured["error"]["kind"] == "invalid_arguments"
    result = await call("list_repositories", "ada", page=2)
    assert result.is_error and "scope" in result.text
    assert sandbox.requests == []


# ------------------------------------------------------------------------------ guard reads


async def test_read_current_reads_a_repository_only_for_approval_or_visibility(
    runner: ToolRunner, sandbox: Sandbox
) -> None:
    ada = _cred(sandbox)
    assert (
        await runner.read_current("update_repository", {"repo_id": 1, "trusted_network": True}, ada) is None
    )
    assert sandbox.requests == []
    current = await runner.read_current("update_repository", {"repo_id": 2, "require_approval": "none"}, ada)
    assert current is not None and current["require_approval"] == "pull_requests"
    assert [(r.method, r.path) for r in sandbox.requests] == [("GET", "/api/repos/2")]


async def test_read_current_reads_a_secret_at_its_scope_only_for_events_or_images(
    runner: ToolRunner, sandbox: Sandbox
) -> None:
    ada = _cred(sandbox)
    args = {"scope": "organization", "org_id": 4, "name": "npm_token"}
    assert await runner.read_current("update_secret", {**args, "value": "new"}, ada) is None
    current = await runner.read_current("update_secret", {**args, "events": ["push"]}, ada)
    assert current is not None and set(current) == {"secret"}
    assert current["secret"]["events"] == ["manual", "push", "tag"]
    assert "value" not in current["secret"] or not current["secret"]["value"]
    assert await runner.read_current("delete_forge", {"forge_id": 1}, ada) is None


async def test_a_starts_reads_follow_each_other_and_a_failed_one_is_left_out(
    runner: ToolRunner, sandbox: Sandbox
) -> None:
    ada = _cred(sandbox)
    # Cron 4 of umbrella/infra runs on dev: the reads find its branch, then dev's blocked push.
    current = await runner.read_current("run_cron", {"repo_id": 3, "cron_id": 4}, ada)
    assert current is not None
    assert list(current) == [
        "cron",
        "repo",
        "blocked",
        "declined",
        "unreviewed",
        "pr_blocked",
        "pr_declined",
        "pr_unreviewed",
        "branches_1",
    ]
    # The repository's pull requests into any branch (ADR 0091): umbrella/infra has none.
    assert current["pr_blocked"] == current["pr_declined"] == current["pr_unreviewed"] == []
    assert [(p["number"], p["branch"]) for p in current["blocked"]] == [(3, "dev")]
    # The forge's branch names, one short page: dev is listed by exactly that name.
    assert current["branches_1"] == ["main", "dev"]
    assert current["declined"] == [] and current["unreviewed"] == current["blocked"]
    # Cron 5 names no branch: the default branch's pipelines are read.
    main = await runner.read_current("run_cron", {"repo_id": 3, "cron_id": 5}, ada)
    assert main is not None and {p["branch"] for p in main["unreviewed"]} == {"main"}
    # An unknown cron: its read answers 404 (ABSENT, no cron to read a branch from), so nothing names
    # the branch to read and the rule asks.
    missing = await runner.read_current("run_cron", {"repo_id": 3, "cron_id": 999}, ada)
    assert missing is not None and list(missing) == ["cron", "repo"] and missing["cron"] is ABSENT
    # Nothing needs approval under none: that list is not read at all.
    sandbox.world.repos[1].require_approval = "none"
    none = await runner.read_current("trigger_pipeline", {"repo_id": 1, "branch": "main"}, ada)
    assert none is not None
    assert list(none) == ["repo", "blocked", "declined", "pr_blocked", "pr_declined", "branches_1"]


async def test_a_restarts_reads_follow_the_parents_to_the_first_run(
    runner: ToolRunner, sandbox: Sandbox
) -> None:
    ada = _cred(sandbox)
    with httpx.Client(
        base_url=sandbox.url, headers={"Authorization": f"Bearer {sandbox.admin_token}"}
    ) as http:
        # Pipeline 7 of acme/web is a declined pull request: re-run it, then re-run the re-run.
        first = http.post("/api/repos/1/pipelines/7").json()
        second = http.post(f"/api/repos/1/pipelines/{first['number']}").json()
    assert (first["parent"], second["parent"]) == (7, first["number"])
    current = await runner.read_current("restart_pipeline", {"repo_id": 1, "number": second["number"]}, ada)
    assert current is not None and list(current) == ["pipeline", "repo", "origin_1", "origin_2"]
    assert (current["origin_1"]["number"], current["origin_2"]["number"]) == (first["number"], 7)
    assert current["origin_2"]["status"] == "declined"
    # A first run has no parent: nothing more is read.
    plain = await runner.read_current("restart_pipeline", {"repo_id": 1, "number": 7}, ada)
    assert plain is not None and list(plain) == ["pipeline", "repo"]


async def test_read_current_raises_the_gateways_error(runner: ToolRunner, sandbox: Sandbox) -> None:
    from ports.woodpecker import NotFound

    with pytest.raises(NotFound):
        await runner.read_current(
            "update_repository", {"repo_id": 999, "visibility": "public"}, _cred(sandbox)
        )


# ---------------------------------------------------------------------------- read-merge-write


async def test_a_partial_user_update_leaves_the_other_fields_intact(call: Call, sandbox: Sandbox) -> None:
    before = sandbox.world.users[2]
    avatar, remote = before.avatar_url, before.forge_remote_id
    result = await call("update_user", "ada", login="bob", forge_id=1, email="robert@example.org")
    assert not result.is_error, result.text
    after = sandbox.world.users[2]
    assert (after.email, after.avatar_url, after.forge_remote_id, after.admin) == (
        "robert@example.org",
        avatar,
        remote,
        False,
    )
    admin = await call("update_user", "ada", login="ada", forge_id=1, email="ada@new.example.org")
    assert admin.structured["user"]["admin"] is True and sandbox.world.users[1].admin is True


async def test_a_user_update_that_woodpecker_did_not_apply_is_an_error(call: Call, sandbox: Sandbox) -> None:
    # No account matched the body's forge_id + forge_remote_id: Woodpecker echoes the body with id 0.
    ghost = {"id": 0, "login": "bob", "email": "robert@example.org", "avatar_url": "", "org_id": 0}
    sandbox.inject_fault("PATCH", "/api/users/bob", 200, json.dumps(ghost))
    result = await call("update_user", "ada", login="bob", forge_id=1, email="robert@example.org")
    assert result.is_error, result.text
    assert "nothing changed" in result.text and "get_user" in result.text
    assert sandbox.world.users[2].email == "bob@example.org"


async def test_a_partial_agent_update_leaves_the_other_field_intact(call: Call, sandbox: Sandbox) -> None:
    await call("update_agent", "ada", agent_id=3, org_id=4, name="renamed")
    agent = sandbox.world.agents[3]
    assert (agent.name, agent.no_schedule) == ("renamed", True)
    await call("update_agent", "ada", agent_id=1, no_schedule=True)
    assert (sandbox.world.agents[1].name, sandbox.world.agents[1].no_schedule) == ("runner-amd64-1", True)


async def test_a_partial_forge_update_leaves_the_other_fields_and_the_secret_intact(
    call: Call, sandbox: Sandbox
) -> None:
    forge = sandbox.world.forges[1]
    secret, client, url = forge.oauth_client_secret, forge.client, forge.url
    await call("update_forge", "ada", forge_id=1, skip_verify=True)
    forge = sandbox.world.forges[1]
    assert (forge.client, forge.url, forge.oauth_client_secret, forge.skip_verify) == (
        client,
        url,
        secret,
        True,
    )


async def test_an_organization_agent_is_found_by_walking_the_pages(call: Call, sandbox: Sandbox) -> None:
    await call("update_agent", "ada", agent_id=3, org_id=4, no_schedule=False)
    gets = [r for r in sandbox.requests if r.method == "GET"]
    # The organization is read first: its routes go ahead only for an organization Woodpecker holds.
    assert [(r.path, r.query) for r in gets] == [
        ("/api/orgs/4", {}),
        ("/api/orgs/4/agents", {"page": "1", "perPage": "50"}),
    ]


async def test_create_user_with_admin_reports_a_half_done_create(call: Call, sandbox: Sandbox) -> None:
    sandbox.inject_fault("PATCH", "/api/users/frank", 500)
    result = await call("create_user", "ada", login="frank", admin=True)
    assert result.is_error
    assert "frank was created, but without admin" in result.text and "update_user" in result.text
    assert any(u.login == "frank" and not u.admin for u in sandbox.world.users.values())


async def test_update_registry_reports_the_stored_entry(call: Call, sandbox: Sandbox) -> None:
    result = await call(
        "update_registry",
        "bob",
        scope="repository",
        repo_id=4,
        address="registry.example.org:5000",
        password="pw2",
    )
    assert result.structured["registry"]["id"] == 4
    assert [r.method for r in sandbox.requests] == ["PATCH", "GET"]
    assert sandbox.requests[0].body == {"password": "pw2"}


# -------------------------------------------------------------------------------- Woodpecker quirks


async def test_a_move_answered_with_500_on_311_says_it_has_probably_happened(sandbox_311: Sandbox) -> None:
    gateway = await _gateway(sandbox_311)
    async with gateway:
        runner = ToolRunner(WOODPECKER_TOOLS, gateway)
        result = await runner.run("move_repository", {"repo_id": 1, "to": "acme/website"}, _cred(sandbox_311))
    check_result(sandbox_311, "move_repository", result)
    # Unknown (guard.md §7), read back, and the tool's own hint about 3.11 still said.
    assert result.is_error and result.structured["error"]["kind"] == "outcome_unknown"
    assert result.structured["read_back"] == "moved"
    assert "probably" in result.text and "get_repository" in result.text and "twice" in result.text
    assert sandbox_311.world.repos[1].full_name == "acme/website"


async def test_a_filtered_trigger_says_no_pipeline_was_created(call: Call) -> None:
    result = await call("trigger_pipeline", "ada", repo_id=1, branch="gh-pages")
    assert not result.is_error
    assert result.structured["created"] is False and "pipeline" not in result.structured


async def test_restart_sends_no_extra_query_keys(call: Call, sandbox: Sandbox) -> None:
    await call("restart_pipeline", "ada", repo_id=1, number=2)
    assert sandbox.requests[-1].query == {}


async def test_delete_repository_removes_it(call: Call, sandbox: Sandbox) -> None:
    await call("delete_repository", "ada", repo_id=3)
    assert sandbox.requests[-1].query == {"remove": "true"}
    assert 3 not in sandbox.world.repos


async def test_a_cron_is_created_enabled(call: Call, sandbox: Sandbox) -> None:
    await call("create_cron", "ada", repo_id=1, name="hourly", schedule="0 * * * *")
    assert sandbox.requests[-1].body["enabled"] is True


async def test_read_tools_change_nothing(call: Call, sandbox: Sandbox) -> None:
    from tests.use_cases.test_tools_sandbox import SUCCESS

    for tool, who, args, _ in SUCCESS:
        if WOODPECKER_TOOLS.get(tool).is_read:
            result = await call(tool, who, **args)
            assert not result.is_error, result.text
    assert sandbox.state_changing_requests() == []


# ------------------------------------------------------------------------------------ faults


async def test_a_server_error_on_a_read_is_an_error_result(call: Call, sandbox: Sandbox) -> None:
    sandbox.inject_fault("GET", "/api/forges", 503)
    result = await call("list_forges", None)
    assert result.is_error and result.structured["error"]["kind"] == "server_error"


async def test_a_failed_health_check_is_reported_not_raised(call: Call, sandbox: Sandbox) -> None:
    sandbox.inject_fault("GET", "/healthz", 500, "database ping failed")
    result = await call("get_server_info", None)
    assert not result.is_error and result.structured["server"]["healthy"] is False
    sandbox.inject_fault("GET", "/version", 500)
    failed = await call("get_server_info", None)
    assert failed.is_error and failed.structured["error"]["kind"] == "server_error"


async def test_an_unreachable_server_suggests_get_server_info() -> None:
    # Port 9 on loopback (discard) refuses connections on any ordinary machine.
    transport = httpx.AsyncHTTPTransport(retries=0)
    async with HttpxWoodpeckerGateway(
        "http://127.0.0.1:9", trust_env=False, retries=0, timeout=2.0, transport=transport
    ) as gw:
        runner = ToolRunner(WOODPECKER_TOOLS, gw)
        with anyio.fail_after(10):
            result = await runner.run(
                "trigger_pipeline", {"repo_id": 1, "branch": "main"}, Credential("x" * 40)
            )
    assert result.is_error and result.structured["error"]["kind"] == "unavailable"
    assert "get_server_info" in result.text and "list_pipelines" in result.text


# --------------------------------------------------------------------------------------- logs


async def test_a_big_log_returns_its_last_200_lines_with_the_exit_code(call: Call, sandbox: Sandbox) -> None:
    repo_id, number, step_id = sandbox.big_log_steps[10_000]
    with anyio.fail_after(30):
        result = await call("get_step_logs", "ada", repo_id=repo_id, number=number, step_id=step_id)
    s = result.structured
    assert (s["first_line"], s["last_line"], s["total_lines"]) == (9_800, 9_999, 10_000)
    assert len(s["lines"]) == 200 and s["step"]["exit_code"] == 0


async def test_a_large_window_is_cut_at_a_line_boundary_under_the_log_budget(
    call: Call, sandbox: Sandbox
) -> None:
    repo_id, number, step_id = sandbox.big_log_steps[10_000]
    with anyio.fail_after(30):
        result = await call(
            "get_step_logs",
            "ada",
            repo_id=repo_id,
            number=number,
            step_id=step_id,
            limit=5_000,
            **{"from": "head"},
        )
    s = result.structured
    assert wire_size(s, result.text) <= LOG_BUDGET
    assert s["first_line"] == 0 and s["cut_lines"] == 5_000 - len(s["lines"]) > 0
    assert [line["line"] for line in s["lines"]] == list(range(len(s["lines"])))


async def test_log_text_arrives_without_terminal_escapes(call: Call) -> None:
    result = await call("get_step_logs", "ada", repo_id=1, number=2, step_id=10204)
    text = json.dumps(result.structured)
    assert "\\u001b" not in text and "FAIL acme/web 0.42s" in text


# ---------------------------------------------------------------------------------- secrecy


@pytest.mark.parametrize("tool", ["list_agents", "get_agent", "update_agent"])
async def test_agent_tokens_never_leave_but_through_create_agent(
    call: Call, sandbox: Sandbox, tool: str
) -> None:
    args: dict[str, Any] = {
        "list_agents": {},
        "get_agent": {"agent_id": 1},
        "update_agent": {"agent_id": 1, "name": "r"},
    }[tool]
    result = await call(tool, "ada", **args)
    text = json.dumps(result.structured) + result.text
    for agent in sandbox.world.agents.values():
        assert agent.token not in text
    created = await call("create_agent", "ada", name="new-one")
    assert created.structured["agent"]["token"] in {a.token for a in sandbox.world.agents.values()}


async def test_secret_values_and_passwords_never_appear(call: Call, sandbox: Sandbox) -> None:
    outputs = [
        await call("list_secrets", "ada", scope="global"),
        await call("get_secret", "ada", scope="repository", repo_id=1, name="docker_password"),
        await call("list_registries", "ada", scope="global"),
        await call("get_forge", "ada", forge_id=1),
    ]
    text = "".join(json.dumps(o.structured) + o.text for o in outputs)
    assert "value-of-" not in text and "pw-" not in text
    assert sandbox.world.forges[1].oauth_client_secret not in text


async def test_a_partly_failed_instance_repair_names_the_repositories(call: Call, sandbox: Sandbox) -> None:
    body = json.dumps({"error": "repair failed", "failed_repos": ["acme/web", "acme/api"]})
    sandbox.inject_fault("POST", "/api/repos/repair", 500, body)
    result = await call("repair_repository", "ada", scope="instance")
    assert result.is_error and result.structured["error"]["failed_repos"] == ["acme/web", "acme/api"]
    assert "2 repositories could not be repaired (acme/web, acme/api)" in result.text
