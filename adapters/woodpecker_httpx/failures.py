"""What each way a request to Woodpecker can fail becomes: one port error, with the message a user sees."""

import ssl
from typing import Literal, NoReturn

import httpx

from ports.woodpecker import (
    BadResponse,
    Conflict,
    Forbidden,
    NotConfigured,
    NotFound,
    Rejected,
    ResponseTooLarge,
    ServerError,
    ServesWebUi,
    Unauthorized,
    Unavailable,
    WoodpeckerError,
)

MiB = 1024 * 1024
GiB = 1024 * MiB

SETUP_HINT = (
    "set WOODPECKER_URL to the server root (for example https://ci.example.org) and "
    "WOODPECKER_TOKEN to a personal access token from your Woodpecker user settings, "
    "then restart the MCP server"
)
CREDENTIAL_HINT = (
    "check WOODPECKER_TOKEN (a personal access token from your Woodpecker user settings) "
    "and call get_server_info"
)

# Which token a request carried: none, this server's own (WOODPECKER_TOKEN), or the MCP client's.
Sent = Literal["none", "own", "client"]


class Retry(Exception):
    """Internal: this attempt failed in a way a GET may retry; `error` is what to raise if not."""

    def __init__(self, error: WoodpeckerError, wait: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait = wait


def error_for(status: int, detail: str | None, path: str, sent: Sent) -> WoodpeckerError:
    """The port error for a non-2xx answer; `sent` is which token went: none, our own, or the client's."""
    said = f": {detail}" if detail else ""
    if status == 401:
        if sent == "none":
            return Unauthorized(
                "Woodpecker needs a token for this (HTTP 401): set WOODPECKER_TOKEN to a personal access "
                "token from your Woodpecker user settings and call get_server_info",
                detail=detail,
            )
        if sent == "client":
            # Per-client mode: the token is the bearer this MCP client presented, not WOODPECKER_TOKEN.
            return Unauthorized(
                "Woodpecker did not accept the token this client presented (HTTP 401): configure the "
                "client with a valid Woodpecker personal access token as its bearer, and call get_server_info",
                detail=detail,
            )
        return Unauthorized(
            f"Woodpecker did not accept the token (HTTP 401): {CREDENTIAL_HINT}", detail=detail
        )
    if status == 403:
        return Forbidden(
            f"Woodpecker refused this (HTTP 403){said}; it needs an instance admin or a repository admin; "
            "call get_current_user to see this account's rights",
            detail=detail,
        )
    if status == 404:
        if path.startswith("/api/repos/"):
            hint = (
                "for a repository it may exist in the forge but not be activated in Woodpecker "
                "(list_repositories with include_inactive=true), or this account cannot see it"
            )
        else:
            hint = "check the id or name (list the objects first to find it)"
        return NotFound(f"Not found (HTTP 404){said} — {hint}", detail=detail)
    if status == 409:
        return Conflict(
            f"Woodpecker reports a conflict (HTTP 409){said or ': the object exists already or is in use'}; "
            "read the current state and try again",
            detail=detail,
        )
    if status in (400, 422):
        return Rejected(
            f"Woodpecker rejected the request (HTTP {status}){said or ' without giving a reason'}; "
            "correct the arguments and try again",
            status=status,
            detail=detail,
        )
    if status == 429:
        return Unavailable(
            "Woodpecker (or a proxy in front of it) is limiting requests (HTTP 429); wait a moment and "
            "try again",
            status=429,
            detail=detail,
        )
    if status >= 500:
        return ServerError(
            f"Woodpecker failed with an internal error (HTTP {status}){said}; this is often a forge "
            "error or an unknown branch: check the arguments and try again later (Woodpecker's server "
            "log has the cause)",
            status=status,
            detail=detail,
        )
    return WoodpeckerError(f"Woodpecker answered HTTP {status}{said}", status=status, detail=detail)


def raise_transport(
    exc: httpx.HTTPError, timeout: float, connect_timeout: float, *, before_response: bool
) -> NoReturn:
    """Translate an httpx failure into a port error; `Retry` when a GET may try again."""
    if isinstance(exc, httpx.ConnectTimeout):
        raise Retry(
            Unavailable(
                f"Could not connect to Woodpecker within {connect_timeout:g} s: check WOODPECKER_URL and that the "
                "server is running and reachable"
            )
        )
    if isinstance(exc, httpx.TimeoutException):
        raise Unavailable(
            f"Woodpecker did not answer within {timeout:g} s; the server may be overloaded: try again "
            "later or narrow the request"
        ) from None
    if isinstance(exc, httpx.ConnectError):
        if _is_tls_failure(exc):
            raise Unavailable(
                "The TLS handshake with Woodpecker failed (is the certificate trusted?): point "
                "WOODPECKER_CA_FILE at the PEM of the CA that signed it, or for a self-signed "
                "certificate set WOODPECKER_INSECURE_TLS=true"
            ) from None
        raise Retry(
            Unavailable(
                "Could not connect to Woodpecker: check WOODPECKER_URL and that the server is running "
                "and reachable"
            )
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        raise NotConfigured(f"WOODPECKER_URL cannot be used: {SETUP_HINT}.") from None
    if isinstance(exc, httpx.DecodingError):
        raise BadResponse(
            "Woodpecker's answer could not be decoded (bad compression); try again, and if it "
            "persists check the proxy in front of Woodpecker"
        ) from None
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        if before_response:
            raise Retry(
                Unavailable(
                    "Woodpecker closed the connection without answering; try again, and if it persists "
                    "check the server and any proxy in front of it"
                )
            )
        raise BadResponse("Woodpecker's answer was cut off before it was complete; try again") from None
    raise Unavailable(
        "Talking to Woodpecker failed; check WOODPECKER_URL and the network, then try again"
    ) from None


def too_large(ceiling: int) -> NoReturn:
    raise ResponseTooLarge(
        f"Woodpecker's answer is larger than the {_size(ceiling)} this server accepts, so none of it "
        "was used; narrow the request (a smaller page, a filter, or fewer log lines)"
    )


def _size(n: int) -> str:
    if n >= GiB and n % GiB == 0:
        return f"{n // GiB} GiB"
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n} bytes"


def serves_web_ui() -> NoReturn:
    raise ServesWebUi(
        "this URL serves the web UI, not the API: set WOODPECKER_URL to the server root, "
        "without /api or a web path"
    )


def _is_tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
