"""A trusted issuer's signing keys: found through its metadata, fetched with limits, cached, and only the asymmetric ones."""

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx

from domain.parsing.urls import BadUrl, split_url

logger = logging.getLogger(__name__)

_MAX_DOCUMENT_BYTES = 256 * 1024
# The signature algorithms each key type may verify. HMAC ("oct") keys are never taken from a
# JWKS: a published key is public, so anything it "verifies" anyone could have signed.
_ALGORITHMS_BY_KTY: Mapping[str, frozenset[str]] = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}),
    "EC": frozenset({"ES256", "ES384", "ES512"}),
    "OKP": frozenset({"EdDSA"}),
}
_EC_ALGORITHM_BY_CURVE = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


class IssuerUnavailable(Exception):
    """The issuer's metadata or keys could not be read (network, status, shape). Never contains a token."""


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


async def issuer_metadata(issuer: str, fetch: "Fetch") -> AsyncIterator[Mapping[str, Any]]:
    """Each metadata document `issuer` publishes (at `metadata_urls`, in order) that names it: one
    naming another issuer must not be used (RFC 8414 §3.3); one that cannot be read is passed over."""
    for url in metadata_urls(issuer):
        try:
            metadata = await fetch(url)
        except IssuerUnavailable:
            continue
        if isinstance(metadata, dict) and metadata.get("issuer") == issuer:
            yield metadata


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
        async for metadata in issuer_metadata(self.issuer, self._fetch):
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
