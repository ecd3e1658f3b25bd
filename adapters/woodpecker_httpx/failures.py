"""What each way a request to Woodpecker can fail becomes: one port error carrying the facts (the domain words them)."""

import errno
import socket
import ssl
from collections.abc import Iterator
from typing import NoReturn

import httpx

from domain.woodpecker.faults import (
    Answered,
    Cause,
    NoServer,
    Sent,
    TooLarge,
    Unreachable,
    Unreadable,
    WebUi,
)
from ports.woodpecker import WoodpeckerError, failed


class Retry(Exception):
    """Internal: this attempt failed in a way a GET may retry; `error` is what to raise if not."""

    def __init__(self, error: WoodpeckerError, wait: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.wait = wait


def error_for(status: int, detail: str | None, path: str, sent: Sent) -> WoodpeckerError:
    """The port error for a non-2xx answer; `sent` is which token went: none, our own, or the client's."""
    return failed(
        Answered(
            status,
            detail,
            repository=path.startswith("/api/repos/"),
            sent=sent,
            root=not path.startswith("/api/"),
        )
    )


def raise_transport(
    exc: httpx.HTTPError, timeout: float, connect_timeout: float, *, before_response: bool, url: str = ""
) -> NoReturn:
    """Translate an httpx failure into a port error; `Retry` when a GET may try again. `url` is the
    server root as a person may read it (`shown_root`), named in the words of a failure to reach it."""
    if isinstance(exc, httpx.ConnectTimeout):
        raise Retry(failed(Unreachable("connect_timeout", connect_timeout, url=url)))
    if isinstance(exc, httpx.TimeoutException):
        raise failed(Unreachable("read_timeout", timeout, url=url)) from None
    if isinstance(exc, httpx.ConnectError):
        tls = _tls_failure(exc)
        if tls is not None:
            raise failed(_tls_fact(tls, url)) from None
        raise Retry(failed(Unreachable("connect", url=url, cause=_cause(exc))))
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        raise failed(NoServer("unusable")) from None
    if isinstance(exc, httpx.DecodingError):
        raise failed(Unreadable("compression")) from None
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        if before_response:
            raise Retry(failed(Unreachable("closed", url=url)))
        raise failed(Unreadable("cut_off")) from None
    raise failed(Unreachable("other", url=url)) from None


def shown_root(root: httpx.URL) -> str:
    """Where requests go, as scheme://host:port/path: the port always (the one tried, even when it is
    the scheme's own), never a user, a password, a query or a fragment."""
    host = f"[{root.host}]" if ":" in root.host else root.host
    port = root.port if root.port is not None else (443 if root.scheme == "https" else 80)
    path = root.raw_path.split(b"?", 1)[0].decode("ascii", "replace").rstrip("/")
    return f"{root.scheme}://{host}:{port}{path}"


def too_large(ceiling: int) -> NoReturn:
    raise failed(TooLarge(ceiling))


def serves_web_ui() -> NoReturn:
    raise failed(WebUi())


# What OpenSSL says when the peer's first bytes are no TLS record, as when an HTTP server answers
# a ClientHello with a plain `HTTP/1.1 400` (OpenSSL 1.1: WRONG_VERSION_NUMBER; 3.x: record layer failure).
_PLAIN_HTTP_REASONS = frozenset(
    {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST", "PACKET_LENGTH_TOO_LONG"}
)
_REASON_CHARS = 160  # OpenSSL's words are short; anything longer is cut


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it was raised from or during, nearest first (httpx wraps httpcore wraps the OS's)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def _tls_failure(exc: BaseException) -> ssl.SSLError | None:
    return next((e for e in _chain(exc) if isinstance(e, ssl.SSLError)), None)


def _tls_fact(error: ssl.SSLError, url: str) -> Unreachable:
    """A certificate refused (the port speaks TLS: CA advice helps), a plain-HTTP answer, or another
    handshake failure (a protocol, an alert, a hang-up), with OpenSSL's words for it."""
    if isinstance(error, ssl.SSLCertVerificationError):
        reason = error.verify_message or error.reason
        return Unreachable("certificate", url=url, reason=_short(reason))
    text = str(error).lower()
    if (
        getattr(error, "reason", None) in _PLAIN_HTTP_REASONS
        or "wrong version number" in text
        or "record layer failure" in text
    ):
        return Unreachable("plain_http", url=url)
    return Unreachable("tls", url=url, reason=_short(getattr(error, "reason", None)))


def _cause(exc: BaseException) -> Cause | None:
    """Why the connection could not be opened, as the system said, if it did."""
    for seen in _chain(exc):
        if isinstance(seen, socket.gaierror):
            return "unresolved"
        if isinstance(seen, ConnectionRefusedError):
            return "refused"
        if isinstance(seen, ConnectionResetError):
            return "reset"
        if isinstance(seen, OSError) and seen.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
            return "no_route"
    return None


def _short(reason: object) -> str | None:
    if not isinstance(reason, str) or not reason.strip():
        return None
    text = " ".join(reason.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"
