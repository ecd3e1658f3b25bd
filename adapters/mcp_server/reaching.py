"""The facts one request gives about how a person can be reached, read off the MCP request, and the
way of asking the pure policy (domain/guard/reach.py) picks from them. The same answer serves
tools/list, resources and tools/call, so what a client is listed is what its calls use."""

from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from adapters.mcp_server.application import McpApplication
from adapters.mcp_server.capabilities import (
    PUSH_ELICITATION_REVISIONS,
    URL_ELICITATION_REVISION,
    declares_apps,
    declares_form_elicitation,
    declares_url_elicitation,
)
from domain.guard.reach import Facts, Revision, Route, route


def revision_of(protocol_version: str | None) -> Revision:
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    if protocol_version == URL_ELICITATION_REVISION:
        return "push_url"
    if protocol_version in PUSH_ELICITATION_REVISIONS:
        return "push"
    return "none"


def facts_of(ctx: ServerRequestContext[Any, Any], app: McpApplication, tool: str | None = None) -> Facts:
    """Modern capabilities are per request, never remembered. `tool`: the call's, when it is one."""
    session = ctx.session
    capabilities = session.client_capabilities
    return Facts(
        elicitation_enabled=app.elicitation_enabled,
        page_mode=app.approval_page,
        pages=app.pages is not None,
        form=declares_form_elicitation(capabilities),
        url=declares_url_elicitation(capabilities),
        apps=declares_apps(capabilities),
        revision=revision_of(ctx.protocol_version),
        back_channel=session.can_send_request,
        four_eyes=tool is not None and tool in app.four_eyes,
    )


def way_of_asking(ctx: ServerRequestContext[Any, Any], app: McpApplication, tool: str | None = None) -> Route:
    return route(facts_of(ctx, app, tool))
