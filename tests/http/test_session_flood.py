"""One caller opening (and closing) sessions by the thousand neither locks the others out nor ends their sessions.

Each of the SDK's session managers holds at most 1,000 2025-11-25 sessions and refuses the next
opener with 503 while it is full, for as long as its sessions live (30 idle minutes). Before the
session gate made room from the principal holding the most, any one authenticated caller could fill
it, and opening and closing sessions pushed other callers' live ids out of the owner map.
"""

import anyio
import httpx
import pytest

from adapters.mcp_http import DEFAULT_MAX_SESSIONS
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server
from tests.fixtures.mcp import initialize_request

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def per_client_env(sandbox: Sandbox) -> dict[str, str]:
    return {"WOODPECKER_URL": sandbox.url, "WOODPECKER_MCP_AUTH": "per-client"}


async def open_sessions(url: str, bearer: str, count: int, *, close: bool) -> int:
    """`count` sessions opened by hand (closed again with DELETE when `close`); how many opened."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {bearer}"}
    opened = 0
    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        for _ in range(count):
            response = await client.post("/mcp", json=initialize_request("flood"))
            if response.status_code != 200:
                continue
            opened += 1
            if close:
                session = {"mcp-session-id": response.headers["mcp-session-id"]}
                assert (await client.delete("/mcp", headers=session)).status_code == 200
    return opened


async def test_a_callers_flood_of_sessions_does_not_lock_out_another_caller(sandbox: Sandbox) -> None:
    with anyio.fail_after(120):
        async with team_server(per_client_env(sandbox)) as url:
            flooded = await open_sessions(url, sandbox.user_token, DEFAULT_MAX_SESSIONS, close=False)
            async with mcp_client(url, sandbox.admin_token, mode="legacy") as admin:
                me = await admin.call_tool("get_current_user", {})
            # And the flooder's own oldest make room for its newest, the admin's session open.
            flooded += await open_sessions(url, sandbox.user_token, 5, close=False)
    assert flooded == DEFAULT_MAX_SESSIONS + 5
    assert not me.is_error, me.content
    assert me.structured_content is not None
    assert me.structured_content["user"]["login"] == sandbox.admin_login


async def test_another_callers_live_session_outlasts_thousands_opened_and_closed(sandbox: Sandbox) -> None:
    with anyio.fail_after(180):
        async with (
            team_server(per_client_env(sandbox)) as url,
            mcp_client(url, sandbox.admin_token, mode="legacy") as admin,
        ):
            await admin.call_tool("get_current_user", {})
            assert await open_sessions(url, sandbox.user_token, 2 * DEFAULT_MAX_SESSIONS + 5, close=True) == (
                2 * DEFAULT_MAX_SESSIONS + 5
            )
            me = await admin.call_tool("get_current_user", {})
    assert not me.is_error, me.content
    assert me.structured_content is not None
    assert me.structured_content["user"]["login"] == sandbox.admin_login
