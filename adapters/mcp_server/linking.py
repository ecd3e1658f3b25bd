"""OAuth mode: each signed-in person's Woodpecker token, linked once through a page (ADR 0023), and the
two account tools."""

import json
import logging
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from adapters.mcp_server.application import SIGN_IN_NAME_SCOPE_KEY, McpApplication, scope_value
from adapters.mcp_server.capabilities import declares_url_elicitation
from adapters.mcp_server.results import to_call_tool_result
from domain.visible import escape
from ports.linked_tokens import LinkedToken, LinkOffer, TokenLinking
from ports.use_cases.tools import ToolResult

logger = logging.getLogger(__name__)

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
    name = scope_value(ctx, SIGN_IN_NAME_SCOPE_KEY)
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
