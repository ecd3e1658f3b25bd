"""guard.md §1c over MCP against the sandbox: a secret that shadows a wider one, a registry login's
password, and a drained agent put back in service ask first, on both revisions and on the token path;
a no sends nothing that changes state, a yes sends exactly the planned write once."""

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for

pytestmark = pytest.mark.anyio

# The seeded sandbox: repository 1 (acme/web) belongs to organization 4 (acme), which holds the secret
# npm_token and the registry login docker.io; slack_webhook is a global secret; agent 3 (acme-runner,
# organization 4) is drained (no_schedule true), agent 1 takes work.
REPO_SECRET = {"scope": "repository", "repo_id": 1, "value": "fresh", "events": ["push"]}
ORG_SECRET = {"scope": "organization", "org_id": 4, "value": "fresh", "events": ["push"]}

SHADOWING: dict[str, tuple[dict[str, Any], str, str]] = {
    # case: (arguments, the write it makes, words of the question's reason)
    "repository over organization": (
        {**REPO_SECRET, "name": "npm_token"},
        "/api/repos/1/secrets",
        "instead of the organization's",
    ),
    "repository over global": (
        {**REPO_SECRET, "name": "slack_webhook"},
        "/api/repos/1/secrets",
        "instead of the global one",
    ),
    "organization over global": (
        {**ORG_SECRET, "name": "slack_webhook"},
        "/api/orgs/4/secrets",
        "instead of the global one",
    ),
}

UNDRAIN = {
    "instance route": ({"agent_id": 3, "no_schedule": False}, "/api/agents/3"),
    "organization route": ({"agent_id": 3, "org_id": 4, "no_schedule": False}, "/api/orgs/4/agents/3"),
}


def _writes(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(w.method, w.path) for w in sandbox.state_changing_requests()]


def _text(result: CallToolResult) -> str:
    return str(getattr(result.content[0], "text", ""))


async def _call(
    sandbox: Sandbox, mode: str, reply: str, tool: str, args: dict[str, Any], token: str | None = None
) -> tuple[list[str], CallToolResult]:
    person = Person(reply)  # type: ignore[arg-type]
    sandbox.clear_requests()
    async with harness_for(sandbox, token or sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool(tool, dict(args))
    return person.questions, result


async def _token_path(sandbox: Sandbox, tool: str, args: dict[str, Any]) -> tuple[list, CallToolResult]:
    """The two-call token (a client without a dialog): the writes of the first call, then the second's
    result (the writes of both are in the log)."""
    sandbox.clear_requests()
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy") as client:
                first = await client.call_tool(tool, dict(args))
                after_first = _writes(sandbox)
                assert first.structured_content is not None, first.content
                token = first.structured_content["confirm_token"]
                second = await client.call_tool(tool, {**args, "confirm_token": token})
    return after_first, second


# ------------------------------------------------------------------------------ create_secret


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("case", sorted(SHADOWING))
async def test_a_secret_named_like_a_wider_one_asks_first(
    sandbox: Sandbox, mode: str, reply: str, case: str
) -> None:
    args, path, reason = SHADOWING[case]
    questions, result = await _call(sandbox, mode, reply, "create_secret", args)
    assert len(questions) == 1, questions
    assert reason in questions[0] and "fresh" not in questions[0]
    if reply == "decline":
        assert _writes(sandbox) == [] and "nothing was done" in _text(result)
        assert all(r.method == "GET" for r in sandbox.requests)
    else:
        assert not result.is_error, result.content
        assert _writes(sandbox) == [("POST", path)]


async def test_a_repository_secret_reads_each_wider_level_once_by_name(sandbox: Sandbox) -> None:
    questions, result = await _call(
        sandbox, "legacy", "decline", "create_secret", SHADOWING["repository over global"][0]
    )
    assert len(questions) == 1
    assert [(r.method, r.path, r.status) for r in sandbox.requests] == [
        ("GET", "/api/repos/1", 200),
        ("GET", "/api/orgs/4/secrets/slack_webhook", 404),
        ("GET", "/api/secrets/slack_webhook", 200),
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({**REPO_SECRET, "name": "push_token"}, "/api/repos/1/secrets"),
        ({**ORG_SECRET, "name": "fresh_name"}, "/api/orgs/4/secrets"),
    ],
    ids=["repository", "organization"],
)
async def test_a_name_no_wider_level_holds_applies_without_a_question(
    sandbox: Sandbox, mode: str, args: dict[str, Any], path: str
) -> None:
    questions, result = await _call(sandbox, mode, "decline", "create_secret", args)
    assert questions == [] and not result.is_error, result.content
    assert _writes(sandbox) == [("POST", path)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("status", [403, 500, 502])
async def test_a_wider_level_that_cannot_be_read_counts_as_holding_the_name(
    sandbox: Sandbox, mode: str, status: int
) -> None:
    # Fail closed: only a clear 404 says a level has no secret of that name.
    # (times=4: a 2026-07-28 call is made twice, and each reads again before it decides.)
    sandbox.inject_fault("GET", "/api/secrets/push_token", status, times=4)
    questions, result = await _call(
        sandbox, mode, "decline", "create_secret", {**REPO_SECRET, "name": "push_token"}
    )
    assert len(questions) == 1 and "instead of the global one" in questions[0]
    assert "organization" not in questions[0].partition("\n\n")[2]
    assert _writes(sandbox) == [] and "nothing was done" in _text(result)


@pytest.mark.parametrize("mode", MODES)
async def test_a_caller_who_cannot_read_the_organizations_secrets_is_asked(
    sandbox: Sandbox, mode: str
) -> None:
    # bob may push to acme/web but is no admin of acme: the organization's secret of that name cannot
    # be read (403), so it counts as there.
    questions, result = await _call(
        sandbox, mode, "decline", "create_secret", {**REPO_SECRET, "name": "push_token"}, sandbox.user_token
    )
    probes = [(r.path, r.status) for r in sandbox.requests if "/orgs/" in r.path]
    assert set(probes) == {("/api/orgs/4/secrets/push_token", 403)}
    assert len(questions) == 1 and "or this server could not check" in questions[0]
    assert _writes(sandbox) == []


async def test_a_shadowing_secret_on_the_token_path_acts_once_with_its_token(sandbox: Sandbox) -> None:
    args = SHADOWING["repository over organization"][0]
    after_first, second = await _token_path(sandbox, "create_secret", args)
    assert after_first == []
    assert not second.is_error, second.content
    assert _writes(sandbox) == [("POST", "/api/repos/1/secrets")]


# ------------------------------------------------------------------------------ create_registry


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("scope", ["organization", "global"])
async def test_every_registry_login_asks_because_it_carries_a_password(
    sandbox: Sandbox, mode: str, reply: str, scope: str
) -> None:
    args: dict[str, Any] = {
        "scope": scope,
        "address": "r.example.org",
        "username": "ci",
        "password": "pw-new",
    }
    if scope == "organization":
        args["org_id"] = 4
    questions, result = await _call(sandbox, mode, reply, "create_registry", args)
    assert len(questions) == 1
    assert "Registry address: r.example.org" in questions[0].split("\n")
    assert "New username: ci" in questions[0].split("\n") and "pw-new" not in questions[0]
    assert ("wider level" in questions[0]) == (scope != "global")
    path = "/api/orgs/4/registries" if scope == "organization" else "/api/registries"
    if reply == "decline":
        # Only reads: an organization's call first reads that organization (it must exist, ADR 0060).
        read = ["/api/orgs/4"] if scope == "organization" else []
        assert _writes(sandbox) == [] and {r.path for r in sandbox.requests} <= set(read)
    else:
        assert not result.is_error, result.content
        assert _writes(sandbox) == [("POST", path)]


async def test_a_registry_login_on_the_token_path_acts_once_with_its_token(sandbox: Sandbox) -> None:
    args = {"scope": "global", "address": "r.example.org", "username": "ci", "password": "pw-new"}
    after_first, second = await _token_path(sandbox, "create_registry", args)
    assert after_first == [] and not second.is_error, second.content
    assert _writes(sandbox) == [("POST", "/api/registries")]


# ------------------------------------------------------------------------------ update_agent


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reply", ["decline", "accept"])
@pytest.mark.parametrize("case", sorted(UNDRAIN))
async def test_putting_a_drained_agent_back_in_service_asks_first(
    sandbox: Sandbox, mode: str, reply: str, case: str
) -> None:
    args, path = UNDRAIN[case]
    questions, result = await _call(sandbox, mode, reply, "update_agent", args)
    assert len(questions) == 1 and "drained" in questions[0]
    assert questions[0].startswith("This will change agent 3")
    if reply == "decline":
        assert _writes(sandbox) == [] and "nothing was done" in _text(result)
        assert sandbox.world.agents[3].no_schedule is True
    else:
        assert not result.is_error, result.content
        assert _writes(sandbox) == [("PATCH", path)]
        assert sandbox.world.agents[3].no_schedule is False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "args",
    [
        {"agent_id": 1, "no_schedule": False},
        {"agent_id": 1, "no_schedule": True},
        {"agent_id": 3, "name": "acme-2"},
    ],
    ids=["already-in-service", "draining", "renaming-a-drained-agent"],
)
async def test_draining_renaming_or_keeping_an_agent_in_service_applies_unasked(
    sandbox: Sandbox, mode: str, args: dict[str, Any]
) -> None:
    questions, result = await _call(sandbox, mode, "decline", "update_agent", args)
    assert questions == [] and not result.is_error, result.content
    assert _writes(sandbox) == [("PATCH", f"/api/agents/{args['agent_id']}")]


@pytest.mark.parametrize("mode", MODES)
async def test_an_agent_that_cannot_be_read_is_not_put_back_in_service(sandbox: Sandbox, mode: str) -> None:
    sandbox.inject_fault("GET", "/api/agents/1", 500)
    questions, result = await _call(
        sandbox, mode, "accept", "update_agent", {"agent_id": 1, "no_schedule": False}
    )
    assert questions == [] and result.is_error
    assert _writes(sandbox) == []


async def test_undraining_on_the_token_path_acts_once_with_its_token(sandbox: Sandbox) -> None:
    after_first, second = await _token_path(sandbox, "update_agent", {"agent_id": 3, "no_schedule": False})
    assert after_first == [] and not second.is_error, second.content
    assert _writes(sandbox) == [("PATCH", "/api/agents/3")]
