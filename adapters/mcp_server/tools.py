"""tools/list and tools/call."""

import dataclasses
import logging
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from adapters.mcp_server.application import (
    LINKED_SCOPE_KEY,
    McpApplication,
    caller_tools,
    identity,
    quota_owner,
    scope_value,
)
from adapters.mcp_server.apps import APP_TOOL_DEFINITIONS, app_channel, view_answer, with_view
from adapters.mcp_server.asking import CONFIRM_KEY, CONFIRM_SCHEMA, McpProgress, call_context
from adapters.mcp_server.linking import (
    ACCOUNT_TOOL_NAMES,
    ACCOUNT_TOOLS,
    NO_TOKEN_TOOLS,
    account_tool,
    link_first,
    link_notice,
)
from adapters.mcp_server.middleware import call_arguments
from adapters.mcp_server.results import INTERNAL_ERROR, to_call_tool_result, tool_definition
from domain.guard import outcomes
from domain.toolsets import admin_only
from domain.woodpecker.approval_view import APP_STATE_TOOL, APP_TOOL
from ports.asker import Answer
from ports.linked_tokens import LinkedToken
from ports.use_cases.guarded import CallContext, Complete
from ports.use_cases.tools import ToolResult

logger = logging.getLogger(__name__)


class ToolHandlers:
    """tools/list and tools/call: the catalogue's tools (and the account tools in OAuth mode), as the caller may see them."""

    def __init__(self, app: McpApplication) -> None:
        self.app = app
        self.tools = [tool_definition(spec) for spec in app.catalogue]
        if app.linking is not None:
            self.tools += ACCOUNT_TOOLS
        self.schemas = {t.name: t.input_schema for t in self.tools}
        self.schemas.update({t.name: t.input_schema for t in APP_TOOL_DEFINITIONS})
        self.guarded_tools = frozenset(spec.name for spec in app.catalogue if spec.guard is not None)
        self.admin_tools = admin_only(app.catalogue)
        self._needs_token = {spec.name for spec in app.catalogue} - NO_TOKEN_TOOLS

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = await caller_tools(ctx, self.app, self.admin_tools)
        if app_channel(ctx, self.app):
            # Only a connection that declared MCP Apps is listed the app-only tool (ADR 0049).
            tools = [with_view(t) if t.name in self.guarded_tools else t for t in self.tools]
            return types.ListToolsResult(
                tools=[t for t in tools if listed is None or t.name in listed or t.name in ACCOUNT_TOOL_NAMES]
                + list(APP_TOOL_DEFINITIONS),
                cache_scope="private",
            )
        if listed is None and self.app.roles is None:
            return types.ListToolsResult(tools=self.tools)
        # The account tools (OAuth mode) concern the sign-in, not a toolset: always listed.
        # This list depends on who asks (header, account), so a 2026-07-28 client is told not to
        # share its cached copy with another authorization context.
        return types.ListToolsResult(
            tools=[
                t for t in self.tools if listed is None or t.name in listed or t.name in ACCOUNT_TOOL_NAMES
            ],
            cache_scope="private",
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        app = self.app
        linked = scope_value(ctx, LINKED_SCOPE_KEY)
        linked = linked if isinstance(linked, LinkedToken) else None
        if app.linking is not None and params.name in ACCOUNT_TOOL_NAMES:
            principal = identity(ctx, app)[0]
            answer = await account_tool(params.name, principal, app.linking)
            if params.name != "get_woodpecker_link":
                return answer
            # It names the account itself: the announcement is made, without a second line saying so.
            return await self._link_notice(answer, principal, linked, add=False)
        listed = await caller_tools(ctx, app, self.admin_tools)
        call = dataclasses.replace(
            call_context(ctx, params, app),
            listed=listed,
            progress=McpProgress(ctx.session),
            quota_owner=await quota_owner(ctx, app),
        )
        name, arguments = params.name, call_arguments(params)
        if name == APP_STATE_TOOL:
            if call.channel != "app":
                return to_call_tool_result(outcomes.unknown_tool(APP_STATE_TOOL))
            ticket = (params.arguments or {}).get("ticket")
            return to_call_tool_result(await app.guarded.view_state(ticket, call))
        if name == APP_TOOL:
            if call.channel != "app":
                # For a connection that declared no MCP Apps, the view's tool does not exist.
                return to_call_tool_result(outcomes.unknown_tool(APP_TOOL))
            answered = view_answer(params)
            if answered is None:
                return to_call_tool_result(
                    outcomes.error_result(
                        "invalid_arguments", "Nothing was done: this is no answer of the view."
                    )
                )
            name, arguments, ticket, approve = answered
            call = replace(
                call, ticket=ticket, answer=Answer("accept", confirmed=True) if approve else Answer("decline")
            )
        if (
            app.linking is not None
            and call.credential is None
            and call.principal is not None
            and name in self._needs_token
            and (listed is None or name in listed)
        ):
            fresh = await link_first(ctx, params, app, app.linking, call.principal)
            if not isinstance(fresh, LinkedToken):
                return fresh
            call, linked = replace(call, credential=fresh.credential), fresh
        result = await self._run(ctx, params.name, call, name, arguments, listed)
        return await self._link_notice(result, call.principal, linked)

    async def _link_notice(
        self,
        answer: types.CallToolResult | types.InputRequiredResult,
        principal: str | None,
        linked: LinkedToken | None,
        *,
        add: bool = True,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The first tool answer after a new link names the Woodpecker account linked (docs/adr/0059).

        A question is no answer: the notice waits for the call's end. Several answers racing may
        each carry it; none is lost to an unlink or a new link (the vault marks only the value read).
        """
        linking = self.app.linking
        if linking is None or principal is None or linked is None or linked.announced:
            return answer
        if not isinstance(answer, types.CallToolResult):
            return answer
        try:
            told = await linking.announce(principal)
        except Exception as e:
            logger.warning(
                "the linked-token store could not mark a new link announced (%s)", type(e).__name__
            )
            return answer
        if told is None or not add:
            return answer
        return answer.model_copy(
            update={"content": [*answer.content, types.TextContent(text=link_notice(told))]}
        )

    async def _run(
        self,
        ctx: ServerRequestContext[Any, Any],
        called: str,
        call: CallContext,
        name: str,
        arguments: Any,
        listed: frozenset[str] | None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        app = self.app
        try:
            outcome = await app.guarded.call(name, arguments, call)
        except Exception:
            # Never a protocol crash for a tool's own failure, and no internals on the wire.
            logger.exception("tool %s failed unexpectedly", called if called in self.schemas else "?")
            return to_call_tool_result(INTERNAL_ERROR)
        if isinstance(outcome, Complete):
            return to_call_tool_result(outcome.result, listed)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # Unreachable by construction (only 2026-07-28 requests get the mrtr channel); a
            # handshake-era client would see -32603 for an InputRequiredResult, so never send one.
            return to_call_tool_result(
                ToolResult(structured={"error": "internal error"}, text="Nothing was done.", is_error=True)
            )
        question: types.ElicitRequestParams = (
            types.ElicitRequestFormParams(message=outcome.message, requested_schema=CONFIRM_SCHEMA)
            if outcome.page is None
            else types.ElicitRequestURLParams(
                message=outcome.message, url=outcome.page.url, elicitation_id=outcome.page.elicitation_id
            )
        )
        return types.InputRequiredResult(
            input_requests={CONFIRM_KEY: types.ElicitRequest(params=question)},
            request_state=outcome.request_state,
        )
