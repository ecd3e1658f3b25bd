"""An access token checked: a trusted issuer, its published key, an allowed algorithm, then audience, lifetime, scope and subject."""

from collections.abc import Mapping, Sequence
from typing import Any

import jwt
from mcp.server.auth.provider import AccessToken

from adapters.oauth_resource.keys import IssuerKeys, IssuerUnavailable, allowed_algorithms

DEFAULT_LEEWAY_SECONDS = 30
_MAX_TOKEN_CHARS = 16 * 1024
# The claims a person reads as who they signed in as, the first present one wins; `sub` is the last resort.
NAME_CLAIMS = ("preferred_username", "email", "name")
_MAX_NAME_CHARS = 200


class TokenRejected(Exception):
    """An access token this server does not accept. `error` is an RFC 6750 code; `description` is safe to show."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def sign_in_name(claims: Mapping[str, Any]) -> str:
    """Who the token says signed in, in words a person reads (the linking page names it)."""
    for claim in (*NAME_CLAIMS, "sub"):
        value = claims.get(claim)
        if isinstance(value, str) and value.strip():
            # One line, no control characters: it is shown on a page (escaped there for HTML and bidi).
            name = "".join(c if c >= " " else "\ufffd" for c in " ".join(value.split()))
            return name if len(name) <= _MAX_NAME_CHARS else name[: _MAX_NAME_CHARS - 1] + "…"
    return ""


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
            claims={"iss": keys.issuer, "sign_in_name": sign_in_name(claims)},
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
