"""What each way a request to Woodpecker can fail becomes: one port error carrying the facts (the domain words them)."""

import ssl
from typing import NoReturn

import httpx

from domain.woodpecker.faults import Answered, NoServer, Sent, TooLarge, Unreachable, Unreadable, WebUi
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
    exc: httpx.HTTPError, timeout: float, connect_timeout: float, *, before_response: bool
) -> NoReturn:
    """Translate an httpx failure into a port error; `Retry` when a GET may try again."""
    if isinstance(exc, httpx.ConnectTimeout):
        raise Retry(failed(Unreachable("connect_timeout", connect_timeout)))
    if isinstance(exc, httpx.TimeoutException):
        raise failed(Unreachable("read_timeout", timeout)) from None
    if isinstance(exc, httpx.ConnectError):
        if _is_tls_failure(exc):
            raise failed(Unreachable("plain_http" if _answered_in_plain_http(exc) else "tls")) from None
        raise Retry(failed(Unreachable("connect")))
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        raise failed(NoServer("unusable")) from None
    if isinstance(exc, httpx.DecodingError):
        raise failed(Unreadable("compression")) from None
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        if before_response:
            raise Retry(failed(Unreachable("closed")))
        raise failed(Unreadable("cut_off")) from None
    raise failed(Unreachable("other")) from None


def too_large(ceiling: int) -> NoReturn:
    raise failed(TooLarge(ceiling))


def serves_web_ui() -> NoReturn:
    raise failed(WebUi())


# What OpenSSL says when the peer's first bytes are no TLS record, as when an HTTP server answers
# a ClientHello with a plain `HTTP/1.1 400` (OpenSSL 1.1: WRONG_VERSION_NUMBER; 3.x: record layer failure).
_PLAIN_HTTP_REASONS = frozenset(
    {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST", "PACKET_LENGTH_TOO_LONG"}
)


def _answered_in_plain_http(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError) and (
            getattr(seen, "reason", None) in _PLAIN_HTTP_REASONS
            or "wrong version number" in str(seen).lower()
            or "record layer failure" in str(seen).lower()
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _is_tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
