"""The cold-start floor: the same MCP SDK's low-level server on stdio with no tools, nothing of ours imported.

`python -m bench.sdk_floor_server` answers `initialize` and an empty `tools/list`; the
difference between its spawn-to-answer time and ours is what this project adds.
"""

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server


async def _list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[])


async def _serve() -> None:
    server: Server[Any] = Server("sdk-floor", version="0", on_list_tools=_list_tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
