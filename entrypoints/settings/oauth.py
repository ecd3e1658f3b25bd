"""OAuth mode (docs/oauth.md): WOODPECKER_MCP_RESOURCE_URL, _OAUTH_ISSUERS, _OAUTH_SCOPE and _LINK_KEYS."""

import re
from typing import Annotated

from pydantic import AnyHttpUrl, BeforeValidator, ValidationInfo
from pydantic import ValidationError as PydanticValidationError

from domain.guard.approvers import Approvers, parse_approvers
from domain.parsing.keys import parse_keys
from domain.parsing.urls import public_url
from entrypoints.settings.values import comma_list

LINK_KEY_BYTES = 32
# RFC 6749 §3.3 scope-token.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_RESOURCE_EXAMPLE = "e.g. https://mcp.example.org/mcp"
_ISSUER_EXAMPLE = "e.g. https://sso.example.org/realms/team"


def _oauth(info: ValidationInfo) -> bool:
    return info.data.get("auth") == "oauth"


def _resource_url(raw: object, info: ValidationInfo) -> object:
    name = "WOODPECKER_MCP_RESOURCE_URL"
    if raw is None:
        if _oauth(info):
            raise ValueError(
                f"{name} is not set; with WOODPECKER_MCP_AUTH=oauth set it to the address clients use, "
                f"{_RESOURCE_EXAMPLE}"
            )
        return None
    url = public_url(name, str(raw), _RESOURCE_EXAMPLE)
    # Tokens must carry exactly this audience, and the linking page compares this URL's origin
    # with the browser's Origin: only the canonical form (RFC 3986 §6.2.2, as a URL parser writes
    # it; the bare origin may go without its "/") is one every client and browser spells alike.
    try:
        canonical = str(AnyHttpUrl(url))
    except PydanticValidationError:
        canonical = ""
    if canonical not in (url, url + "/"):
        raise ValueError(
            f"{name} must be in canonical form, as clients and browsers write it: lower-case scheme "
            f"and host, no default port (:443, :80); {_RESOURCE_EXAMPLE}"
        )
    return url


def _issuers(raw: object, info: ValidationInfo) -> object:
    name = "WOODPECKER_MCP_OAUTH_ISSUERS"
    entries = comma_list(raw) if isinstance(raw, str) else tuple(raw) if isinstance(raw, tuple) else ()
    if not entries and _oauth(info):
        raise ValueError(
            f"{name} is not set; with WOODPECKER_MCP_AUTH=oauth list the issuer URLs of the authorization "
            f"servers you trust, {_ISSUER_EXAMPLE}"
        )
    return tuple(
        public_url(f"{name} entry {n}", str(e), _ISSUER_EXAMPLE) for n, e in enumerate(entries, start=1)
    )


def _link_keys(raw: object) -> object:
    return parse_keys(raw, "WOODPECKER_MCP_LINK_KEYS", exact=LINK_KEY_BYTES) if isinstance(raw, str) else raw


def _scope(raw: object) -> object:
    if not isinstance(raw, str) or not _SCOPE.fullmatch(raw):
        raise ValueError(
            "WOODPECKER_MCP_OAUTH_SCOPE must be one OAuth scope name (printable ASCII, no spaces, quotes "
            "or backslashes), e.g. woodpecker"
        )
    return raw


def _approvers(raw: object) -> object:
    if isinstance(raw, Approvers):
        return raw
    try:
        return parse_approvers(comma_list(raw) if isinstance(raw, str) else ())
    except ValueError as e:
        raise ValueError(f"WOODPECKER_MCP_APPROVERS {e}") from None


def _client_id(raw: object, info: ValidationInfo) -> object:
    if raw is None:
        return None
    if not _oauth(info):
        raise ValueError(
            "WOODPECKER_MCP_APPROVAL_CLIENT_ID is set outside OAuth mode; the approval page over HTTP needs "
            "the sign-in of WOODPECKER_MCP_AUTH=oauth"
        )
    text = str(raw).strip()
    if not text or not _SCOPE.fullmatch(text):
        raise ValueError(
            "WOODPECKER_MCP_APPROVAL_CLIENT_ID must be one client id (printable ASCII, no spaces)"
        )
    return text


def _client_secret(raw: object, info: ValidationInfo) -> object:
    has_id = info.data.get("approval_client_id") is not None
    if raw is None:
        if has_id:
            raise ValueError(
                "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET is not set; WOODPECKER_MCP_APPROVAL_CLIENT_ID names a "
                "confidential client, give its secret too"
            )
        return None
    if not has_id:
        raise ValueError(
            "WOODPECKER_MCP_APPROVAL_CLIENT_SECRET is set without WOODPECKER_MCP_APPROVAL_CLIENT_ID; set both"
        )
    return str(raw)


ApproversList = Annotated[Approvers, BeforeValidator(_approvers)]
ClientId = Annotated[str | None, BeforeValidator(_client_id)]
ClientSecret = Annotated[str | None, BeforeValidator(_client_secret)]
ResourceUrl = Annotated[str | None, BeforeValidator(_resource_url)]
Issuers = Annotated[tuple[str, ...], BeforeValidator(_issuers)]
Scope = Annotated[str, BeforeValidator(_scope)]
LinkKeys = Annotated[tuple[bytes, ...], BeforeValidator(_link_keys)]
