"""The floors: the same MCP SDK's low-level server on stdio, nothing of ours imported.

`python -m bench.sdk_floor_server` answers `initialize` and an empty `tools/list`; the
difference between its spawn-to-answer time and ours is what this project adds.

`python -m bench.sdk_floor_server --read` also lists one tool, `get_repository`, that does the
least any server on this SDK must do for a read: one GET of `/api/repos/{repo_id}` with a kept
httpx client (`WOODPECKER_URL`, `WOODPECKER_TOKEN`), and the body returned as the text and as
the structured content, checked by nothing and shaped by nothing. Its round trip above the bare
GET is what the SDK (server and client) costs per call; no server built on it goes below that.
"""

import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

READ_TOOL = types.Tool(
    name="get_repository",
    description="One repository, as Woodpecker answers it.",
    input_schema={"type": "object", "properties": {"repo_id": {"type": "integer"}}, "required": ["repo_id"]},
)


async def _list_no_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[])


def _read_server() -> Server[Any]:
    import httpx

    client = httpx.AsyncClient(
        base_url=os.environ["WOODPECKER_URL"],
        headers={"Authorization": f"Bearer {os.environ['WOODPECKER_TOKEN']}"},
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[READ_TOOL])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        repo_id = int((params.arguments or {})["repo_id"])
        answer = await client.get(f"/api/repos/{repo_id}")
        answer.raise_for_status()
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)], structured_content=json.loads(answer.content)
        )

    return Server("sdk-floor", version="0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(read: bool) -> None:
    server: Server[Any] = (
        _read_server() if read else Server("sdk-floor", version="0", on_list_tools=_list_no_tools)
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, "--read" in sys.argv[1:])
