"""X-MCP-Toolsets over HTTP: a caller narrows its own tool list within what the operator registered, never beyond, for listing and calling alike."""

import secrets
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from sandbox.server import Sandbox
from tests.fixtures.http import mcp_client, team_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODES = ["2026-07-28", "legacy"]


def group_tools(*groups: str) -> set[str]:
    """A toolset's tools, with the two every selection keeps (get_server_info, get_current_user)."""
    return {t.name for t in WOODPECKER_TOOLS if t.group in groups} | {"get_server_info", "get_current_user"}


def env(sandbox: Sandbox, tmp_path: Path, bearer: str, **extra: str) -> dict[str, str]:
    return {
        "WOODPECKER_URL": sandbox.url,
        "WOODPECKER_TOKEN": sandbox.admin_token,
        "WOODPECKER_MCP_BEARER": bearer,
        "WOODPECKER_MCP_AUDIT_FILE": str(tmp_path / "audit.jsonl"),
        **extra,
    }


@pytest.mark.parametrize("mode", MODES)
async def test_the_header_narrows_the_list_and_what_can_be_called(
    sandbox: Sandbox, tmp_path: Path, mode: str
) -> None:
    bearer = secrets.token_urlsafe(32)
    with anyio.fail_after(60):
        async with team_server(env(sandbox, tmp_path, bearer)) as url:
            async with mcp_client(
                url, bearer, mode=mode, headers={"X-MCP-Toolsets": "logs, crons"}
            ) as client:
                listed = {t.name for t in (await client.list_tools()).tools}
                outside = await client.call_tool("list_repositories", {})
                inside = await client.call_tool("list_crons", {"repo_id": 1})
            async with mcp_client(url, bearer, mode=mode) as plain:
                everything = {t.name for t in (await plain.list_tools()).tools}
    assert listed == group_tools("logs", "crons")
    assert outside.is_error and "Unknown tool" in outside.content[0].text
    assert not inside.is_error, inside.content
    assert everything == set(WOODPECKER_TOOLS.names)


async def test_the_header_cannot_bring_back_what_the_operator_left_out(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    operator = env(
        sandbox, tmp_path, bearer, WOODPECKER_TOOLSETS="pipelines,logs", WOODPECKER_READ_ONLY="true"
    )
    with anyio.fail_after(60):
        async with team_server(operator) as url:
            async with mcp_client(url, bearer, headers={"X-MCP-Toolsets": "logs,secrets,admin"}) as client:
                narrowed = {t.name for t in (await client.list_tools()).tools}
                refused = await client.call_tool("list_secrets", {"scope": "repository", "repo_id": 1})
            async with mcp_client(url, bearer, headers={"X-MCP-Toolsets": "all"}) as client:
                widest = {t.name for t in (await client.list_tools()).tools}
    read_logs = {t.name for t in WOODPECKER_TOOLS if t.group == "logs" and t.is_read} | {
        "get_server_info",
        "get_current_user",
    }
    assert narrowed == read_logs
    assert refused.is_error and "Unknown tool" in refused.content[0].text
    assert widest == {n for n in group_tools("pipelines", "logs") if WOODPECKER_TOOLS.get(n).is_read}


async def test_an_unknown_toolset_in_the_header_is_an_error_naming_it(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bearer = secrets.token_urlsafe(32)
    with anyio.fail_after(60):
        async with team_server(env(sandbox, tmp_path, bearer)) as url:
            async with mcp_client(url, bearer, headers={"X-MCP-Toolsets": "logs,everything"}) as client:
                with pytest.raises(MCPError) as caught:
                    await client.list_tools()
    assert "X-MCP-Toolsets: 'everything' is not a toolset" in str(caught.value)
