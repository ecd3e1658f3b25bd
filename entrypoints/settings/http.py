"""The Streamable HTTP transport: WOODPECKER_MCP_HOST, _PORT, _AUTH, _BEARER, _ALLOWED_HOSTS, _ALLOWED_ORIGINS,
_MAX_BODY_BYTES, _HEADER_TIMEOUT_SECONDS and _MAX_CONNECTIONS."""

import resource
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, ValidationInfo

from domain.parsing.tokens import token_shaped
from entrypoints.settings.variables import LONGEST_HEADER_TIMEOUT_SECONDS
from ports.woodpecker import Credential

AuthMode = Literal["shared", "per-client", "oauth"]
MIN_BEARER_CHARS = 32
_GENERATE = "generate one with: openssl rand -base64 32"


def _host(raw: object) -> object:
    if not isinstance(raw, str) or not raw or any(c.isspace() for c in raw):
        raise ValueError("WOODPECKER_MCP_HOST (or --host) is not a host name or address; e.g. 127.0.0.1")
    return raw


def _whole_number(raw: object, low: int, high: int | None = None) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and raw.isdigit():
        raw = int(raw)
    if isinstance(raw, int) and low <= raw and (high is None or raw <= high):
        return raw
    return None


def _port(raw: object) -> int:
    port = _whole_number(raw, 0, 65535)
    if port is None:
        raise ValueError(
            "WOODPECKER_MCP_PORT (or --port) must be a number between 0 and 65535 (0 picks a free port)"
        )
    return port


def _max_body(raw: object) -> int:
    size = _whole_number(raw, 1024)
    if size is None:
        raise ValueError("WOODPECKER_MCP_MAX_BODY_BYTES must be a whole number of bytes, at least 1024")
    return size


def _header_timeout(raw: object) -> int:
    seconds = _whole_number(raw, 1, LONGEST_HEADER_TIMEOUT_SECONDS)
    if seconds is None:
        raise ValueError(
            "WOODPECKER_MCP_HEADER_TIMEOUT_SECONDS must be a whole number of seconds from 1 to "
            f"{LONGEST_HEADER_TIMEOUT_SECONDS}; e.g. 30"
        )
    return seconds


# Descriptors the process keeps for itself beyond its clients' connections: Woodpecker's
# connection pools, Redis, the audit file, the listening socket, the interpreter's own.
RESERVED_DESCRIPTORS = 64
AUTO_CONNECTIONS_CEILING = 4096


def open_file_limit() -> int:
    """The process's soft limit on open files (RLIMIT_NOFILE), or a large number where it is unlimited."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def auto_connections(open_files: int) -> int:
    """The default cap: a quarter of the descriptors (at least RESERVED_DESCRIPTORS) left to the
    process, the rest to clients, and no more than AUTO_CONNECTIONS_CEILING."""
    reserve = max(RESERVED_DESCRIPTORS, open_files // 4)
    return max(1, min(open_files - reserve, AUTO_CONNECTIONS_CEILING))


def _max_connections(raw: object) -> int:
    open_files = open_file_limit()
    if isinstance(raw, str) and raw.strip().lower() in ("", "auto"):
        return auto_connections(open_files)
    cap = _whole_number(raw.strip() if isinstance(raw, str) else raw, 1)
    if cap is None:
        raise ValueError("WOODPECKER_MCP_MAX_CONNECTIONS must be `auto` or a whole number, at least 1")
    room = open_files - RESERVED_DESCRIPTORS
    if cap > room:
        raise ValueError(
            f"WOODPECKER_MCP_MAX_CONNECTIONS is above what the open-file limit ({open_files}) leaves for "
            f"clients ({room}); lower it, or raise the limit (ulimit -n) before starting the server"
        )
    return cap


def _auth(raw: object) -> object:
    value = str(raw).lower()
    if value not in ("shared", "per-client", "oauth"):
        raise ValueError("WOODPECKER_MCP_AUTH must be `shared`, `per-client` or `oauth`")
    return value


def check_bearer(bearer: str | None, server_token: Credential | None) -> None:
    """Shared mode: the secret every client presents. Raises ValueError naming the fix."""
    if bearer is None:
        raise ValueError(
            "WOODPECKER_MCP_BEARER is not set; HTTP clients must present a shared secret: "
            f"{_GENERATE} (or set WOODPECKER_MCP_AUTH=per-client)"
        )
    if len(bearer) < MIN_BEARER_CHARS or not token_shaped(bearer):
        raise ValueError(
            f"WOODPECKER_MCP_BEARER must be at least {MIN_BEARER_CHARS} printable ASCII characters; {_GENERATE}"
        )
    if server_token is not None and bearer == server_token.reveal():
        raise ValueError(
            "WOODPECKER_MCP_BEARER must not be the Woodpecker token; clients would hold the server's "
            f"credential: {_GENERATE}"
        )


def _bearer_fits_the_mode(bearer: str | None, info: ValidationInfo) -> str | None:
    # A field check (not a model check) so that it is reported beside any other refused
    # variable; `auth` is validated first and is absent from info.data when it was refused.
    if info.data.get("auth") == "shared":
        check_bearer(bearer, (info.context or {}).get("server_token"))
    return bearer


Host = Annotated[str, BeforeValidator(_host)]
Port = Annotated[int, BeforeValidator(_port)]
MaxBody = Annotated[int, BeforeValidator(_max_body)]
HeaderTimeout = Annotated[int, BeforeValidator(_header_timeout)]
MaxConnections = Annotated[int, BeforeValidator(_max_connections)]
Auth = Annotated[AuthMode, BeforeValidator(_auth)]
Bearer = Annotated[str | None, AfterValidator(_bearer_fits_the_mode)]
