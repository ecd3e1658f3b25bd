"""Two principals over HTTP (per-client credentials): one caller's flood of first calls evicts only
its own pending tokens, and filling its used nonces freezes only its own approvals (issue 25,
item 5; docs/adr/0046)."""

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from adapters.memory_token_store import InMemoryTokenStore
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import Person

pytestmark = pytest.mark.anyio

QUOTA = 5
APPROVE = {"repo_id": 1, "number": 11}
YES = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}


def per_client_env(sandbox: Sandbox, tmp_path: Path) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
    }


def small_store() -> InMemoryTokenStore:
    # The product's bounds (10,000 in all, 1,000 a principal) with the same rules, made small.
    return InMemoryTokenStore(max_entries=4 * QUOTA, per_principal=QUOTA)


async def test_a_callers_flood_of_first_calls_leaves_the_admins_pending_token_redeemable(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    store = small_store()
    with anyio.fail_after(90):
        async with (
            team_server(per_client_env(sandbox, tmp_path), token_store=store) as url,
            mcp_client(url, sandbox.admin_token) as admin,
            mcp_client(url, sandbox.user_token) as flooder,
        ):
            issued = await admin.call_tool("approve_pipeline", APPROVE)
            assert issued.structured_content is not None
            token = issued.structured_content["confirm_token"]
            # Eight times the store's whole bound of first calls by the other principal.
            for number in range(1000, 1000 + 8 * 4 * QUOTA):
                flood = await flooder.call_tool("delete_pipeline_logs", {"repo_id": 1, "number": number})
                assert flood.structured_content is not None and "confirm_token" in flood.structured_content
            assert sandbox.state_changing_requests() == []
            assert len(store) == QUOTA + 1
            done = await admin.call_tool("approve_pipeline", {**APPROVE, "confirm_token": token})
    assert not done.is_error, done.content
    assert [r.path for r in sandbox.state_changing_requests()] == ["/api/repos/1/pipelines/11/approve"]


async def ask_and_answer(client: Any, tool: str, args: dict[str, Any]) -> Any:
    question = await client.session.call_tool(tool, args, allow_input_required=True)
    assert isinstance(question, types.InputRequiredResult), question
    return await client.session.call_tool(
        tool, args, input_responses=YES, request_state=question.request_state, allow_input_required=True
    )


async def test_a_caller_filling_its_used_nonces_freezes_only_its_own_approvals(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    with anyio.fail_after(90):
        async with (
            team_server(per_client_env(sandbox, tmp_path), token_store=small_store()) as url,
            mcp_client(url, sandbox.admin_token, elicitation_callback=Person()) as admin,
            mcp_client(url, sandbox.user_token, elicitation_callback=Person()) as flooder,
        ):
            for number in range(1000, 1000 + QUOTA):
                acted = await ask_and_answer(
                    flooder, "delete_pipeline_logs", {"repo_id": 1, "number": number}
                )
                assert isinstance(acted, types.CallToolResult), acted
            # Its quota of live approvals is spent: its next yes earns a fresh question, nothing sent.
            sent = len(sandbox.state_changing_requests())
            frozen = await ask_and_answer(flooder, "delete_pipeline_logs", {"repo_id": 1, "number": 2000})
            assert isinstance(frozen, types.InputRequiredResult), frozen
            assert len(sandbox.state_changing_requests()) == sent
            # The admin's approval is not frozen by it.
            done = await ask_and_answer(admin, "approve_pipeline", APPROVE)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    assert sandbox.state_changing_requests()[-1].path == "/api/repos/1/pipelines/11/approve"
