"""The two-call token, for clients that cannot show a dialog and for ELICITATION=false: one token, one call, these arguments only."""

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from sandbox.server import Sandbox
from tests.fixtures.mcp import MODES, Person, harness_for
from tests.mcp.guarded_calls import assert_clean_question

pytestmark = pytest.mark.anyio

APPROVE = {"repo_id": 1, "number": 11}


def token_of(result: CallToolResult) -> str:
    assert result.structured_content is not None, result.content
    token = result.structured_content["confirm_token"]
    assert isinstance(token, str) and len(token) == 32
    return token


def text(result: CallToolResult) -> str:
    first = result.content[0]
    return str(getattr(first, "text", ""))


@pytest.mark.parametrize("mode", MODES)
async def test_a_token_acts_once_for_its_own_call_and_says_what_it_proves(
    sandbox: Sandbox, mode: str
) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode) as client:
                first = await client.call_tool("approve_pipeline", dict(APPROVE))
                assert sandbox.state_changing_requests() == []
                token = token_of(first)
                second = await client.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
                assert len(sandbox.state_changing_requests()) == 1
                sandbox.clear_requests()
                replay = await client.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
    assert not first.is_error and not second.is_error
    words = text(first)
    assert "proves only that the call was made twice with the same arguments" in words
    assert (
        "The client connected to this server, or a gateway between it and the person, did not declare "
        "the elicitation capability" in words
    )
    assert "ELICITATION=false" not in words
    assert token in words
    assert_clean_question(words, APPROVE)
    assert replay.is_error and "no new one was issued" in text(replay)
    assert "without confirm_token" in text(replay)
    assert replay.structured_content is not None and "confirm_token" not in replay.structured_content
    assert sandbox.state_changing_requests() == []
    assert harness.audit.outcomes() == ["token_issued", "approved", "executed", "token_rejected"]
    assert token not in repr(harness.audit.events)


async def test_an_approval_for_1_11_is_not_one_for_11_1(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy") as client:
                token = token_of(await client.call_tool("approve_pipeline", {"repo_id": 1, "number": 11}))
                swapped = await client.call_tool(
                    "approve_pipeline", {"repo_id": 11, "number": 1, "confirm_token": token}
                )
    assert swapped.is_error
    assert sandbox.state_changing_requests() == []


async def test_a_token_for_granting_trusted_network_does_not_also_make_the_repository_public(
    sandbox: Sandbox,
) -> None:
    grant = {"repo_id": 2, "trusted_network": True}
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="2026-07-28") as client:
                first = await client.call_tool("update_repository", dict(grant))
                token = token_of(first)
                widened = await client.call_tool(
                    "update_repository", {**grant, "visibility": "public", "confirm_token": token}
                )
    assert "trusted network" in text(first)
    assert widened.is_error
    assert sandbox.state_changing_requests() == []


async def test_an_expired_token_does_nothing(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy") as client:
                token = token_of(await client.call_tool("pause_queue", {}))
                harness.clock.advance(301)
                late = await client.call_tool("pause_queue", {"confirm_token": token})
    assert late.is_error
    assert sandbox.state_changing_requests() == []


async def test_a_wrong_token_does_not_cancel_the_valid_one(sandbox: Sandbox) -> None:
    args: dict[str, Any] = {"scope": "repository", "repo_id": 1, "name": "deploy_token"}
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy") as client:
                token = token_of(await client.call_tool("delete_secret", dict(args)))
                wrong = "0" * 32 if token != "0" * 32 else "1" * 32
                rejected = await client.call_tool("delete_secret", {**args, "confirm_token": wrong})
                malformed = await client.call_tool("delete_secret", {**args, "confirm_token": "not-a-token"})
                assert sandbox.state_changing_requests() == [], sandbox.state_changing_requests()
                accepted = await client.call_tool("delete_secret", {**args, "confirm_token": token})
    assert rejected.is_error, rejected.content
    assert malformed.is_error, malformed.content
    assert not accepted.is_error, (accepted.content, harness.audit.events)
    assert len(sandbox.state_changing_requests()) == 1, sandbox.state_changing_requests()


async def test_a_token_for_another_tool_does_nothing(sandbox: Sandbox) -> None:
    async with harness_for(sandbox, sandbox.admin_token) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode="legacy") as client:
                token = token_of(await client.call_tool("pause_queue", {}))
                other = await client.call_tool("set_log_level", {"level": "disabled", "confirm_token": token})
    assert other.is_error
    assert sandbox.state_changing_requests() == []


@pytest.mark.parametrize("mode", MODES)
async def test_with_elicitation_off_even_a_client_with_a_dialog_gets_a_token_naming_the_server(
    sandbox: Sandbox, mode: str
) -> None:
    person = Person("accept")
    async with harness_for(sandbox, sandbox.admin_token, elicitation=False) as harness:
        with anyio.fail_after(15):
            async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                first = await client.call_tool("delete_pipeline", {"repo_id": 1, "number": 10})
                assert sandbox.state_changing_requests() == []
                second = await client.call_tool(
                    "delete_pipeline", {"repo_id": 1, "number": 10, "confirm_token": token_of(first)}
                )
    assert person.questions == []
    words = text(first)
    assert "ELICITATION=false" in words
    assert "client did not declare" not in words
    assert first.structured_content is not None and first.structured_content["not_asked_by"] == "server"
    assert not second.is_error
    assert len(sandbox.state_changing_requests()) == 1
