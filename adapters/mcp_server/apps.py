"""MCP Apps: the approval view's resource, the app-only tools its buttons and its check call, and when a
connection asks through it (ADR 0049, ADR 0066)."""

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from adapters.mcp_server.application import McpApplication
from adapters.mcp_server.reaching import way_of_asking
from domain.woodpecker.approval_view import (
    APP_MIME_TYPE,
    APP_STATE_TOOL,
    APP_TOOL,
    APPROVAL_VIEW_HTML,
    VIEW_URI,
)


def app_channel(ctx: ServerRequestContext[Any, Any], app: McpApplication) -> bool:
    """This request's guarded calls ask through the approval view (ADR 0049): the client shows MCP
    Apps views and no dialog or page reaches the person on this connection before it, and the server
    was not started with ELICITATION=false (which always means the token). domain/guard/reach.py decides."""
    return way_of_asking(ctx, app).channel == "app"


# ------------------------------------------------------------------ MCP Apps: the approval view

APP_TOOL_DEFINITION = types.Tool(
    name=APP_TOOL,
    title="Answer the approval view",
    description=(
        "Called only by this server's approval view, when the person presses Approve or Decline: "
        "runs the one guarded call the view showed, once, if they approved it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "The guarded tool the view asked about."},
            "arguments": {"type": "object", "description": "That call's arguments, as the host gave them."},
            "ticket": {"type": "string", "description": "The view's single-use ticket."},
            "approve": {"type": "boolean", "description": "true: Approve; false: Decline."},
        },
        "required": ["tool", "arguments", "ticket", "approve"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(
        title="Answer the approval view",
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=False,
        open_world_hint=True,
    ),
    # visibility ["app"]: the host keeps it out of the model's tool list and lets only our view call it.
    _meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
)

APP_STATE_TOOL_DEFINITION = types.Tool(
    name=APP_STATE_TOOL,
    title="Check the approval view",
    description=(
        "Called only by this server's approval view when it is shown: says whether its question is "
        "still open, or what was decided. Changes nothing."
    ),
    input_schema={
        "type": "object",
        "properties": {"ticket": {"type": "string", "description": "The view's ticket."}},
        "required": ["ticket"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(
        title="Check the approval view",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
    # A view shown again (a conversation reloaded) reads what was decided instead of offering
    # buttons (ADR 0066); app-only like the answer.
    _meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
)
APP_TOOL_DEFINITIONS = (APP_TOOL_DEFINITION, APP_STATE_TOOL_DEFINITION)

APPROVAL_VIEW_RESOURCE = types.Resource(
    uri=VIEW_URI,
    name="approval_view",
    title="Approve a Woodpecker CI change",
    description="Shows the person one guarded call's question with Approve and Decline.",
    mime_type=APP_MIME_TYPE,
)


def with_view(tool: types.Tool) -> types.Tool:
    """A guarded tool as an MCP Apps client is listed it: its results render in the approval view."""
    return tool.model_copy(update={"meta": {**(tool.meta or {}), "ui": {"resourceUri": VIEW_URI}}})


def read_approval_view() -> types.ReadResourceResult:
    # No `_meta.ui.csp`: the host's restrictive default (no external origin) is what the view needs.
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=VIEW_URI,
                mime_type=APP_MIME_TYPE,
                text=APPROVAL_VIEW_HTML,
                _meta={"ui": {"prefersBorder": True}},
            )
        ]
    )


def view_answer(params: types.CallToolRequestParams) -> tuple[str, Any, str, bool] | None:
    """The view's answer (tool, its arguments, ticket, approve), or None when it is not one."""
    raw = params.arguments or {}
    tool, arguments, ticket, approve = (raw.get(k) for k in ("tool", "arguments", "ticket", "approve"))
    if not (isinstance(tool, str) and isinstance(ticket, str) and isinstance(approve, bool)):
        return None
    if not isinstance(arguments, Mapping) or set(raw) - {"tool", "arguments", "ticket", "approve"}:
        return None
    return tool, dict(arguments), ticket, approve
