"""The team-facing HTTP app: health first, then Host/Origin, bearer auth and a body limit, then MCP.

Order matters and is fixed here: a load balancer's probe needs no credentials and carries no
allowed Host; a request from a foreign page is refused before it can learn anything; an
unauthenticated caller is refused before the server reads (and buffers) its body; only then
does the MCP app see the request, with the caller's principal (and, per-client, its
Credential) in the ASGI scope.
"""

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence

import uvicorn
from starlette.types import ASGIApp

from adapters.http_auth import (
    LOOPBACK_HOSTS,
    BearerAuthMiddleware,
    BodyLimitMiddleware,
    OriginHostMiddleware,
    Verifier,
    derive_principal_key,
)
from adapters.http_health import HealthEndpoints, Probe
from adapters.http_limits import bounded_protocol
from adapters.oauth_resource import (
    CALLBACK_PATH,
    ApprovalPageApp,
    IssuerKeys,
    JwtTokenVerifier,
    OAuthResourceGate,
    OidcSignIn,
    SignedInApprovalPages,
    resource_metadata,
)
from adapters.token_link_page import CheckToken, TokenLinkPage, TokenLinks
from domain.parsing.urls import is_loopback_host
from entrypoints.settings import HttpSettings
from ports.linked_tokens import LinkedToken
from ports.woodpecker import Credential, NotConfigured, Request, Unauthorized, WoodpeckerGateway

_ALL_INTERFACES = ("0.0.0.0", "::", "[::]", "")


def allowed_hosts_for(http: HttpSettings) -> tuple[str, ...]:
    """The configured Host allow list, or loopback names plus the bound address when none is set."""
    if http.allowed_hosts:
        return http.allowed_hosts
    bound = () if http.host in _ALL_INTERFACES or is_loopback_host(http.host) else (http.host,)
    return (*LOOPBACK_HOSTS, *bound)


def bind_warning(host: str) -> str | None:
    """The startup warning for a bind beyond loopback (the server speaks plain HTTP), or None."""
    if is_loopback_host(host):
        return None
    where = "all interfaces" if host in _ALL_INTERFACES else host
    return (
        f"woodpecker-ci-mcp: listening on {where} over plain HTTP; bearers cross the network in "
        "every request, so put a TLS-terminating proxy in front and set WOODPECKER_MCP_ALLOWED_HOSTS"
    )


def principal_key_for(seal_keys: Sequence[bytes]) -> bytes:
    """Derived from the first seal key so replicas agree; random per process when there is none
    (then seals do not cross processes either, so nothing is lost)."""
    return derive_principal_key(seal_keys[0] if seal_keys else secrets.token_bytes(32))


def woodpecker_probe(gateway: WoodpeckerGateway) -> Probe:
    """Readiness: does Woodpecker answer its root `/healthz` (204)?"""

    async def probe() -> bool:
        await gateway.send(Request("GET", "/healthz"), None)
        return True

    return probe


def woodpecker_verifier(gateway: WoodpeckerGateway) -> Verifier:
    """Per-client authentication: is this bearer a token Woodpecker accepts (`GET /api/user`)?

    Unauthorized is a no (401 to the client); any other failure propagates, and the
    middleware answers 503 rather than a wrong 401. Without a configured Woodpecker there
    is nothing to check against and nothing to reach, so the bearer passes and every tool
    answers with setup instructions.
    """

    async def verify(credential: Credential) -> bool:
        try:
            await gateway.send(Request("GET", "/api/user"), credential)
        except Unauthorized:
            return False
        except NotConfigured:
            return True
        return True

    return verify


def woodpecker_login(gateway: WoodpeckerGateway) -> CheckToken:
    """The linking page's check: whose token is this (`GET /api/user`)? None when Woodpecker refuses it."""

    async def login(credential: Credential) -> str | None:
        try:
            response = await gateway.send(Request("GET", "/api/user"), credential)
        except Unauthorized:
            return None
        data = response.data if isinstance(response.data, dict) else {}
        return str(data.get("login") or "?")

    return login


def oauth_gate(
    http: HttpSettings,
    app: ASGIApp,
    *,
    principal_key: bytes,
    linked_for: Callable[[str], Awaitable[LinkedToken | None]] | None = None,
) -> OAuthResourceGate:
    """OAuth mode's gate: the configured issuers, audience and scope (docs/oauth.md)."""
    assert http.resource_url is not None
    scopes = [http.oauth_scope]
    verifier = JwtTokenVerifier(
        [IssuerKeys(issuer) for issuer in http.oauth_issuers],
        resource=http.resource_url,
        required_scopes=scopes,
    )
    metadata = resource_metadata(http.resource_url, http.oauth_issuers, scopes, name="Woodpecker CI")
    return OAuthResourceGate(
        app, verifier=verifier, metadata=metadata, principal_key=principal_key, linked_for=linked_for
    )


def build_team_app(
    http: HttpSettings,
    mcp_app: ASGIApp,
    *,
    principal_key: bytes,
    probes: Mapping[str, Probe],
    verify: Verifier | None = None,
    links: TokenLinks | None = None,
    check_token: CheckToken | None = None,
    pages: object = None,
    body_timeout_seconds: float = 30.0,
    warn: Callable[[str], None] | None = None,
) -> ASGIApp:
    """Compose the gates around the MCP Streamable HTTP app (which serves `/mcp`).

    `probes` feed `/readyz` (e.g. {"woodpecker": woodpecker_probe(gateway)}); `verify` checks
    per-client bearers (woodpecker_verifier(gateway)); in oauth mode `links` holds each
    signed-in person's linked Woodpecker token and `check_token` (woodpecker_login(gateway))
    checks one pasted on the linking page; `pages`, in oauth mode with an approval client, are the
    approval pages the team app serves behind the approver's sign-in; `warn`, when given, receives the
    beyond-loopback warning.
    """
    if warn is not None and (message := bind_warning(http.host)) is not None:
        warn(message)
    app: ASGIApp = BodyLimitMiddleware(
        mcp_app, max_bytes=http.max_body_bytes, timeout_seconds=body_timeout_seconds
    )
    allowed_origins = http.allowed_origins
    if http.auth == "oauth":
        app = oauth_gate(http, app, principal_key=principal_key, linked_for=links.linked if links else None)
        if links is not None and check_token is not None:
            # The linking page posts to its own origin, which must therefore pass the Origin check.
            csrf_key = hmac.new(principal_key, b"woodpecker-ci-mcp link csrf key v1", hashlib.sha256).digest()
            app = TokenLinkPage(app, links=links, check=check_token, csrf_key=csrf_key)
            allowed_origins = (*allowed_origins, links.public_origin)
        if (
            isinstance(pages, SignedInApprovalPages)
            and http.approval_client_id
            and http.approval_client_secret
        ):
            # In front of the gate: a browser brings no bearer; the page signs its person in itself.
            sign_in = OidcSignIn(
                http.oauth_issuers[0],
                client_id=http.approval_client_id,
                client_secret=http.approval_client_secret,
                redirect_uri=pages.public_origin + CALLBACK_PATH,
            )
            app = ApprovalPageApp(
                app, pages=pages, sign_in=sign_in, principal_key=principal_key, approvers=http.approvers
            )
            allowed_origins = (*allowed_origins, pages.public_origin)
    else:
        app = BearerAuthMiddleware(
            app,
            mode=http.auth,
            shared_secret=http.bearer if http.auth == "shared" else None,
            principal_key=principal_key,
            verify=verify if http.auth == "per-client" else None,
        )
    app = OriginHostMiddleware(app, allowed_hosts=allowed_hosts_for(http), allowed_origins=allowed_origins)
    return HealthEndpoints(app, probes=probes)


def uvicorn_config(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    header_timeout: float,
    max_connections: int,
    log_level: str = "warning",
) -> uvicorn.Config:
    """uvicorn settings for serving the team app: a deadline for each request head, a cap on
    connections, idle connections closed, no server banner, no trust in forwarding headers
    (docs/http.md, "Limits"). Response streams stay open as long as a 2025-11-25 question
    waits; that is bounded by the MCP app, not here."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        # h11 (never httptools, even where installed), with the head deadline and connection
        # cap of adapters/http_limits.py; h11 also bounds an incomplete head's size (below).
        http=bounded_protocol(header_timeout=header_timeout, max_connections=max_connections),
        timeout_keep_alive=15,
        timeout_graceful_shutdown=10,
        h11_max_incomplete_event_size=64 * 1024,
        server_header=False,
        proxy_headers=False,
        # No access log: uvicorn formats each line's arguments before the logger's level is checked.
        access_log=False,
    )
