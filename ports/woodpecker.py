"""The Woodpecker API as the use cases see it, and the errors it can raise.

Adapters translate transport failures into these exceptions, built by `failed` from a fact
(`domain.woodpecker.faults`); no HTTP library type ever crosses this boundary, and no adapter
writes a sentence: the domain words every message, which tells the user what to do next and
never contains a credential.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from domain.logs import LogLine as LogLine
from domain.logs import LogMatch as LogMatch
from domain.woodpecker.faults import (
    Answered,
    Echoed,
    Fault,
    NoServer,
    NoSuchStep,
    NotAsPlanned,
    Redirected,
    TokenShape,
    TooLarge,
    Unexpected,
    Unreachable,
    Unreadable,
    Unsettled,
    WebUi,
)
from domain.woodpecker.requests import Method as Method
from domain.woodpecker.requests import Request as Request
from ports.credential import Credential as Credential
from ports.forge import ForgeError


@dataclass(frozen=True, slots=True)
class ApiResponse:
    status: int
    data: Any  # parsed JSON; None for an empty body (204)
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LogWindowRequest:
    """Which part of a step's log to keep: the first or last `limit` lines, of those numbered
    `from_line`..`to_line` (both included; None: no bound) when a range is given."""

    limit: int
    from_end: Literal["head", "tail"] = "tail"
    from_line: int | None = None
    to_line: int | None = None


@dataclass(frozen=True, slots=True)
class LogSearchRequest:
    """Search every line of a step's log for `pattern` (RE2 syntax); keep the first `max_matches`
    with `context` lines before and after each."""

    pattern: str
    ignore_case: bool = False
    context: int = 0
    max_matches: int = 20


@dataclass(frozen=True, slots=True)
class LogWindow:
    lines: tuple[LogLine, ...]
    total_lines: int  # every output line of the log, in the range or not


@dataclass(frozen=True, slots=True)
class LogSearch:
    matches: tuple[LogMatch, ...]  # the first ones, in log order
    total_matches: int  # lines that matched, shown or not
    total_lines: int


class InvalidPattern(ValueError):
    """A search pattern the regular-expression engine refuses. `str(e)` says why and what to write
    (worded by `bad_pattern` from the engine's reason)."""


class WoodpeckerGateway(Protocol):
    async def send(self, call: Request, credential: Credential | None) -> ApiResponse:
        """Make one request. 2xx answers return; anything else raises a WoodpeckerError.

        Only GETs are retried (connection errors, 429, 502, 503, 504); writes never are.
        """
        ...

    async def step_log(self, path: str, window: LogWindowRequest, credential: Credential | None) -> LogWindow:
        """Stream a step's log (one JSON array of base64 entries) keeping only `window`.

        Memory is bounded by the window, not by the log's size.
        """
        ...

    async def search_step_log(
        self, path: str, search: LogSearchRequest, credential: Credential | None
    ) -> LogSearch:
        """Stream a step's log once, searching every line; memory is bounded by the matches kept.

        Raises InvalidPattern before sending anything when the pattern cannot be compiled.
        """
        ...

    async def read_step_log(
        self, path: str, window: LogWindowRequest, search: LogSearchRequest, credential: Credential | None
    ) -> tuple[LogWindow, LogSearch]:
        """Both at once, in one pass over the log: a window and a search."""
        ...


class WoodpeckerError(ForgeError):
    """Base of every failure talking to Woodpecker. `str(e)` is safe to show a user.

    `fault` is what the gateway or the use case observed, as a fact of
    `domain/woodpecker/faults.py` that words the message (None only where a declared plan's step
    gave the words); the error result reads it to decide which hints would repeat the message.
    """

    status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        detail: str | None = None,
        fault: Fault | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status if status is not None else type(self).status
        self.detail = detail  # Woodpecker's own (shortened, non-HTML) error text, if any
        self.fault = fault


class NotConfigured(WoodpeckerError):
    """No WOODPECKER_URL or token: the server runs, but cannot reach an instance."""


class Unauthorized(WoodpeckerError):
    status = 401


class Forbidden(WoodpeckerError):
    status = 403


class NotFound(WoodpeckerError):
    status = 404


class Conflict(WoodpeckerError):
    status = 409


class Rejected(WoodpeckerError):
    """400 or 422: Woodpecker refused the request's content."""


class ServerError(WoodpeckerError):
    """5xx from Woodpecker (after retries, for reads)."""


class Unavailable(WoodpeckerError):
    """Connection refused, DNS failure, TLS failure or a timeout."""


class RedirectRefused(WoodpeckerError):
    """Woodpecker (or a proxy) answered with a redirect; we never follow one."""


class RequestNotAsPlanned(WoodpeckerError):
    """The request about to leave is not the one planned for the call (another route, prefix,
    host or query once the HTTP library built it, or the token bound outside the API): nothing was sent."""


class ServesWebUi(WoodpeckerError):
    """A 200 with HTML: the URL points at the web UI or a proxy, not the API."""


class ResponseTooLarge(WoodpeckerError):
    """The answer passed the byte ceiling; nothing of it is used."""


class BadResponse(WoodpeckerError):
    """Invalid JSON, a truncated body, or a shape we cannot read."""


class TokenEchoed(WoodpeckerError):
    """A 2xx answer carried the token the request went with (docs/adr/0047); nothing of it is used."""


class OutcomeUnknown(WoodpeckerError):
    """A write whose request may have reached Woodpecker got no answer that says how it went
    (`fault` is `Unsettled`, carrying what was observed): it may or may not have been carried out."""


def failed(fault: Fault) -> WoodpeckerError:
    """The port error for what the gateway observed, worded by the domain."""
    if isinstance(fault, Answered):
        kind = _STATUS_ERRORS.get(fault.status, ServerError if fault.status >= 500 else WoodpeckerError)
        return kind(fault.words(), status=fault.status, detail=fault.detail, fault=fault)
    status = fault.status if isinstance(fault, Redirected) else None
    return _FACT_ERRORS[type(fault)](fault.words(), status=status, fault=fault)


_FACT_ERRORS: Mapping[type[Fault], type[WoodpeckerError]] = {
    Unreachable: Unavailable,
    Unreadable: BadResponse,
    TooLarge: ResponseTooLarge,
    WebUi: ServesWebUi,
    Redirected: RedirectRefused,
    NotAsPlanned: RequestNotAsPlanned,
    TokenShape: Unauthorized,
    Echoed: TokenEchoed,
    NoServer: NotConfigured,
    Unexpected: BadResponse,
    NoSuchStep: NotFound,
    Unsettled: OutcomeUnknown,
}
_STATUS_ERRORS: Mapping[int, type[WoodpeckerError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    400: Rejected,
    422: Rejected,
    429: Unavailable,
}
