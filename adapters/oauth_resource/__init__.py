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

`keys` (an issuer's keys), `verifier` (a token checked), `gate` (the ASGI gate and the metadata),
`sign_in` (an approver's OpenID Connect sign-in at the issuer) and `approval_page` (the approval page
over HTTP, answered only signed in; ADR 0084).
"""

from adapters.oauth_resource.approval_page import CALLBACK_PATH, ApprovalPageApp, SignedInApprovalPages
from adapters.oauth_resource.gate import (
    CREDENTIAL_KEY,
    PRINCIPAL_KEY,
    WELL_KNOWN,
    OAuthResourceGate,
    oauth_principal,
    resource_metadata,
    resource_metadata_url,
)
from adapters.oauth_resource.keys import (
    IssuerKeys,
    IssuerUnavailable,
    allowed_algorithms,
    fetch_json,
    metadata_urls,
)
from adapters.oauth_resource.sign_in import OidcSignIn, SignInFailed
from adapters.oauth_resource.verifier import DEFAULT_LEEWAY_SECONDS, JwtTokenVerifier, TokenRejected

__all__ = [
    "CALLBACK_PATH",
    "ApprovalPageApp",
    "SignedInApprovalPages",
    "OidcSignIn",
    "SignInFailed",
    "IssuerKeys",
    "IssuerUnavailable",
    "allowed_algorithms",
    "fetch_json",
    "metadata_urls",
    "DEFAULT_LEEWAY_SECONDS",
    "JwtTokenVerifier",
    "TokenRejected",
    "CREDENTIAL_KEY",
    "OAuthResourceGate",
    "PRINCIPAL_KEY",
    "WELL_KNOWN",
    "oauth_principal",
    "resource_metadata",
    "resource_metadata_url",
]
