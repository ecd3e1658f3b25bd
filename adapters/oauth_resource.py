"""This server as an OAuth 2.1 resource server (the MCP authorization profile): JWT access tokens checked against trusted issuers' published keys, RFC 9728 metadata, RFC 6750 challenges.

The SDK gives the vocabulary (`AccessToken`, the `TokenVerifier` protocol, the
`ProtectedResourceMetadata` model and the RFC 9728 well-known path); PyJWT does the JOSE
work. What is ours is the policy: only issuers from the configuration, keys only from each
issuer's own JWKS (found through its metadata, cached, re-read at most once per
`min_refresh_seconds` when an unknown key id shows up), only asymmetric keys, only the
algorithms a key's type allows (never `none`, never HMAC: a public key is no secret), the
audience equal to this server's canonical resource URI, expiry and not-before with a small
leeway, and a required scope. The gate answers RFC 6750 errors itself so that the client
learns which one (the SDK's middleware says `invalid_token` for everything).
"""

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx
import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from domain.parsing.tokens import bearer_of
from domain.parsing.urls import BadUrl, split_url

logger = logging.getLogger(__name__)

WELL_KNOWN = "/.well-known/oauth-protected-resource"
# The ASGI scope keys the MCP adapter reads (the same names the bearer gates set).
PRINCIPAL_KEY = "woodpecker_mcp.principal"
CREDENTIAL_KEY = "woodpecker_mcp.credential"
DEFAULT_LEEWAY_SECONDS = 30
_MAX_DOCUMENT_BYTES = 256 * 1024
_MAX_TOKEN_CHARS = 16 * 1024

# The signature algorithms each key type may verify. HMAC ("oct") keys are never taken from a
# JWKS: a published key is public, so anything it "verifies" anyone could have signed.
_ALGORITHMS_BY_KTY: Mapping[str, frozenset[str]] = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}),
    "EC": frozenset({"ES256", "ES384", "ES512"}),
    "OKP": frozenset({"EdDSA"}),
}
_EC_ALGORITHM_BY_CURVE = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


class TokenRejected(Exception):
    """An access token this server does not accept. `error` is an RFC 6750 code; `description` is safe to show."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


class IssuerUnavailable(Exception):
    """The issuer's metadata or keys could not be read (network, status, shape). Never contains a token."""


def oauth_principal(issuer: str, subject: str, principal_key: bytes) -> str:
    """A stable, non-reversible name for a signed-in person: a keyed digest of issuer and subject.

    The "oauth" label and NUL separators keep it apart from the bearer digests of the other
    modes (a bearer cannot contain a NUL) and from another issuer's same subject.
    """
    message = b"\0".join((b"oauth", issuer.encode(), subject.encode()))
    return hmac.new(principal_key, message, hashlib.sha256).hexdigest()[:32]


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer publishes its metadata, in the order the MCP authorization profile tries them.

    RFC 8414 inserts the well-known segment before the issuer's path; OpenID Connect
    Discovery appends it (and is also tried inserted).
    """
    parts = split_url(issuer)
    path = parts.path.rstrip("/")
    origin = parts.origin
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


Fetch = Callable[[str], Awaitable[Any]]


async def fetch_json(url: str, *, timeout_seconds: float = 5.0) -> Any:
    """GET a small JSON document: no redirects, a byte ceiling, a timeout. Raises IssuerUnavailable."""
    try:
        async with httpx.AsyncClient(timeout=timeout_seconds, follow_redirects=False) as client:
            async with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
                if response.status_code != 200:
                    raise IssuerUnavailable(f"answered {response.status_code}")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > _MAX_DOCUMENT_BYTES:
                        raise IssuerUnavailable("sent a document larger than allowed")
        return json.loads(bytes(body))
    except (httpx.HTTPError, ValueError) as e:
        raise IssuerUnavailable(type(e).__name__) from None


class IssuerKeys:
    """One trusted issuer's signing keys: its JWKS, found through its metadata and cached.

    The cache is used for `max_age_seconds`; a key id it does not know triggers a re-read.
    Either way the issuer is asked at most once every `min_refresh_seconds`, so a stream of
    tokens with made-up key ids cannot turn into a stream of requests to the issuer. While
    the issuer cannot be reached, the keys read last stay in use.
    """

    def __init__(
        self,
        issuer: str,
        *,
        fetch: Fetch = fetch_json,
        max_age_seconds: float = 600.0,
        min_refresh_seconds: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self._fetch = fetch
        self._max_age = max_age_seconds
        self._min_refresh = min_refresh_seconds
        self._monotonic = monotonic
        self._by_kid: dict[str, dict[str, Any]] = {}
        self._jwks_uri: str | None = None
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._fetch_count = 0
        self._lock = anyio.Lock()

    @property
    def fetches(self) -> int:
        """How many times the JWKS was read (for tests of the bounded refresh)."""
        return self._fetch_count

    async def key(self, kid: str | None) -> dict[str, Any] | None:
        """The JWK for `kid` (or the only signing key when the token names none), or None.

        Raises IssuerUnavailable only when no keys could ever be read.
        """
        now = self._monotonic()
        stale = self._fetched_at is None or now - self._fetched_at >= self._max_age
        if (stale or self._find(kid) is None) and (
            self._attempted_at is None or now - self._attempted_at >= self._min_refresh
        ):
            await self._refresh(seen=self._attempted_at)
        if self._fetched_at is None:
            raise IssuerUnavailable("has not published its keys yet")
        return self._find(kid)

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is None:
            return next(iter(self._by_kid.values())) if len(self._by_kid) == 1 else None
        return self._by_kid.get(kid)

    async def _refresh(self, *, seen: float | None) -> None:
        async with self._lock:
            if self._attempted_at != seen:
                return  # another task asked the issuer while this one waited
            self._attempted_at = self._monotonic()
            try:
                jwks_uri = self._jwks_uri or await self._discover()
                document = await self._fetch(jwks_uri)
                self._fetch_count += 1
                entries = document.get("keys") if isinstance(document, dict) else None
                if not isinstance(entries, list):
                    raise IssuerUnavailable("published a JWKS without a keys list")
            except IssuerUnavailable as e:
                if self._fetched_at is None:
                    raise
                logger.warning("could not re-read an issuer's keys (%s); the last ones stay in use", e)
                return
            self._by_kid = {
                str(jwk.get("kid", f"#{index}")): jwk
                for index, jwk in enumerate(entries)
                if _signing_key(jwk)
            }
            self._jwks_uri = jwks_uri
            self._fetched_at = self._monotonic()

    async def _discover(self) -> str:
        for url in metadata_urls(self.issuer):
            try:
                metadata = await self._fetch(url)
            except IssuerUnavailable:
                continue
            if not isinstance(metadata, dict) or metadata.get("issuer") != self.issuer:
                # RFC 8414 §3.3: metadata naming another issuer must not be used.
                continue
            jwks_uri = metadata.get("jwks_uri")
            if isinstance(jwks_uri, str) and _same_trust(jwks_uri, self.issuer):
                return jwks_uri
        raise IssuerUnavailable("published no usable metadata with a jwks_uri")


def _same_trust(url: str, issuer: str) -> bool:
    # The JWKS must travel over https, like the issuer; plain http only on loopback (tests, labs).
    try:
        scheme = split_url(url).scheme
    except BadUrl:
        return False
    return scheme == "https" or (scheme == "http" and split_url(issuer).scheme == "http")


def _signing_key(jwk: object) -> bool:
    if not isinstance(jwk, dict) or jwk.get("kty") not in _ALGORITHMS_BY_KTY:
        return False
    if jwk.get("use", "sig") != "sig":
        return False
    ops = jwk.get("key_ops")
    return ops is None or (isinstance(ops, list) and "verify" in ops)


def allowed_algorithms(jwk: Mapping[str, Any]) -> frozenset[str]:
    """The algorithms this key may verify: its declared `alg` if that fits its type, else its type's set."""
    allowed = _ALGORITHMS_BY_KTY.get(str(jwk.get("kty")), frozenset())
    if jwk.get("kty") == "EC":
        allowed = allowed & {_EC_ALGORITHM_BY_CURVE.get(str(jwk.get("crv")), "")}
    declared = jwk.get("alg")
    if declared is not None:
        return allowed & {str(declared)}
    return allowed


def _scopes(claims: Mapping[str, Any]) -> list[str]:
    # RFC 9068 `scope` is a space-separated string; some providers send `scp` as a list.
    raw = claims.get("scope", claims.get("scp"))
    if isinstance(raw, str):
        return raw.split()
    if isinstance(raw, list):
        return [str(s) for s in raw]
    return []


class JwtTokenVerifier:
    """Verifies JWT access tokens for one resource (the SDK's `TokenVerifier` protocol, plus reasons).

    `check` raises TokenRejected with the RFC 6750 error; `verify_token` is the SDK's form
    (None for any refusal).
    """

    def __init__(
        self,
        issuers: Sequence[IssuerKeys],
        *,
        resource: str,
        required_scopes: Sequence[str],
        leeway_seconds: float = DEFAULT_LEEWAY_SECONDS,
    ) -> None:
        if not issuers:
            raise ValueError("at least one trusted issuer is needed")
        self._issuers = {keys.issuer: keys for keys in issuers}
        self.resource = resource
        self.required_scopes = tuple(required_scopes)
        self._leeway = leeway_seconds

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await self.check(token)
        except (TokenRejected, IssuerUnavailable):
            return None

    async def check(self, token: str) -> AccessToken:
        """The verified token, or TokenRejected. IssuerUnavailable when the keys cannot be read now."""
        keys, jwk, alg = await self._key_for(token)
        claims = self._verified_claims(token, keys, jwk, alg)
        scopes = _scopes(claims)
        if any(s not in scopes for s in self.required_scopes):
            raise TokenRejected(
                "insufficient_scope", "The access token lacks the scope this server requires."
            )
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise TokenRejected("invalid_token", "The access token names no subject.")
        client_id = claims.get("client_id", claims.get("azp", ""))
        expires = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=str(client_id),
            scopes=scopes,
            expires_at=int(expires) if isinstance(expires, int | float) else None,
            resource=self.resource,
            subject=subject,
            claims={"iss": keys.issuer},
        )

    async def _key_for(self, token: str) -> tuple[IssuerKeys, dict[str, Any], str]:
        """The trusted issuer, its published key and the algorithm the token names, read unverified
        from the token only to choose them. Raises TokenRejected."""
        if len(token) > _MAX_TOKEN_CHARS:
            raise TokenRejected("invalid_token", "The access token is malformed.")
        try:
            unverified = jwt.decode_complete(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise TokenRejected("invalid_token", "The access token is malformed.") from None
        header, payload = unverified["header"], unverified["payload"]
        issuer = payload.get("iss")
        keys = self._issuers.get(issuer) if isinstance(issuer, str) else None
        if keys is None:
            raise TokenRejected("invalid_token", "The access token's issuer is not trusted here.")
        alg = header.get("alg")
        kid = header.get("kid")
        jwk = await keys.key(kid if isinstance(kid, str) else None)
        if jwk is None:
            raise TokenRejected(
                "invalid_token", "The access token is signed with a key the issuer does not publish."
            )
        if not isinstance(alg, str) or alg not in allowed_algorithms(jwk):
            raise TokenRejected("invalid_token", "The access token's signature algorithm is not allowed.")
        return keys, jwk, alg

    def _verified_claims(self, token: str, keys: IssuerKeys, jwk: dict[str, Any], alg: str) -> dict[str, Any]:
        """The claims once signature, audience, issuer and lifetime check out. Raises TokenRejected."""
        try:
            return jwt.decode(
                token,
                key=jwt.PyJWK(jwk, algorithm=alg),
                algorithms=[alg],
                audience=self.resource,
                issuer=keys.issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "sub", "aud"], "verify_iat": False},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected("invalid_token", "The access token has expired.") from None
        except jwt.ImmatureSignatureError:
            raise TokenRejected("invalid_token", "The access token is not valid yet.") from None
        except jwt.InvalidAudienceError:
            raise TokenRejected(
                "invalid_token", "The access token was not issued for this resource."
            ) from None
        except jwt.MissingRequiredClaimError as e:
            raise TokenRejected("invalid_token", f"The access token has no `{e.claim}` claim.") from None
        except jwt.PyJWTError:
            raise TokenRejected("invalid_token", "The access token's signature does not verify.") from None


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
    of issuer and subject) and without its Authorization header; `credential_for`, when
    given, supplies the person's linked Woodpecker token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: JwtTokenVerifier,
        metadata: ProtectedResourceMetadata,
        principal_key: bytes,
        credential_for: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self.app = app
        self._verifier = verifier
        self._principal_key = principal_key
        self._credential_for = credential_for
        self._document = metadata.model_dump(mode="json", exclude_none=True)
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
        inner.pop(CREDENTIAL_KEY, None)
        if self._credential_for is not None:
            try:
                credential = await self._credential_for(principal)
            except Exception as e:
                # Not knowing the person's token is not "no token": no link is offered, nothing runs.
                logger.warning("the linked-token store could not be read (%s)", type(e).__name__)
                await _try_again_later("token_store_unavailable", "Try again shortly.")(scope, receive, send)
                return
            if credential is not None:
                inner[CREDENTIAL_KEY] = credential
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
