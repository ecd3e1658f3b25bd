"""What the MCP handlers are given (`McpApplication`), and who calls: the identity an HTTP gate put in
the request's scope, the tools it may see and whose quota its entries count against."""

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from domain.config import ApprovalPageMode, ConfigError
from domain.tools import Catalogue
from domain.toolsets import TOOLSETS_HEADER, Toolsets
from ports.approval_pages import ApprovalPages
from ports.linked_tokens import TokenLinking
from ports.use_cases.caller_roles import CallerRoles
from ports.use_cases.guarded import GuardedCalls
from ports.woodpecker import Credential

# Set by the HTTP authentication middleware in the ASGI scope of an authenticated request.
PRINCIPAL_SCOPE_KEY = "woodpecker_mcp.principal"
CREDENTIAL_SCOPE_KEY = "woodpecker_mcp.credential"
# Set by the OAuth gate: the linked token as stored, and the sign-in's name as people read it.
LINKED_SCOPE_KEY = "woodpecker_mcp.linked_token"
SIGN_IN_NAME_SCOPE_KEY = "woodpecker_mcp.sign_in_name"


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
    # WOODPECKER_URL as settings trimmed it: the only server whose links a prompt's argument may be.
    web_root: str | None = None
    # stdio only: the pages the server opens in the person's browser itself, and when (ADR 0063).
    # None over HTTP, where a page needs a sign-in first.
    pages: ApprovalPages | None = None
    approval_page: ApprovalPageMode = "auto"
    # OAuth mode: the tools whose approver must be someone other than the caller (ADR 0084).
    four_eyes: frozenset[str] = frozenset()


def identity(
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


def scope_value(ctx: ServerRequestContext[Any, Any], key: str) -> object:
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
    principal, credential = identity(ctx, app)
    if principal is not None and credential is not None and await app.roles.is_admin(principal, credential):
        return listed
    return (listed if listed is not None else frozenset(app.catalogue.names)) - admin_tools


async def quota_owner(ctx: ServerRequestContext[Any, Any], app: McpApplication) -> str | None:
    """Per-client HTTP: the Woodpecker account this caller's token belongs to, as the token store's
    owner (ADR 0046), so rotating the token does not mint a fresh quota; Woodpecker not saying which
    is the one shared owner of every unidentified caller. None elsewhere: the principal is the owner."""
    if app.roles is None:
        return None
    principal, credential = identity(ctx, app)
    if principal is None or credential is None:
        return None
    return await app.roles.quota_owner(principal, credential)
