"""The Woodpecker connection: WOODPECKER_URL, WOODPECKER_TOKEN, WOODPECKER_INSECURE_TLS, WOODPECKER_CA_FILE
and WOODPECKER_MCP_CHECK_AT_START."""

import ssl
from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from domain.parsing.tokens import token_shaped
from domain.parsing.urls import woodpecker_root
from entrypoints.settings.values import exact_flag, warnings_of
from entrypoints.settings.variables import line
from ports.woodpecker import Credential


def _url(raw: object, info: ValidationInfo) -> str | None:
    if raw is None:
        return None
    root = woodpecker_root(str(raw))
    if root.plain_http:
        warnings_of(info).append(
            line(
                "WOODPECKER_URL uses plain http to a host that is not loopback; the token crosses the network "
                "unencrypted (use https)"
            )
        )
    return root.url


def parse_token(raw: str) -> Credential:
    """WOODPECKER_TOKEN, trimmed and not empty. Raises ValueError (never quoting it)."""
    if not token_shaped(raw):
        raise ValueError(
            "WOODPECKER_TOKEN contains spaces or non-ASCII characters; paste the personal access token "
            "from Woodpecker's user settings exactly"
        )
    return Credential(raw)


def _ca_file(raw: object) -> object:
    # Found now rather than at the first call: a CA file that does not load would otherwise look
    # like a certificate problem of the Woodpecker server.
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return None
    try:
        ssl.create_default_context(cafile=raw)
    except OSError as e:  # ssl.SSLError is an OSError too
        reason = e.strerror or "not a PEM file with a CA certificate"
        raise ValueError(
            f"WOODPECKER_CA_FILE cannot be loaded ({reason}); point it at a PEM file holding the "
            "certificate of the CA that signed the Woodpecker server's certificate"
        ) from None
    return raw


def check_one_way_to_trust(ca_file: str | None, insecure_tls: bool) -> None:
    if ca_file is not None and insecure_tls:
        raise ValueError(
            "WOODPECKER_CA_FILE and WOODPECKER_INSECURE_TLS=true contradict each other: the CA file "
            "keeps certificate checks on; unset WOODPECKER_INSECURE_TLS"
        )


def check_reachable_needs_url(check_at_start: bool, url: str | None) -> None:
    if check_at_start and url is None:
        raise ValueError(
            "WOODPECKER_MCP_CHECK_AT_START=true asks Woodpecker before serving, but WOODPECKER_URL is not "
            "set: set WOODPECKER_URL to the server root, or unset WOODPECKER_MCP_CHECK_AT_START"
        )


WoodpeckerUrl = Annotated[str | None, BeforeValidator(_url)]
CaFile = Annotated[str | None, BeforeValidator(_ca_file)]
InsecureTls = Annotated[bool, exact_flag("WOODPECKER_INSECURE_TLS")]
CheckAtStart = Annotated[bool, exact_flag("WOODPECKER_MCP_CHECK_AT_START")]
