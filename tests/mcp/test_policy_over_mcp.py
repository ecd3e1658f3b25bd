"""The operator's policy (WOODPECKER_MCP_POLICY, ADR 0079) on every way of asking: real MCP SDK clients
against the server the product's container builds, with the sandbox Woodpecker's request log as witness.

A denied tool is refused before any question and any request; `ask = "always"` makes a read ask on
the dialog, the sealed 2026-07-28 question, the approval view and the two-call token alike; a shorter
`expires_in` is the life of each of them; the audit names the rule.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError

from domain.guard.policy_file import DENIED_SENTENCE
from domain.woodpecker.approval_view import APP_TOOL
from domain.woodpecker.questions import POLICY_ASKS
from domain.woodpecker.resources import REPOSITORY
from sandbox.server import Sandbox
from tests.fixtures.mcp import Harness, Person, elicit_result, harness_for
from tests.mcp.test_guard_app_view import answer, apps, view_of

pytestmark = pytest.mark.anyio

POLICY = """\
[tools.delete_repository]
deny = true

[tools.get_repository]
ask = "always"

[tools.delete_secret]
expires_in = "1m"

[tools.get_pipeline]
ask = "always"
expires_in = "30s"
"""
Way = Literal["dialog", "sealed", "token", "app"]
WAYS: tuple[Way, ...] = ("dialog", "sealed", "token", "app")
READ = {"repo_id": 1}
DELETE_SECRET = {"scope": "repository", "repo_id": 1, "name": "deploy_token"}


@asynccontextmanager
async def policed(sandbox: Sandbox, tmp_path: Path, text: str = POLICY) -> AsyncIterator[Harness]:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    async with harness_for(
        sandbox, sandbox.admin_token, environ={"WOODPECKER_MCP_POLICY": str(path)}
    ) as harness:
        yield harness


@asynccontextmanager
async def client_for(harness: Harness, way: Way, person: Person) -> AsyncIterator[Client]:
    with anyio.fail_after(30):
        if way == "dialog":
            async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                yield client
        elif way == "sealed":
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=person) as client:
                yield client
        elif way == "token":
            async with Client(harness.server, mode="legacy") as client:
                yield client
        else:
            async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                yield client


async def call_and_answer(
    client: Client, way: Way, tool: str, args: dict[str, Any], yes: bool
) -> tuple[types.CallToolResult, types.CallToolResult]:
    """The model's call, then (on the token and the view) the answer: `yes` quotes the token or
    presses Approve; a no presses Decline or leaves the token unused. (first, last) results."""
    first = await client.call_tool(tool, dict(args))
    if way == "token":
        assert first.structured_content is not None and "confirm_token" in first.structured_content, first
        if not yes:
            return first, first
        token = first.structured_content["confirm_token"]
        return first, await client.call_tool(tool, {**args, "confirm_token": token})
    if way == "app":
        return first, await client.call_tool(APP_TOOL, answer(view_of(first), dict(args), yes))
    return first, first


def text(result: types.CallToolResult) -> str:
    return str(getattr(result.content[0], "text", ""))


def requests(sandbox: Sandbox) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in sandbox.requests]


@pytest.mark.parametrize("way", WAYS)
async def test_a_denied_tool_is_refused_on_every_way_of_asking_before_any_question_or_request(
    sandbox: Sandbox, tmp_path: Path, way: Way
) -> None:
    person = Person("accept")
    async with policed(sandbox, tmp_path) as harness:
        async with client_for(harness, way, person) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            sandbox.clear_requests()
            refused = await client.call_tool("delete_repository", {"repo_id": 1})
            again = await client.call_tool("delete_repository", {"repo_id": 1, "confirm_token": "0" * 32})
    assert requests(sandbox) == []
    assert person.questions == []
    for result in (refused, again):
        assert result.is_error and result.structured_content is not None
        assert result.structured_content["error"]["kind"] == "denied_by_policy"
        assert "this server's policy denies this tool" in text(result)
        assert "nothing was done" in text(result).lower()
    assert (listed["delete_repository"].description or "").startswith(DENIED_SENTENCE)
    assert [(e["outcome"], e.get("policy")) for e in harness.audit.events] == [
        ("denied", "tools.delete_repository.deny")
    ] * 2
    assert harness.audit.events[0]["targets"] == {"repo_id": 1}


@pytest.mark.parametrize("way", WAYS)
async def test_ask_always_makes_a_read_ask_on_every_way_of_asking_and_only_a_yes_reads(
    sandbox: Sandbox, tmp_path: Path, way: Way
) -> None:
    person = Person("decline")
    async with policed(sandbox, tmp_path) as harness:
        async with client_for(harness, way, person) as client:
            sandbox.clear_requests()
            first, declined = await call_and_answer(client, way, "get_repository", READ, yes=False)
            assert requests(sandbox) == [], way
            person.reply = "accept"
            _, read = await call_and_answer(client, way, "get_repository", READ, yes=True)
    assert requests(sandbox) == [("GET", "/api/repos/1")]
    assert not read.is_error and read.structured_content is not None
    assert read.structured_content["repository"]["id"] == 1
    assert "done" not in (first.structured_content or {}) or first.structured_content["done"] is False
    if way in ("dialog", "sealed"):
        assert len(person.questions) == 2
        shown = person.questions[0]
    else:
        shown = text(first)
        assert declined.structured_content is not None and declined.structured_content.get("done") is False
    assert "This will run get_repository.\nrepo_id: 1\n" in shown and POLICY_ASKS in shown
    policy_rules = {e.get("policy") for e in harness.audit.events}
    assert policy_rules == {"tools.get_repository.ask"}
    assert harness.audit.outcomes()[-1] == "executed"


async def test_a_read_the_policy_makes_ask_is_not_served_as_a_resource_nor_linked(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async with policed(sandbox, tmp_path) as harness:
        async with client_for(harness, "dialog", Person("accept")) as client:
            templates = (await client.list_resource_templates()).resource_templates
            sandbox.clear_requests()
            with pytest.raises(MCPError):
                await client.read_resource("woodpecker://repos/1")
    assert REPOSITORY.name not in [t.name for t in templates]
    assert "pipeline" not in [t.name for t in templates]  # get_pipeline asks too
    assert requests(sandbox) == []


async def test_a_shorter_life_expires_the_two_call_token(sandbox: Sandbox, tmp_path: Path) -> None:
    async with policed(sandbox, tmp_path) as harness:
        async with client_for(harness, "token", Person()) as client:
            first = await client.call_tool("delete_secret", dict(DELETE_SECRET))
            harness.clock.advance(61)
            token = (first.structured_content or {})["confirm_token"]
            late = await client.call_tool("delete_secret", {**DELETE_SECRET, "confirm_token": token})
            fresh = await client.call_tool("delete_secret", dict(DELETE_SECRET))
            harness.clock.advance(59)
            token = (fresh.structured_content or {})["confirm_token"]
            done = await client.call_tool("delete_secret", {**DELETE_SECRET, "confirm_token": token})
    assert (first.structured_content or {})["expires_in_seconds"] == 60
    assert "for 1 minute." in text(first)
    assert late.is_error and (late.structured_content or {})["error"]["kind"] == "token_rejected"
    assert not done.is_error, done.content
    assert [(w.method, w.path) for w in sandbox.state_changing_requests()] == [
        ("DELETE", "/api/repos/1/secrets/deploy_token")
    ]


async def test_a_shorter_life_expires_the_approval_views_ticket(sandbox: Sandbox, tmp_path: Path) -> None:
    async with policed(sandbox, tmp_path) as harness:
        async with client_for(harness, "app", Person()) as client:
            first = await client.call_tool("get_pipeline", {"repo_id": 1, "number": 1})
            approval = view_of(first)
            harness.clock.advance(31)
            sandbox.clear_requests()
            late = await client.call_tool(APP_TOOL, answer(approval, {"repo_id": 1, "number": 1}, True))
    assert approval["expires_in_seconds"] == 30 and "within 30 seconds" in text(first)
    assert requests(sandbox) == []
    # Expired at the policy's life: it runs nothing and asks nothing again (ADR 0066).
    assert late.structured_content is not None and late.structured_content["state"] == "expired"
    assert "ticket_rejected" in harness.audit.outcomes()


async def test_a_shorter_life_expires_the_sealed_question(sandbox: Sandbox, tmp_path: Path) -> None:
    answers: list[float] = []

    async def slow_person(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        # The first answer comes after the question's life; the fresh question is answered at once.
        answers.append(harness.clock.now())
        if len(answers) == 1:
            harness.clock.advance(31)
        return elicit_result("accept")

    async with policed(sandbox, tmp_path) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="2026-07-28", elicitation_callback=slow_person) as client:
                sandbox.clear_requests()
                done = await client.call_tool("get_pipeline", {"repo_id": 1, "number": 1})
    assert len(answers) == 2 and not done.is_error
    assert harness.audit.outcomes() == ["asked", "seal_rejected", "asked", "approved", "executed"]
    assert requests(sandbox) == [("GET", "/api/repos/1/pipelines/1")]


async def test_a_yes_to_a_dialog_after_its_shorter_life_is_no_answer(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    async def slow_person(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        harness.clock.advance(61)
        return elicit_result("accept")

    async with policed(sandbox, tmp_path) as harness:
        with anyio.fail_after(30):
            async with Client(harness.server, mode="legacy", elicitation_callback=slow_person) as client:
                late = await client.call_tool("delete_secret", dict(DELETE_SECRET))
    assert sandbox.state_changing_requests() == []
    assert (late.structured_content or {}).get("outcome") == "no_answer"
    assert harness.audit.outcomes() == ["asked", "no_answer"]


async def test_without_a_policy_the_same_calls_run_as_before(sandbox: Sandbox) -> None:
    person = Person("decline")
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        async with client_for(harness, "dialog", person) as client:
            read = await client.call_tool("get_repository", dict(READ))
            kept = await client.call_tool("delete_repository", {"repo_id": 1})
    assert not read.is_error and person.questions != [] and "nothing was done" in text(kept)
    assert len(person.questions) == 1  # only the delete asked
