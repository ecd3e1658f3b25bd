"""Our results in MCP's shapes: a tool's definition, a tool result, a resource template and a read."""

from collections.abc import Mapping

import mcp_types as types
from mcp.shared.exceptions import MCPError

from domain.arguments import input_schema
from domain.tools import ToolSpec
from domain.woodpecker.resources import Template
from domain.woodpecker.results import output_schema
from ports.use_cases.tools import ToolResult


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


def to_call_tool_result(result: ToolResult, listed: frozenset[str] | None = None) -> types.CallToolResult:
    """The MCP result: the text, a `resource_link` for each resource that reads what the result left
    out (when this caller may read it), and the structured content."""
    content: list[types.ContentBlock] = [types.TextContent(text=result.text)]
    content += [
        types.ResourceLink(uri=link.uri, name=link.name, description=link.description, mime_type="text/plain")
        for link in result.links
        if listed is None or link.tool in listed
    ]
    return types.CallToolResult(
        content=content,
        structured_content=dict(result.structured),
        is_error=result.is_error,
        _meta=dict(result.meta) if result.meta else None,
    )


# ------------------------------------------------------------------------------------ resources


def resource_template(template: Template) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=template.uri_template,
        name=template.name,
        title=template.title,
        description=template.description,
        mime_type="text/plain",
    )


def to_read_resource_result(uri: str, result: ToolResult) -> types.ReadResourceResult:
    """The tool's text (its untrusted warning first) as the resource's one content. A failed read is a
    JSON-RPC error carrying the tool's message and hint; a log page names the next one in `_meta`."""
    if result.is_error:
        error = result.structured.get("error")
        kind = error.get("kind") if isinstance(error, Mapping) else None
        code = (
            types.INVALID_PARAMS
            if kind in ("not_found", "invalid_arguments", "unknown_tool")
            else types.INTERNAL_ERROR
        )
        raise MCPError(code, result.text)
    following = [link.uri for link in result.links if "from_line=" in link.uri]
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=uri,
                mime_type="text/plain",
                text=result.text,
                _meta={"next_page": following[0]} if following else None,
            )
        ]
    )


INTERNAL_ERROR = ToolResult(
    structured={"error": "internal error"},
    text="The tool failed inside this server; nothing more is known. See the server log.",
    is_error=True,
)
