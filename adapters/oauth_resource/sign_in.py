"""Signing an approver in at the trusted issuer: OpenID Connect authorization code with PKCE, this
server a confidential client (ADR 0084). Authlib builds the authorization request (S256 challenge,
state, nonce) and redeems the code with the client's secret; the ID token is checked here with
PyJWT against the issuer's published keys (the resource server's `IssuerKeys`, ADR 0014): issuer,
audience (our client id), lifetime, nonce, an allowed algorithm.
"""

import re
import secrets
from dataclasses import dataclass
from typing import Any

import jwt
from authlib.integrations.httpx_client import AsyncOAuth2Client

from adapters.oauth_resource.keys import (
    Fetch,
    IssuerKeys,
    IssuerUnavailable,
    allowed_algorithms,
    fetch_json,
    issuer_metadata,
)
from domain.guard.approvers import SignedIn

SCOPES = "openid email profile"
_LEEWAY_SECONDS = 30
_TIMEOUT_SECONDS = 10.0
_MAX_NAME_CHARS = 120


class SignInFailed(Exception):
    """The sign-in did not name a person: a refused code, a bad ID token, a provider that is down.
    Its text is safe to show (it holds no token, code or secret)."""


@dataclass(frozen=True, slots=True)
class Started:
    """One sign-in under way: where to send the browser, and what its return must match."""

    url: str
    state: str
    code_verifier: str
    nonce: str


class OidcSignIn:
    """The approver's sign-in at `issuer` for the client `client_id` returning to `redirect_uri`."""

    def __init__(
        self,
        issuer: str,
        *,
        client_id: str,
        client_secret: str,
        redirect_uri: str,
        keys: IssuerKeys | None = None,
        fetch: Fetch = fetch_json,
    ) -> None:
        self.issuer = issuer
        self._client_id = client_id
        self._client_secret = client_secret
        self.redirect_uri = redirect_uri
        self._keys = keys or IssuerKeys(issuer, fetch=fetch)
        self._fetch = fetch
        self._endpoints: tuple[str, str] | None = None

    async def _discover(self) -> tuple[str, str]:
        if self._endpoints is not None:
            return self._endpoints
        async for metadata in issuer_metadata(self.issuer, self._fetch):
            authorize, token = metadata.get("authorization_endpoint"), metadata.get("token_endpoint")
            if isinstance(authorize, str) and isinstance(token, str):
                self._endpoints = (authorize, token)
                return self._endpoints
        raise SignInFailed("The identity provider publishes no authorization and token endpoints.")

    def _client(self) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self._client_id,
            client_secret=self._client_secret,
            token_endpoint_auth_method="client_secret_basic",  # noqa: S106 (a method name, no secret)
            scope=SCOPES,
            redirect_uri=self.redirect_uri,
            code_challenge_method="S256",
            timeout=_TIMEOUT_SECONDS,
            follow_redirects=False,
        )

    async def start(self) -> Started:
        """A new authorization request (fresh state, PKCE verifier and nonce). Raises SignInFailed."""
        authorize, _token = await self._discover()
        verifier, nonce = secrets.token_urlsafe(48), secrets.token_urlsafe(24)
        async with self._client() as client:
            url, state = client.create_authorization_url(
                authorize, state=secrets.token_urlsafe(24), code_verifier=verifier, nonce=nonce
            )
        return Started(url=url, state=state, code_verifier=verifier, nonce=nonce)

    async def finish(self, code: str, started: Started) -> SignedIn:
        """Redeem `code` for the sign-in `started`, and read the person off the verified ID token."""
        _authorize, token_endpoint = await self._discover()
        try:
            async with self._client() as client:
                token = await client.fetch_token(
                    token_endpoint,
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=started.code_verifier,
                    redirect_uri=self.redirect_uri,
                )
        except Exception as e:
            # Authlib raises its own OAuthError for an error answer; none of them says more than the name.
            raise SignInFailed(
                f"The identity provider did not redeem the sign-in ({type(e).__name__})."
            ) from None
        id_token = token.get("id_token") if isinstance(token, dict) else None
        if not isinstance(id_token, str):
            raise SignInFailed("The identity provider answered without an ID token.")
        return _person(await self.id_token_claims(id_token, started.nonce))

    async def id_token_claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        """The claims of a verified ID token answering the sign-in of `nonce`. Raises SignInFailed."""
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise SignInFailed("The ID token is malformed.") from None
        kid, alg = header.get("kid"), header.get("alg")
        try:
            jwk = await self._keys.key(kid if isinstance(kid, str) else None)
        except IssuerUnavailable:
            raise SignInFailed("The identity provider's keys could not be read.") from None
        if jwk is None or not isinstance(alg, str) or alg not in allowed_algorithms(jwk):
            raise SignInFailed("The ID token is not signed with a key and algorithm the provider publishes.")
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=jwt.PyJWK(jwk, algorithm=alg),
                algorithms=[alg],
                audience=self._client_id,
                issuer=self.issuer,
                leeway=_LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "iss", "sub", "aud"]},
            )
        except jwt.PyJWTError as e:
            raise SignInFailed(f"The ID token does not verify ({type(e).__name__}).") from None
        if not secrets.compare_digest(str(claims.get("nonce", "")), nonce):
            raise SignInFailed("The ID token is not the answer to this sign-in (nonce).")
        return claims


_ADDRESS = re.compile(r"[!-?A-~]{1,64}@[A-Za-z0-9.-]{1,189}")


def _line(value: object) -> str:
    if not isinstance(value, str):
        return ""
    text = "".join(c if c >= " " else "\ufffd" for c in " ".join(value.split()))
    return text if len(text) <= _MAX_NAME_CHARS else text[: _MAX_NAME_CHARS - 1] + "…"


def _address(value: object) -> str | None:
    """A verified e-mail as the provider sent it, when it is a plain ASCII address: an `email:` approver
    matches it exactly (case aside). Anything else (a space, a Kelvin sign that lowercases to `k`, a
    full-width character) matches no approver, rather than one it only looks like (found by a review)."""
    if not isinstance(value, str) or not _ADDRESS.fullmatch(value):
        return None
    return value


def _person(claims: dict[str, Any]) -> SignedIn:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise SignInFailed("The ID token names no subject.")
    email = claims.get("email") if claims.get("email_verified") is True else None
    groups = claims.get("groups")
    return SignedIn(
        subject=subject,
        email=_address(email),
        name=_line(claims.get("preferred_username")) or _line(claims.get("name")),
        groups=frozenset(str(g) for g in groups) if isinstance(groups, list) else frozenset(),
    )
