"""prompts/list and prompts/get (ports/use_cases/prompts.py): our texts, for the tools this caller can call."""

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from adapters.mcp_server.application import McpApplication, caller_tools, identity
from domain.woodpecker.prompts import PromptError, PromptSpec
from ports.use_cases.guarded import CallContext
from ports.use_cases.prompts import Prompts


def _prompt(spec: PromptSpec) -> types.Prompt:
    return types.Prompt(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        arguments=[
            types.PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in spec.arguments
        ],
    )


class PromptHandlers:
    """prompts/list, prompts/get, and the completion of a prompt's arguments."""

    def __init__(self, app: McpApplication, admin_tools: frozenset[str]) -> None:
        self.app = app
        self.admin_tools = admin_tools
        self.served = Prompts(app.catalogue, app.guarded, app.web_root)

    async def context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        principal, credential = identity(ctx, self.app)
        return CallContext(
            principal, credential, "token", listed=await caller_tools(ctx, self.app, self.admin_tools)
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[_prompt(p) for p in self.served.listed(await self.context(ctx))]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            spec, text = self.served.text(params.name, params.arguments or {}, await self.context(ctx))
        except PromptError as e:
            # The prompt's name as asked, in the error's data: the caller's own words, not ours.
            raise MCPError(types.INVALID_PARAMS, str(e), data={"name": params.name}) from None
        return types.GetPromptResult(
            description=spec.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    async def complete(
        self,
        ctx: ServerRequestContext[Any, Any],
        ref: types.PromptReference,
        params: types.CompleteRequestParams,
    ) -> types.CompleteResult:
        values, total = await self.served.complete(
            ref.name, params.argument.name, params.argument.value, await self.context(ctx)
        )
        return types.CompleteResult(
            completion=types.Completion(values=values, total=total, has_more=total > len(values))
        )
