"""The MCP face of the server (SDK low-level `Server`): every catalogue tool registered from data, every call through the guard.

One handler serves both protocol revisions. A 2025-11-25 client that declared elicitation
is asked with a pushed `elicitation/create`; a 2026-07-28 request whose own `_meta`
declares elicitation gets `input_required` with our HMAC-sealed state (the SDK never sees
or wraps it: the low-level server installs no RequestStateBoundary); anything else takes
the two-call token. `InputRequiredResult` is never returned on a handshake-era connection.
"""

import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.methods import SERVER_REQUESTS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from domain.arguments import input_schema
from domain.config import ConfigError
from domain.guard import outcomes
from domain.tools import Catalogue, ToolSpec
from domain.toolsets import TOOLSETS_HEADER, Toolsets, admin_only
from domain.visible import escape
from domain.woodpecker.approval_view import (
    APP_MIME_TYPE,
    APP_STATE_TOOL,
    APP_TOOL,
    APPROVAL_VIEW_HTML,
    APPS_EXTENSION,
    VIEW_URI,
)
from domain.woodpecker.resources import NotAResource, Template
from domain.woodpecker.results import output_schema
from ports.asker import Answer, no_answer
from ports.linked_tokens import LinkedToken, LinkOffer, TokenLinking
from ports.use_cases.caller_roles import CallerRoles
from ports.use_cases.guarded import CallContext, Channel, Complete, GuardedCalls
from ports.use_cases.resources import Resources
from ports.use_cases.tools import ToolResult
from ports.woodpecker import Credential

logger = logging.getLogger(__name__)

# Set by the HTTP authentication middleware in the ASGI scope of an authenticated request.
PRINCIPAL_SCOPE_KEY = "woodpecker_mcp.principal"
CREDENTIAL_SCOPE_KEY = "woodpecker_mcp.credential"
# Set by the OAuth gate: the linked token as stored, and the sign-in's name as people read it.
LINKED_SCOPE_KEY = "woodpecker_mcp.linked_token"
SIGN_IN_NAME_SCOPE_KEY = "woodpecker_mcp.sign_in_name"

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
    # OAuth mode: each signed-in person's Woodpecker token, linked once (see `link_first`).
    linking: TokenLinking | None = None
    # Per-client HTTP: who is an instance admin; a non-admin is not listed the admin-only tools.
    roles: CallerRoles | None = None


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
        except TimeoutError:
            logger.info("the elicitation timed out; nobody answered, nothing is done")
            return no_answer("timeout")
        except MCPError as e:
            # The client, or a gateway between it and the person, answered with an error (no
            # back-channel, a dialog it cannot draw), or the SDK timed the request out itself.
            logger.info("the elicitation was answered with an error; nothing is done")
            return no_answer("timeout" if e.error.code == types.REQUEST_TIMEOUT else "error")
        except ValidationError:
            logger.info("the elicitation came back as no elicitation result; nothing is done")
            return no_answer("malformed")
        except Exception:
            # Any other failure on the way (a connection that broke) is no answer: never a yes.
            logger.info("the elicitation did not come back with an answer; nothing is done")
            return no_answer("error")
        return answer_of(result)


def answer_of(result: object) -> Answer:
    """Our reading of an elicitation result: only accept with `confirm` exactly true is a yes;
    anything that is no elicitation result is no answer at all."""
    if not isinstance(result, types.ElicitResult):
        return no_answer("malformed")
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


# The handshake revisions that define a server's `elicitation/create` (2025-06-18 on). 2024-11-05 and
# 2025-03-26 have none: a client of theirs that declares the capability anyway cannot be sent one.
PUSH_ELICITATION_REVISIONS = frozenset(
    version for method, version in SERVER_REQUESTS if method == "elicitation/create"
)


def declares_form_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    """`elicitation: {}` means form mode (backwards compatible); `{url: {}}` alone does not."""
    if capabilities is None or capabilities.elicitation is None:
        return False
    e = capabilities.elicitation
    return e.form is not None or e.url is None


def declares_apps(capabilities: types.ClientCapabilities | None) -> bool:
    """The client renders MCP Apps views: `io.modelcontextprotocol/ui` with the HTML profile among its
    MIME types, in `extensions` (SEP-2133) or, for clients of SDKs that predate it, `experimental`."""
    if capabilities is None:
        return False
    for declared in (capabilities.extensions, capabilities.experimental):
        settings = (declared or {}).get(APPS_EXTENSION)
        mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
        if isinstance(mime_types, list | tuple) and APP_MIME_TYPE in mime_types:
            return True
    return False


def app_channel(ctx: ServerRequestContext[Any, Any], app: McpApplication) -> bool:
    """This request's guarded calls ask through the approval view (ADR 0049): the client shows MCP
    Apps views and no dialog can reach it on this connection, and the server was not started with
    ELICITATION=false (which always means the token)."""
    session = ctx.session
    if not app.elicitation_enabled or not declares_apps(session.client_capabilities):
        return False
    if not declares_form_elicitation(session.client_capabilities):
        return True
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    return ctx.protocol_version not in PUSH_ELICITATION_REVISIONS or not session.can_send_request


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


def _scope_value(ctx: ServerRequestContext[Any, Any], key: str) -> object:
    scope = getattr(ctx.request, "scope", None)
    return scope.get(key) if isinstance(scope, Mapping) else None


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


async def caller_tools(
    ctx: ServerRequestContext[Any, Any], app: McpApplication, admin_tools: frozenset[str]
) -> frozenset[str] | None:
    """What this caller is listed and may call: the header's narrowing, then, in per-client
    mode, without the admin-only tools unless Woodpecker says the caller is an instance admin.
    None: everything registered."""
    listed = listed_tools(ctx, app)
    if app.roles is None or not admin_tools:
        return listed
    principal, credential = _identity(ctx, app)
    if principal is not None and credential is not None and await app.roles.is_admin(principal, credential):
        return listed
    return (listed if listed is not None else frozenset(app.catalogue.names)) - admin_tools


async def quota_owner(ctx: ServerRequestContext[Any, Any], app: McpApplication) -> str | None:
    """Per-client HTTP: the Woodpecker account this caller's token belongs to, as the token store's
    owner (ADR 0046), so rotating the token does not mint a fresh quota; Woodpecker not saying which
    is the one shared owner of every unidentified caller. None elsewhere: the principal is the owner."""
    if app.roles is None:
        return None
    principal, credential = _identity(ctx, app)
    if principal is None or credential is None:
        return None
    return await app.roles.quota_owner(principal, credential)


class McpProgress:
    """The Progress port over the request's own session: `notifications/progress` against the
    client's progressToken (the SDK sends nothing when the request carried none)."""

    def __init__(self, session: ServerSession) -> None:
        self._session = session

    async def report(self, progress: float, total: float | None, message: str) -> None:
        try:
            await self._session.report_progress(progress, total, message)
        except Exception:
            # A client that cannot be told (gone, no back-channel) must not fail the call.
            logger.debug("a progress notification could not be sent", exc_info=True)


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
    if app_channel(ctx, app):
        return CallContext(principal, credential, "app")
    if not declares_form_elicitation(session.client_capabilities):
        return CallContext(principal, credential, "token", no_dialog="client")
    if not modern and ctx.protocol_version not in PUSH_ELICITATION_REVISIONS:
        # The negotiated revision has no dialog to carry (docs/clients.md lists what each serves).
        return CallContext(principal, credential, "token", no_dialog="connection")
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


# ------------------------------------------------------------------ OAuth mode: linking a token

LINK_KEY = "link_woodpecker_token"
NO_TOKEN_TOOLS = frozenset({"get_server_info"})
LINK_MESSAGE = (
    "Link your Woodpecker account: open this page on this server and paste a Woodpecker personal access "
    "token. The page is for you alone, works once and expires in minutes."
)
_EMPTY_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _account_tool(
    name: str,
    title: str,
    description: str,
    output: dict[str, Any],
    *,
    read_only: bool,
    optional: tuple[str, ...] = (),
) -> types.Tool:
    return types.Tool(
        name=name,
        title=title,
        description=description,
        input_schema=_EMPTY_INPUT,
        output_schema={
            "type": "object",
            "properties": output,
            "required": [key for key in output if key not in optional],
        },
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=read_only,
            destructive_hint=not read_only,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


ACCOUNT_TOOLS = [
    _account_tool(
        "get_woodpecker_link",
        "Get my Woodpecker link",
        "Whether your sign-in is linked to a Woodpecker personal access token, and to which Woodpecker "
        "account (as Woodpecker named it when the token was linked). The token itself is never shown. "
        "get_current_user says who Woodpecker thinks you are now.",
        {
            "linked": {"type": "boolean"},
            "woodpecker_login": {"type": "string", "description": "Absent when nothing is linked."},
            "linked_at": {"type": "string", "description": "ISO 8601, UTC; absent when nothing is linked"},
        },
        read_only=True,
        # One type per property (docs/adr/0051): what a link does not have is left out, not null.
        optional=("woodpecker_login", "linked_at"),
    ),
    _account_tool(
        "unlink_woodpecker_token",
        "Unlink my Woodpecker token",
        "Forget the Woodpecker personal access token linked to your sign-in. Your next Woodpecker call "
        "offers a new link. This does not revoke the token in Woodpecker; do that in Woodpecker's user "
        "settings if it may have leaked.",
        {"unlinked": {"type": "boolean", "description": "false: nothing was linked"}},
        read_only=False,
    ),
]
ACCOUNT_TOOL_NAMES = frozenset(t.name for t in ACCOUNT_TOOLS)


async def account_tool(name: str, principal: str | None, linking: TokenLinking) -> types.CallToolResult:
    """The two tools of OAuth mode that concern the link itself, not Woodpecker."""
    if principal is None:
        return to_call_tool_result(
            ToolResult(structured={"error": "not signed in"}, text="Not signed in.", is_error=True)
        )
    if name == "unlink_woodpecker_token":
        removed = await linking.unlink(principal)
        text = (
            "The Woodpecker token linked to your sign-in is forgotten; your next Woodpecker call offers a new link."
            if removed
            else "No Woodpecker token was linked to your sign-in."
        )
        return to_call_tool_result(ToolResult(structured={"unlinked": removed}, text=text))
    token = await linking.linked(principal)
    if token is None:
        structured: dict[str, Any] = {"linked": False}
        text = "Your sign-in is not linked to a Woodpecker token; any Woodpecker call offers a link."
    else:
        structured = {"linked": True, "woodpecker_login": token.login, "linked_at": _linked_at(token)}
        text = f"{_linked_to(token)} {_NOT_YOURS}"
    return to_call_tool_result(ToolResult(structured=structured, text=text + "\n" + json.dumps(structured)))


def _linked_at(token: LinkedToken) -> str:
    return datetime.fromtimestamp(token.linked_at, UTC).isoformat().replace("+00:00", "Z")


def _linked_to(token: LinkedToken) -> str:
    return (
        f"Your sign-in is linked to the Woodpecker account {escape(token.login)} (since {_linked_at(token)})."
    )


_NOT_YOURS = (
    "Every Woodpecker call of this sign-in runs with that account's rights; if it is not your own account, "
    "call unlink_woodpecker_token (and revoke the token in Woodpecker if it is someone else's)."
)


def link_notice(token: LinkedToken) -> str:
    """The line the first tool answer after a new link carries (docs/adr/0059)."""
    return f"Newly linked: {_linked_to(token)} {_NOT_YOURS}"


def _link_result(offer: LinkOffer, now: float, reason: str) -> types.CallToolResult:
    minutes = max(1, round((offer.expires_at - now) / 60))
    structured = {
        "error": "woodpecker_token_not_linked",
        "link_url": offer.url,
        "link_expires_in_minutes": minutes,
    }
    text = (
        f"{reason} Ask the person to open {offer.url} (for them alone; it works once and expires in "
        f"{minutes} minutes), paste a Woodpecker personal access token there, and then call again. "
        "Do not ask them for the token here."
    )
    return to_call_tool_result(ToolResult(structured=structured, text=text, is_error=True))


def declares_url_elicitation(capabilities: types.ClientCapabilities | None) -> bool:
    return (
        capabilities is not None
        and capabilities.elicitation is not None
        and capabilities.elicitation.url is not None
    )


async def link_first(
    ctx: ServerRequestContext[Any, Any],
    params: types.CallToolRequestParams,
    app: McpApplication,
    linking: TokenLinking,
    principal: str,
) -> LinkedToken | types.CallToolResult | types.InputRequiredResult:
    """A signed-in person without a linked token: offer the linking page, the best way this client allows.

    2026-07-28 with URL elicitation: `input_required` with a URL request; the retry carries the
    person's new token (the OAuth gate finds it). 2025-11-25 with URL elicitation and a
    back-channel: `elicitation/create` in URL mode, then wait (up to the question timeout)
    until the page has stored the token, and go on with it. Otherwise: a result with the link.
    """
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    url_mode = declares_url_elicitation(ctx.session.client_capabilities)
    name = _scope_value(ctx, SIGN_IN_NAME_SCOPE_KEY)
    offer = await linking.new_link(principal, name if isinstance(name, str) else "")
    now = datetime.now(UTC).timestamp()
    if url_mode and modern:
        if LINK_KEY in (params.input_responses or {}):
            return _link_result(offer, now, "The Woodpecker token has not been linked yet.")
        request = types.ElicitRequestURLParams(
            message=LINK_MESSAGE, url=offer.url, elicitation_id=offer.elicitation_id
        )
        return types.InputRequiredResult(input_requests={LINK_KEY: types.ElicitRequest(params=request)})
    if url_mode and ctx.session.can_send_request:
        # Wait no longer than the link lives (nor than any question may).
        wait = offer.expires_at - now
        if app.ask_timeout_seconds is not None:
            wait = min(wait, app.ask_timeout_seconds)
        try:
            with anyio.fail_after(wait):
                answer = await ctx.session.elicit_url(
                    LINK_MESSAGE, offer.url, offer.elicitation_id, related_request_id=ctx.request_id
                )
                if answer.action == "accept":
                    while (token := await linking.linked(principal)) is None:
                        await anyio.sleep(1.0)
                    with suppress(Exception):
                        await ctx.session.send_elicit_complete(
                            offer.elicitation_id, related_request_id=ctx.request_id
                        )
                    return token
        except Exception:
            logger.info("the link elicitation did not complete")
        return _link_result(offer, now, "The Woodpecker token was not linked.")
    return _link_result(offer, now, "This sign-in is not linked to a Woodpecker token yet.")


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


_INTERNAL_ERROR = ToolResult(
    structured={"error": "internal error"},
    text="The tool failed inside this server; nothing more is known. See the server log.",
    is_error=True,
)


class _ToolHandlers:
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
        linked = _scope_value(ctx, LINKED_SCOPE_KEY)
        linked = linked if isinstance(linked, LinkedToken) else None
        if app.linking is not None and params.name in ACCOUNT_TOOL_NAMES:
            principal = _identity(ctx, app)[0]
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
        name, arguments = params.name, _arguments(params)
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
            return to_call_tool_result(_INTERNAL_ERROR)
        if isinstance(outcome, Complete):
            return to_call_tool_result(outcome.result, listed)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # Unreachable by construction (only 2026-07-28 requests get the mrtr channel); a
            # handshake-era client would see -32603 for an InputRequiredResult, so never send one.
            return to_call_tool_result(
                ToolResult(structured={"error": "internal error"}, text="Nothing was done.", is_error=True)
            )
        question = types.ElicitRequestFormParams(message=outcome.message, requested_schema=CONFIRM_SCHEMA)
        return types.InputRequiredResult(
            input_requests={CONFIRM_KEY: types.ElicitRequest(params=question)},
            request_state=outcome.request_state,
        )


class _ResourceHandlers:
    """resources/list, resources/templates/list, resources/read and completion/complete: read-only tool calls."""

    def __init__(self, app: McpApplication, admin_tools: frozenset[str]) -> None:
        self.app = app
        self.admin_tools = admin_tools
        self.served = Resources(app.catalogue, app.guarded)

    async def _context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        """Who reads, and the tools they may call (the header's and the account's narrowing)."""
        principal, credential = _identity(ctx, self.app)
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
        if not isinstance(params.ref, types.ResourceTemplateReference):
            return types.CompleteResult(completion=types.Completion(values=[]))
        chosen = (params.context.arguments if params.context else None) or {}
        values, total = await self.served.complete(
            params.ref.uri, params.argument.name, params.argument.value, chosen, await self._context(ctx)
        )
        return types.CompleteResult(
            completion=types.Completion(values=values, total=total, has_more=total > len(values))
        )


# The `arguments` of a tools/call that are no JSON object (see `ArgumentsNotAnObject`); _NONE when they are one.
_NONE = object()
_ARGUMENTS_NOT_AN_OBJECT: ContextVar[object] = ContextVar("arguments_not_an_object", default=_NONE)


class ArgumentsNotAnObject:
    """A tools/call whose `arguments` are no JSON object (a string holding JSON, an array) reaches
    the tool as such, so that the tool's own validation says what is wrong and how to fix it. The
    SDK would refuse the request before any handler with "Invalid request parameters" and nothing
    more, which leaves a model no way to tell its mistake. The handler runs in this task, inside
    `call_next`, so it reads the value from a context variable."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping) and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            if arguments is not None and not isinstance(arguments, Mapping):
                token = _ARGUMENTS_NOT_AN_OBJECT.set(arguments)
                try:
                    return await call_next(replace(ctx, params={**params, "arguments": None}))
                finally:
                    _ARGUMENTS_NOT_AN_OBJECT.reset(token)
        return await call_next(ctx)


def _arguments(params: types.CallToolRequestParams) -> Any:
    """The call's arguments as the client sent them, an object or not (see `ArgumentsNotAnObject`)."""
    raw = _ARGUMENTS_NOT_AN_OBJECT.get()
    return params.arguments if raw is _NONE else raw


def build_server(app: McpApplication) -> Server[Any]:
    """The low-level SDK server with all of `app.catalogue`'s tools, served through `app.guarded`."""
    tools = _ToolHandlers(app)
    resources = _ResourceHandlers(app, tools.admin_tools)

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
    )
    server.middleware.append(ArgumentsNotAnObject())
    return server


async def run_stdio(
    server: Server[Any], transport: Callable[[], AbstractAsyncContextManager[Any]] = stdio_server
) -> None:
    """Serve one client on stdin/stdout until it closes the connection; `transport` gives the streams (the SDK's by default)."""
    async with transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
