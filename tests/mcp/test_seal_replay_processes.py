"""An accepted 2026-07-28 answer runs at most once across processes (issue 33, item 0; guard.md §7).

Two real stdio server processes share WOODPECKER_MCP_SEAL_KEYS and keep the default in-memory
token store (a replica, or the same server restarted or woken by a gateway): the answer one of
them acted on, replayed to the other, must earn a fresh question there, never a second write.
"""

import base64
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from sandbox.server import Sandbox
from tests.fixtures.mcp import Person, elicit_result, server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

GRANT = {"login": "bob", "forge_id": 1, "admin": True}
YES = {"confirm": elicit_result("accept")}


@asynccontextmanager
async def process(sandbox: Sandbox, ring: str) -> AsyncIterator[Client]:
    """The real server as its own stdio process with this seal key ring and the in-memory store."""
    command, args = server_command()
    env = server_environment(sandbox.url, sandbox.admin_token, WOODPECKER_MCP_SEAL_KEYS=ring)
    params = StdioServerParameters(command=command, args=args, env=env)
    async with Client(params, mode="2026-07-28", elicitation_callback=Person()) as client:
        yield client


def bob_is_admin(sandbox: Sandbox) -> bool:
    with sandbox.state.lock:
        bob = sandbox.world.user_by_login("bob")
        assert bob is not None
        return bob.admin


def revoke_by_hand(sandbox: Sandbox) -> None:
    with sandbox.state.lock:
        bob = sandbox.world.user_by_login("bob")
        assert bob is not None
        bob.admin = False


async def test_an_answer_acted_on_in_one_process_earns_a_fresh_question_in_another(sandbox: Sandbox) -> None:
    ring = base64.b64encode(secrets.token_bytes(32)).decode()
    retry: dict[str, Any] = {"input_responses": YES, "allow_input_required": True}
    with anyio.fail_after(120):
        async with process(sandbox, ring) as first:
            question = await first.session.call_tool("update_user", GRANT, allow_input_required=True)
            assert isinstance(question, types.InputRequiredResult), question
            retry["request_state"] = question.request_state
            done = await first.session.call_tool("update_user", GRANT, **retry)
            assert isinstance(done, types.CallToolResult) and not done.is_error, done
        assert bob_is_admin(sandbox)
        revoke_by_hand(sandbox)
        sandbox.clear_requests()
        # The same server restarted (or a replica, or a process a gateway woke): same keys, its own memory.
        async with process(sandbox, ring) as second:
            replayed = await second.session.call_tool("update_user", GRANT, **retry)
            assert isinstance(replayed, types.InputRequiredResult), replayed
            assert sandbox.state_changing_requests() == [] and not bob_is_admin(sandbox)
            # Within one process an unused answer still runs: fixed keys keep working there.
            fresh = await second.session.call_tool("update_user", GRANT, allow_input_required=True)
            assert isinstance(fresh, types.InputRequiredResult)
            answered = await second.session.call_tool(
                "update_user",
                GRANT,
                input_responses=YES,
                request_state=fresh.request_state,
                allow_input_required=True,
            )
    assert replayed.request_state != question.request_state
    assert isinstance(answered, types.CallToolResult) and not answered.is_error, answered
    assert len(sandbox.state_changing_requests()) == 1  # the second process's own answer, once
