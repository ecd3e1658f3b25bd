"""The MCP face of the server (SDK low-level `Server`): every catalogue tool registered from data, every call through the guard.

One handler serves both protocol revisions. A 2025-11-25 client that declared elicitation
is asked with a pushed `elicitation/create`; a 2026-07-28 request whose own `_meta`
declares elicitation gets `input_required` with our HMAC-sealed state (the SDK never sees
or wraps it: the low-level server installs no RequestStateBoundary); anything else takes
the two-call token. `InputRequiredResult` is never returned on a handshake-era connection.
"""

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from domain.arguments import input_schema
from domain.config import ConfigError
from domain.tools import Catalogue, ToolSpec
from domain.toolsets import TOOLSETS_HEADER, Toolsets
from domain.woodpecker.results import output_schema
from ports.asker import Answer
from ports.use_cases.guarded import CallContext, Channel, Complete, GuardedCalls
from ports.use_cases.tools import ToolResult
from ports.woodpecker import Credential

logger = logging.getLogger(__name__)

# Set by the HTTP authentication middleware in the ASGI scope of an authenticated request.
PRINCIPAL_SCOPE_KEY = "woodpecker_mcp.principal"
CREDENTIAL_SCOPE_KEY = "woodpecker_mcp.credential"

# The key of our one question in `inputRequests` / `inputResponses` (2026-07-28).
CONFIRM_KEY = "confirm"
CONFIRM_SCHEMA: types.ElicitRequestedSchema = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Confirm",
            "description": "Yes, do this. Anything else and nothing is done.",
        }
    },
    "required": ["confirm"],
}


@dataclass(frozen=True, slots=True)
class McpApplication:
    """What the MCP handlers need. Built by the entrypoint's container.

    `credential` and `principal` are used for stdio and for any request whose ASGI scope
    does not carry its own (the HTTP authentication middleware puts them there).
    `lifespan`, when given, is entered once while the server runs (stdio) or while the
    HTTP session manager runs, e.g. to open and close the Woodpecker client.
    """

    name: str
    version: str
    instructions: str | None
    catalogue: Catalogue
    guarded: GuardedCalls
    credential: Credential | None = None
    principal: str | None = None
    elicitation_enabled: bool = True
    ask_timeout_seconds: float | None = 900.0
    lifespan: Callable[[], AbstractAsyncContextManager[object]] | None = None
    # The named toolsets an HTTP request's X-MCP-Toolsets header may pick from (narrowing only).
    toolsets: Toolsets | None = None


class McpSessionAsker:
    """The Asker port over a 2025-11-25 session: `elicitation/create` tied to the tool call's request."""

    def __init__(
        self, session: ServerSession, request_id: types.RequestId | None, timeout: float | None
    ) -> None:
        self._session = session
        self._request_id = request_id
        self._timeout = timeout

    async def ask(self, message: str) -> Answer:
        try:
            with anyio.fail_after(self._timeout):
                result = await self._session.elicit_form(
                    message, CONFIRM_SCHEMA, related_request_id=self._request_id
                )
        except Exception:
            # A failed, timed-out or malformed answer is a no, never a crash and never a yes.
            logger.info("the elicitation did not come back with an answer; treating it as declined")
            return Answer("decline")
        return answer_of(result)


def answer_of(result: object) -> Answer:
    """Our reading of an elicitation result: only accept with `confirm` exactly true is a yes."""
    if not isinstance(result, types.ElicitResult):
        return Answer("decline")
    if result.action != "accept":
        return Answer(result.action)
    content = result.content or {}
    return Answer("accept", confirmed=content.get("confirm") is True)


def tool_definition(spec: ToolSpec) -> types.Tool:
    a = spec.annotations
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=input_schema(spec),
        output_schema=output_schema(spec),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=a.read_only,
            destructive_hint=a.destructive,
            idempotent_hint=a.idempotent,
            open_world_hint=a.open_world,
        ),
    )


def declares_form_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    """`elicitation: {}` means form mode (backwards compatible); `{url: {}}` alone does not."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    e = capabilities.elicitation
    return e.form is not None or e.url is None


def _identity(
    ctx: ServerRequestContext[Any, Any], app: McpApplication
) -> tuple[str | None, Credential | None]:
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, Mapping) and PRINCIPAL_SCOPE_KEY in scope:
        credential = scope.get(CREDENTIAL_SCOPE_KEY)
        return (
            scope[PRINCIPAL_SCOPE_KEY],
            credential if isinstance(credential, Credential) else app.credential,
        )
    return app.principal, app.credential


def _header(ctx: ServerRequestContext[Any, Any], name: str) -> str | None:
    scope = getattr(ctx.request, "scope", None)
    if not isinstance(scope, Mapping):
        return None
    wanted = name.lower().encode("latin-1")
    values = [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == wanted]
    return ",".join(values) if values else None


def listed_tools(ctx: ServerRequestContext[Any, Any], app: McpApplication) -> frozenset[str] | None:
    """The tools this request may see and call, when its X-MCP-Toolsets header narrows them; None: all.

    The header picks from the tools the operator registered, never beyond them. An unknown
    name is the caller's mistake: a JSON-RPC invalid-params error naming it.
    """
    raw = _header(ctx, TOOLSETS_HEADER)
    if raw is None or app.toolsets is None:
        return None
    try:
        names = app.toolsets.parse(raw, TOOLSETS_HEADER)
    except ConfigError as e:
        raise MCPError(types.INVALID_PARAMS, str(e)) from None
    if names is None:
        return None
    return frozenset(app.toolsets.select(names, app.catalogue).names)


def _input_answer(params: types.CallToolRequestParams) -> Answer | None:
    responses = params.input_responses or {}
    if CONFIRM_KEY not in responses:
        return None
    return answer_of(responses[CONFIRM_KEY])


def call_context(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams, app: McpApplication
) -> CallContext:
    """Pick the channel for this one request. Modern capabilities are per request, never remembered."""
    principal, credential = _identity(ctx, app)
    session = ctx.session
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    if not app.elicitation_enabled:
        return CallContext(principal, credential, "token", no_dialog="server")
    if not declares_form_elicitation(session.client_capabilities):
        return CallContext(principal, credential, "token", no_dialog="client")
    if modern:
        return CallContext(
            principal, credential, "mrtr", answer=_input_answer(params), request_state=params.request_state
        )
    if not session.can_send_request:
        # A handshake-era connection without a back-channel (stateless or JSON-response HTTP) cannot
        # carry a dialog. The client declared it can show one, so the fallback must not blame it.
        return CallContext(principal, credential, "token", no_dialog="connection")
    channel: Channel = "push"
    asker = McpSessionAsker(session, ctx.request_id, app.ask_timeout_seconds)
    return CallContext(principal, credential, channel, asker=asker)


def to_call_tool_result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=result.text)],
        structured_content=dict(result.structured),
        is_error=result.is_error,
        _meta=dict(result.meta) if result.meta else None,
    )


def build_server(app: McpApplication) -> Server[Any]:
    """The low-level SDK server with all of `app.catalogue`'s tools, served through `app.guarded`."""
    tools = [tool_definition(spec) for spec in app.catalogue]
    schemas = {t.name: t.input_schema for t in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = listed_tools(ctx, app)
        if listed is None:
            return types.ListToolsResult(tools=tools)
        return types.ListToolsResult(tools=[t for t in tools if t.name in listed])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        call = dataclasses.replace(call_context(ctx, params, app), listed=listed_tools(ctx, app))
        try:
            outcome = await app.guarded.call(params.name, params.arguments, call)
        except Exception:
            # Never a protocol crash for a tool's own failure, and no internals on the wire.
            logger.exception("tool %s failed unexpectedly", params.name if params.name in schemas else "?")
            return to_call_tool_result(
                ToolResult(
                    structured={"error": "internal error"},
                    text="The tool failed inside this server; nothing more is known. See the server log.",
                    is_error=True,
                )
            )
        if isinstance(outcome, Complete):
            return to_call_tool_result(outcome.result)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # Unreachable by construction (only 2026-07-28 requests get the mrtr channel); a
            # handshake-era client would see -32603 for an InputRequiredResult, so never send one.
            return to_call_tool_result(
                ToolResult(structured={"error": "internal error"}, text="Nothing was done.", is_error=True)
            )
        return types.InputRequiredResult(
            input_requests={
                CONFIRM_KEY: types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message=outcome.message, requested_schema=CONFIRM_SCHEMA
                    )
                )
            },
            request_state=outcome.request_state,
        )

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        if app.lifespan is None:
            yield {}
            return
        async with app.lifespan():
            yield {}

    return Server(
        app.name,
        version=app.version,
        instructions=app.instructions,
        lifespan=lifespan,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout until it closes the connection."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
