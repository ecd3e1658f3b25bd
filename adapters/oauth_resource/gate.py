"""The ASGI gate: RFC 9728 metadata, RFC 6750 challenges, and the caller's principal for a verified token."""

import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence

from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.oauth_resource.keys import IssuerUnavailable
from adapters.oauth_resource.verifier import JwtTokenVerifier, TokenRejected
from domain.parsing.tokens import bearer_of
from domain.parsing.urls import split_url
from ports.linked_tokens import LinkedToken

logger = logging.getLogger(__name__)

WELL_KNOWN = "/.well-known/oauth-protected-resource"
# The ASGI scope keys the MCP adapter reads (the same names the bearer gates set).
PRINCIPAL_KEY = "woodpecker_mcp.principal"
CREDENTIAL_KEY = "woodpecker_mcp.credential"
# OAuth mode only: the person's linked token as stored, and their sign-in's name for people to read.
LINKED_KEY = "woodpecker_mcp.linked_token"
SIGN_IN_NAME_KEY = "woodpecker_mcp.sign_in_name"


def oauth_principal(issuer: str, subject: str, principal_key: bytes) -> str:
    """A stable, non-reversible name for a signed-in person: a keyed digest of issuer and subject.

    The "oauth" label and NUL separators keep it apart from the bearer digests of the other
    modes (a bearer cannot contain a NUL) and from another issuer's same subject.
    """
    message = b"\0".join((b"oauth", issuer.encode(), subject.encode()))
    return hmac.new(principal_key, message, hashlib.sha256).hexdigest()[:32]


def resource_metadata(
    resource: str, issuers: Sequence[str], scopes: Sequence[str], name: str | None = None
) -> ProtectedResourceMetadata:
    """This server's RFC 9728 document, built with the SDK's model."""
    return ProtectedResourceMetadata(
        resource=AnyHttpUrl(resource),
        authorization_servers=[AnyHttpUrl(i) for i in issuers],
        scopes_supported=list(scopes),
        bearer_methods_supported=["header"],
        resource_name=name,
    )


def resource_metadata_url(resource: str) -> str:
    """The path-suffixed RFC 9728 location of `resource`'s metadata (the SDK's rule)."""
    return str(build_resource_metadata_url(AnyHttpUrl(resource)))


def _try_again_later(error: str, message: str) -> JSONResponse:
    """A 503 that names what could not be read and asks the client to retry in a few seconds."""
    return JSONResponse({"error": error, "message": message}, status_code=503, headers={"retry-after": "5"})


class OAuthResourceGate:
    """ASGI gate: serves the metadata documents, and lets a request in only with an access token for this resource.

    Answers (RFC 6750 §3, MCP authorization profile): no token → 401 with a bare challenge;
    a token refused → 401 `invalid_token`; the scope missing → 403 `insufficient_scope`; an
    issuer whose keys cannot be read now → 503 with Retry-After. Every challenge names the
    metadata document. An accepted request travels inward with the principal (a keyed digest
    of issuer and subject), the sign-in's name (`sign_in_name` of the claims) and without its
    Authorization header; `linked_for`, when given, supplies the person's linked Woodpecker token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: JwtTokenVerifier,
        metadata: ProtectedResourceMetadata,
        principal_key: bytes,
        linked_for: Callable[[str], Awaitable[LinkedToken | None]] | None = None,
    ) -> None:
        self.app = app
        self._verifier = verifier
        self._principal_key = principal_key
        self._linked_for = linked_for
        self._document = metadata.model_dump(mode="json", exclude_none=True)
        # Exactly the audience tokens are checked against: the model's URL type writes a bare
        # origin with a "/" that a client would then ask its authorization server for.
        self._document["resource"] = verifier.resource
        self._metadata_url = resource_metadata_url(str(metadata.resource))
        suffixed = split_url(self._metadata_url).path
        self._metadata_paths = {WELL_KNOWN, suffixed}
        scope_list = " ".join(verifier.required_scopes)
        self._scope_param = f', scope="{scope_list}"' if scope_list else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") in self._metadata_paths:
            await self._serve_metadata(scope, receive, send)
            return
        values = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"]
        if not values:
            await self._challenge(
                scope, receive, send, 401, None, "Authentication required: sign in and send an access token."
            )
            return
        token = bearer_of(values)
        if token is None:
            await self._challenge(
                scope,
                receive,
                send,
                400,
                "invalid_request",
                "Send exactly one 'Authorization: Bearer' header.",
            )
            return
        try:
            access = await self._verifier.check(token)
        except TokenRejected as e:
            status = 403 if e.error == "insufficient_scope" else 401
            await self._challenge(scope, receive, send, status, e.error, e.description)
            return
        except IssuerUnavailable as e:
            logger.warning("the authorization server's keys could not be read (%s)", e)
            await _try_again_later("issuer_unavailable", "The sign-in keys could not be read; try again.")(
                scope, receive, send
            )
            return
        assert access.subject is not None and access.claims is not None
        principal = oauth_principal(str(access.claims["iss"]), access.subject, self._principal_key)
        inner = dict(scope)
        inner["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
        inner[PRINCIPAL_KEY] = principal
        inner[SIGN_IN_NAME_KEY] = str(access.claims.get("sign_in_name", ""))
        for key in (CREDENTIAL_KEY, LINKED_KEY):
            inner.pop(key, None)
        if self._linked_for is not None:
            try:
                linked = await self._linked_for(principal)
            except Exception as e:
                # Not knowing the person's token is not "no token": no link is offered, nothing runs.
                logger.warning("the linked-token store could not be read (%s)", type(e).__name__)
                await _try_again_later("token_store_unavailable", "Try again shortly.")(scope, receive, send)
                return
            if linked is not None:
                inner[CREDENTIAL_KEY] = linked.credential
                inner[LINKED_KEY] = linked
        await self.app(inner, receive, send)

    async def _serve_metadata(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            response = JSONResponse(
                {"error": "method_not_allowed"}, status_code=405, headers={"allow": "GET, HEAD"}
            )
        else:
            response = JSONResponse(self._document, headers={"cache-control": "public, max-age=3600"})
        await response(scope, receive, send)

    async def _challenge(
        self, scope: Scope, receive: Receive, send: Send, status: int, error: str | None, description: str
    ) -> None:
        params = []
        if error is not None:
            params.append(f'error="{error}"')
            params.append(f'error_description="{description}"')
        params.append(f'resource_metadata="{self._metadata_url}"')
        challenge = "Bearer " + ", ".join(params) + self._scope_param
        body = {"error": error or "unauthorized", "error_description": description}
        await JSONResponse(body, status_code=status, headers={"www-authenticate": challenge})(
            scope, receive, send
        )
