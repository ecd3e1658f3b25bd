"""resources/list, resources/templates/list, resources/read and completion/complete (a prompt's arguments by way of `prompts`)."""

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from adapters.mcp_server.application import McpApplication, caller_tools, identity
from adapters.mcp_server.apps import APPROVAL_VIEW_RESOURCE, app_channel, read_approval_view
from adapters.mcp_server.prompts import PromptHandlers
from adapters.mcp_server.results import resource_template, to_read_resource_result
from domain.woodpecker.approval_view import (
    VIEW_URI,
)
from domain.woodpecker.resources import NotAResource
from ports.use_cases.guarded import CallContext
from ports.use_cases.resources import Resources


class ResourceHandlers:
    """resources/list, resources/templates/list, resources/read and completion/complete: read-only tool calls."""

    def __init__(self, app: McpApplication, admin_tools: frozenset[str], prompts: PromptHandlers) -> None:
        self.app = app
        self.admin_tools = admin_tools
        self.served = Resources(app.catalogue, app.guarded)
        self.prompts = prompts

    async def _context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        """Who reads, and the tools they may call (the header's and the account's narrowing)."""
        principal, credential = identity(ctx, self.app)
        return CallContext(
            principal, credential, "token", listed=await caller_tools(ctx, self.app, self.admin_tools)
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # Nothing to list up front: every resource is named by a template (repositories come and go);
        # an MCP Apps connection is listed the approval view.
        if app_channel(ctx, self.app):
            return types.ListResourcesResult(resources=[APPROVAL_VIEW_RESOURCE])
        return types.ListResourcesResult(resources=[])

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                resource_template(t) for t in self.served.templates(await self._context(ctx))
            ],
            # What is listed depends on who asks (their tools), as for tools/list.
            cache_scope="private",
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri == VIEW_URI and app_channel(ctx, self.app):
            return read_approval_view()
        try:
            result = await self.served.read(params.uri, await self._context(ctx))
        except NotAResource as e:
            # The URI asked for, in the error's data (SEP-2164): the caller's own words, not ours.
            raise MCPError(types.INVALID_PARAMS, str(e), data={"uri": params.uri}) from None
        return to_read_resource_result(params.uri, result)

    async def completion(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        if isinstance(params.ref, types.PromptReference):
            return await self.prompts.complete(ctx, params.ref, params)
        if not isinstance(params.ref, types.ResourceTemplateReference):
            return types.CompleteResult(completion=types.Completion(values=[]))
        chosen = (params.context.arguments if params.context else None) or {}
        values, total = await self.served.complete(
            params.ref.uri, params.argument.name, params.argument.value, chosen, await self._context(ctx)
        )
        return types.CompleteResult(
            completion=types.Completion(values=values, total=total, has_more=total > len(values))
        )
