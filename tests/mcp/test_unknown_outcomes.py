"""A write whose request may have reached Woodpecker and whose answer was lost is said as unknown, never
"try again" (guard.md §7, issue 34): the result reads back what Woodpecker holds and says what happened,
the audit records `unknown` with the read-back's finding, and a new approval of the same call is a new
question that says an earlier attempt's outcome was unknown, unless the read before that question finds
the effect in place (issue 37): then nobody is asked and nothing is sent. A real fault-injecting HTTP proxy sits
between the real server and the sandbox's socket; the SDK's client drives the server (docs/adr/0025).
"""

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from adapters.woodpecker_httpx import HttpxWoodpeckerGateway
from domain.guard.outcomes import EARLIER_UNKNOWN
from domain.woodpecker.approval_view import APP_STATE_TOOL, APP_TOOL
from ports.woodpecker import Credential
from sandbox.server import Sandbox
from tests.fixtures.fault_proxy import FAULTS, Fault, fault_proxy
from tests.fixtures.mcp import MODES, Person, build_harness_on, harness_for
from tests.mcp.test_guard_app_view import answer, apps, view_of

pytestmark = pytest.mark.anyio

APPROVE = {"repo_id": 1, "number": 11}
DELETE_SECRET = {"scope": "repository", "repo_id": 1, "name": "deploy_token"}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def assert_unknown(result: types.CallToolResult, read_back: str) -> str:
    structured = result.structured_content
    assert structured is not None and result.is_error, structured
    assert structured["outcome"] == "unknown" and structured["read_back"] == read_back, structured
    text = text_of(result)
    assert "The outcome is unknown" in text, text
    assert "try again" not in text.lower() and "narrow the request" not in text.lower(), text
    return text


async def _call_twice(
    sandbox: Sandbox, fault: Fault, tool: str, args: dict[str, Any], mode: str = "legacy"
) -> tuple[types.CallToolResult, types.CallToolResult, Person, Any]:
    """One approved call through the proxy's fault, then the same call again."""
    person = Person()
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, fault) as proxy:
            async with harness_for(proxy.url, sandbox.admin_token) as harness:
                async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                    first = await client.call_tool(tool, dict(args))
                    again = await client.call_tool(tool, dict(args))
    assert proxy.broken, "the fault never hit"
    return first, again, person, harness


@pytest.mark.parametrize("fault", FAULTS)
async def test_an_approval_whose_answer_is_lost_is_unknown_and_reads_back_the_pipeline(
    sandbox: Sandbox, fault: Fault
) -> None:
    first, again, person, harness = await _call_twice(sandbox, fault, "approve_pipeline", APPROVE)
    text = assert_unknown(first, "approved")
    assert "pipeline 11 of repository 1 is no longer blocked" in text and "the approval took effect" in text
    # It reached Woodpecker once; the audit says unknown, with what the read found, never failed.
    approvals = [r for r in sandbox.state_changing_requests() if r.path.endswith("/approve")]
    assert len(approvals) >= 1
    events = [e for e in harness.audit.events if e["tool"] == "approve_pipeline"]
    assert [e["outcome"] for e in events[:3]] == ["asked", "approved", "unknown"]
    assert events[2]["read_back"] == "approved"
    # The same call again finds the pipeline no longer blocked: nobody is asked, nothing is sent.
    assert len(person.questions) == 1 and EARLIER_UNKNOWN not in person.questions[0]
    assert again.is_error and "is not blocked" in text_of(again) and "no change was sent" in text_of(again)
    assert len([r for r in sandbox.state_changing_requests() if r.path.endswith("/approve")]) == len(
        approvals
    )
    assert [e["outcome"] for e in harness.audit.events if e["tool"] == "approve_pipeline"][3:] == [
        "nothing_to_decide"
    ]


async def test_an_approval_whose_answer_never_comes_is_unknown_after_the_read_time_out(
    sandbox: Sandbox,
) -> None:
    # The proxy sends the approval on and then says nothing: the gateway's read time-out (1 s here)
    # ends the wait, and the read-back tells what Woodpecker did meanwhile.
    person = Person()
    credential = Credential(sandbox.admin_token)
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, "silent_after_send") as proxy:
            gateway = HttpxWoodpeckerGateway(
                proxy.url, token=credential, retries=0, trust_env=False, timeout=1.0
            )
            harness = build_harness_on(gateway, credential, web_root=proxy.url)
            try:
                async with Client(harness.server, mode="legacy", elicitation_callback=person) as client:
                    result = await client.call_tool("approve_pipeline", dict(APPROVE))
            finally:
                await gateway.aclose()
    text = assert_unknown(result, "approved")
    assert "no answer came within 1 s" in text
    assert harness.audit.outcomes() == ["asked", "approved", "unknown"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_504_for_a_write_that_never_reached_woodpecker_reads_back_still_blocked(
    sandbox: Sandbox, mode: str
) -> None:
    # A proxy's 504 cannot be told from Woodpecker's: unknown all the same, and the read tells.
    person = Person()
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, "504_unsent") as proxy:
            async with harness_for(proxy.url, sandbox.admin_token) as harness:
                async with Client(harness.server, mode=mode, elicitation_callback=person) as client:
                    result = await client.call_tool("approve_pipeline", dict(APPROVE))
                    again = await client.call_tool("approve_pipeline", dict(APPROVE))
    text = assert_unknown(result, "still_blocked")
    assert "is still blocked: the approval has not taken effect" in text
    # Still blocked, so the same call again is a new question, which says the earlier attempt was unknown.
    assert len(person.questions) == 2
    assert EARLIER_UNKNOWN not in person.questions[0]
    assert person.questions[1].endswith(EARLIER_UNKNOWN)
    assert person.questions[1].startswith(person.questions[0])
    assert_unknown(again, "still_blocked")  # (the proxy answers every approval 504 without sending it)
    assert sandbox.state_changing_requests() == []
    assert harness.audit.outcomes()[2] == "unknown"
    assert harness.audit.events[2]["read_back"] == "still_blocked"


@pytest.mark.parametrize("fault", FAULTS)
async def test_a_delete_whose_answer_is_lost_says_whether_the_secret_is_gone(
    sandbox: Sandbox, fault: Fault
) -> None:
    first, again, person, harness = await _call_twice(sandbox, fault, "delete_secret", DELETE_SECRET)
    text = assert_unknown(first, "gone")
    assert "no longer holds the secret: the delete took effect" in text
    events = [e for e in harness.audit.events if e["tool"] == "delete_secret"]
    assert [e["outcome"] for e in events[:3]] == ["asked", "approved", "unknown"]
    assert events[2]["read_back"] == "gone"
    # Deleted it was: the same call again asks nobody and sends nothing.
    assert len(person.questions) == 1
    assert again.is_error and again.structured_content is not None
    assert again.structured_content["error"]["kind"] == "not_found"


async def test_a_move_that_answers_500_after_moving_on_311_reads_back_moved(sandbox_311: Sandbox) -> None:
    # Woodpecker 3.11 moves, then answers 500: the old answer said "try again later".
    with anyio.fail_after(60):
        async with harness_for(sandbox_311, sandbox_311.admin_token) as harness:
            async with Client(harness.server, mode="legacy", elicitation_callback=Person()) as client:
                result = await client.call_tool("move_repository", {"repo_id": 1, "to": "bob/web"})
    text = assert_unknown(result, "moved")
    assert "has the new owner/name: the move took effect" in text
    assert harness.audit.outcomes() == ["asked", "approved", "unknown"]


async def test_a_write_without_a_read_that_tells_is_unknown_and_names_what_to_read(sandbox: Sandbox) -> None:
    # update_forge has no single read that tells whether its change is in place.
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, "reset_after_send") as proxy:
            async with harness_for(proxy.url, sandbox.admin_token) as harness:
                async with Client(harness.server, mode="legacy", elicitation_callback=Person()) as client:
                    result = await client.call_tool("update_forge", {"forge_id": 1, "client": "new-client"})
    text = assert_unknown(result, "none")
    assert "before calling it again" in text
    assert harness.audit.events[-1]["read_back"] == "none"


async def test_a_read_that_fails_is_not_an_unknown_outcome(sandbox: Sandbox) -> None:
    # Reads change nothing: their failure keeps its own words.
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, "504_unsent", picks=lambda seen: True) as proxy:
            async with harness_for(proxy.url, sandbox.admin_token) as harness:
                async with Client(harness.server, mode="legacy") as client:
                    result = await client.call_tool("get_repository", {"repo_id": 1})
    assert result.is_error and result.structured_content is not None
    assert result.structured_content.get("outcome") != "unknown"
    assert harness.audit.events == []


async def test_an_apps_view_approval_whose_answer_is_lost_is_recorded_as_unsettled(sandbox: Sandbox) -> None:
    # The MCP Apps view (ADR 0049, 0066): its ticket's record says the outcome is unknown, not "an error".
    with anyio.fail_after(60):
        async with fault_proxy(sandbox.url, "reset_after_send") as proxy:
            async with harness_for(proxy.url, sandbox.admin_token) as harness:
                async with Client(harness.server, mode="legacy", extensions=apps()) as client:
                    approval = view_of(await client.call_tool("approve_pipeline", dict(APPROVE)))
                    result = await client.call_tool(APP_TOOL, answer(approval, dict(APPROVE), True))
                    state = await client.call_tool(APP_STATE_TOOL, {"ticket": approval["ticket"]})
    assert_unknown(result, "approved")
    assert state.structured_content is not None and state.structured_content["state"] == "unsettled"
    assert "outcome is unknown" in text_of(state)
    assert harness.audit.outcomes() == ["ticket_issued", "approved", "unknown"]
