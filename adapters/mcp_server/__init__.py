"""The MCP face of the server (SDK low-level `Server`): every catalogue tool registered from data, every call through the guard.

One handler serves both protocol revisions. A 2025-11-25 client that declared elicitation
is asked with a pushed `elicitation/create`; a 2026-07-28 request whose own `_meta`
declares elicitation gets `input_required` with our HMAC-sealed state (the SDK never sees
or wraps it: the low-level server installs no RequestStateBoundary); anything else takes
the two-call token. `InputRequiredResult` is never returned on a handshake-era connection.

One module per concern: `application` (what the handlers are given, who calls), `capabilities`
(what a client declared), `asking` (the pushed dialog, the 2026-07-28 question, the channel of a
call), `apps` (the MCP Apps approval view), `linking` (OAuth mode's token link and account tools),
`results` (our results in MCP's shapes), `tools`, `resources` and `prompts` (the handlers), `middleware`.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp.server import Server
from mcp.server.stdio import stdio_server

from adapters.mcp_server.application import McpApplication
from adapters.mcp_server.asking import CONFIRM_SCHEMA, McpSessionAsker, answer_of, call_context
from adapters.mcp_server.capabilities import declares_form_elicitation
from adapters.mcp_server.linking import ACCOUNT_TOOL_NAMES, ACCOUNT_TOOLS
from adapters.mcp_server.middleware import ArgumentsNotAnObject
from adapters.mcp_server.prompts import PromptHandlers
from adapters.mcp_server.resources import ResourceHandlers
from adapters.mcp_server.results import tool_definition
from adapters.mcp_server.tools import ToolHandlers

__all__ = [
    "ACCOUNT_TOOLS",
    "ACCOUNT_TOOL_NAMES",
    "CONFIRM_SCHEMA",
    "McpApplication",
    "McpSessionAsker",
    "answer_of",
    "build_server",
    "call_context",
    "declares_form_elicitation",
    "run_stdio",
    "tool_definition",
]


def build_server(app: McpApplication) -> Server[Any]:
    """The low-level SDK server with all of `app.catalogue`'s tools, served through `app.guarded`."""
    tools = ToolHandlers(app)
    prompts = PromptHandlers(app, tools.admin_tools)
    resources = ResourceHandlers(app, tools.admin_tools, prompts)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        if app.lifespan is None:
            yield {}
            return
        async with app.lifespan():
            yield {}

    server: Server[Any] = Server(
        app.name,
        version=app.version,
        instructions=app.instructions,
        lifespan=lifespan,
        get_tool_input_schema=tools.schemas.get,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=resources.list_resources,
        on_list_resource_templates=resources.list_resource_templates,
        on_read_resource=resources.read_resource,
        on_completion=resources.completion,
        on_list_prompts=prompts.list_prompts,
        on_get_prompt=prompts.get_prompt,
    )
    server.middleware.append(ArgumentsNotAnObject())
    return server


async def run_stdio(
    server: Server[Any], transport: Callable[[], AbstractAsyncContextManager[Any]] = stdio_server
) -> None:
    """Serve one client on stdin/stdout until it closes the connection; `transport` gives the streams (the SDK's by default)."""
    async with transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
