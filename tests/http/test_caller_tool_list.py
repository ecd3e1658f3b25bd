"""Per-client HTTP lists each caller the tools its own Woodpecker account may use: the sandbox's admin and non-admin over real MCP clients."""

from pathlib import Path

import anyio
import pytest

from domain.toolsets import admin_only
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["2026-07-28", "legacy"]
ADMIN_ONLY = admin_only(WOODPECKER_TOOLS)
EVERYONE = frozenset(WOODPECKER_TOOLS.names) - ADMIN_ONLY


def per_client_env(sandbox: Sandbox, tmp_path: Path) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_MCP_AUTH": "per-client",
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
    }


def test_the_admin_only_tools_are_those_woodpecker_answers_only_for_an_instance_admin() -> None:
    assert {"list_users", "create_user", "get_queue_info", "set_log_level", "create_forge"} <= ADMIN_ONLY
    # Open to everyone for some arguments (a repository's secret, an organisation's agents): still listed.
    assert not {"create_secret", "list_agents", "list_repositories", "get_current_user"} & ADMIN_ONLY


@pytest.mark.parametrize("mode", MODES)
async def test_a_non_admin_is_not_listed_the_admin_tools_and_cannot_call_them(
    sandbox: Sandbox, tmp_path: Path, mode: str
) -> None:
    with anyio.fail_after(60):
        async with team_server(per_client_env(sandbox, tmp_path)) as url:
            async with mcp_client(url, sandbox.admin_token, mode=mode) as ada:
                admin_list = await ada.list_tools()
                admin_users = await ada.call_tool("list_users", {})
            sandbox.clear_requests()
            async with mcp_client(url, sandbox.user_token, mode=mode) as bob:
                user_list = await bob.list_tools()
                user_users = await bob.call_tool("list_users", {})
                user_repos = await bob.call_tool("list_repositories", {})
    assert {t.name for t in admin_list.tools} == set(WOODPECKER_TOOLS.names)
    assert {t.name for t in user_list.tools} == EVERYONE
    assert not admin_users.is_error, admin_users.content
    # As for a tool outside the caller's toolsets: unknown, and Woodpecker is never asked.
    assert user_users.is_error and "Unknown tool" in user_users.content[0].text
    assert all(r.path != "/api/users" for r in sandbox.requests)
    assert not user_repos.is_error, user_repos.content
    if mode == "2026-07-28":
        assert admin_list.cache_scope == user_list.cache_scope == "private"


async def test_the_toolsets_header_and_the_account_both_narrow(sandbox: Sandbox, tmp_path: Path) -> None:
    headers = {"X-MCP-Toolsets": "users,admin"}
    with anyio.fail_after(60):
        async with team_server(per_client_env(sandbox, tmp_path)) as url:
            async with mcp_client(url, sandbox.admin_token, headers=headers) as ada:
                admin_names = {t.name for t in (await ada.list_tools()).tools}
            async with mcp_client(url, sandbox.user_token, headers=headers) as bob:
                user_names = {t.name for t in (await bob.list_tools()).tools}
    chosen = {
        t.name for t in WOODPECKER_TOOLS if t.group in ("account", "users", "agents", "forges", "server")
    }
    assert admin_names == chosen
    assert user_names == chosen - ADMIN_ONLY
    assert "get_current_user" in user_names
