"""What went wrong talking to Woodpecker, as facts the gateway raises without writing a sentence,
and the words a person reads for each, with the next steps they give (so an error result adds
only the hints that say more)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

# Which token a request carried: none, this server's own (WOODPECKER_TOKEN), or the MCP client's.
Sent = Literal["none", "own", "client"]
# A next step a message or a hint gives a person. A hint whose step the message already gave is
# left out of the error text (see results.errors.failure).
Step = Literal["check_connection", "check_rights", "activation", "check_url", "retry_later", "setup"]

_URL: frozenset[Step] = frozenset({"check_url"})

SETUP_HINT = (
    "set WOODPECKER_URL to the server root (for example https://ci.example.org) and "
    "WOODPECKER_TOKEN to a personal access token from your Woodpecker user settings, "
    "then restart the MCP server"
)
MiB = 1024 * 1024
GiB = 1024 * MiB


class _Fact:
    """What every fact answers: its message, and the next steps that message gives (`steps`)."""

    __slots__ = ()
    text: ClassVar[str] = ""  # the message of a fact that has no values to word
    steps: ClassVar[frozenset[Step]] = frozenset()

    def words(self) -> str:
        return self.text

    def gives(self) -> frozenset[Step]:
        return self.steps


@dataclass(frozen=True, slots=True)
class Answered(_Fact):
    """Woodpecker (or a proxy in front of it) answered a status outside 2xx and 3xx."""

    status: int
    detail: str | None = None  # Woodpecker's own error text: shortened, never HTML, no token in it
    repository: bool = False  # the request was for a repository or something in one (/api/repos/...)
    sent: Sent = "own"
    root: bool = False  # the request went to a root route (/version, /healthz), not under /api/

    @property
    def quotes_detail(self) -> bool:
        """Whether the message carries `detail` (401 and 429 are worded without it)."""
        return bool(self.detail) and self.status not in (401, 429)

    def words(self) -> str:
        said = f": {self.detail}" if self.detail else ""
        status = self.status
        if status == 401:
            if self.sent == "none":
                return (
                    "Woodpecker needs a token for this (HTTP 401): set WOODPECKER_TOKEN to a personal access "
                    "token from your Woodpecker user settings and call get_server_info"
                )
            if self.sent == "client":
                # Per-client mode: the token is the bearer this MCP client presented, not WOODPECKER_TOKEN.
                return (
                    "Woodpecker did not accept the token this client presented (HTTP 401): configure the "
                    "client with a valid Woodpecker personal access token as its bearer, and call get_server_info"
                )
            return (
                "Woodpecker did not accept the token (HTTP 401): check WOODPECKER_TOKEN (a personal access "
                "token from your Woodpecker user settings) and call get_server_info"
            )
        if status == 403:
            return (
                f"Woodpecker refused this (HTTP 403){said}; it needs an instance admin or a repository admin; "
                "call get_current_user to see this account's rights"
            )
        if status == 404:
            if self.root:
                # Every Woodpecker serves /version at its root: this URL is something else.
                return (
                    f"Not found (HTTP 404){said}: WOODPECKER_URL answers, but not as the root of a Woodpecker "
                    "server (it has no /version); set it to the address Woodpecker opens at, with the "
                    "sub-path it is served under if it has one"
                )
            if self.repository:
                return (
                    f"Not found (HTTP 404){said} — the repository or what the call names in it does not "
                    "exist, or this account cannot see it; a repository may also exist in the forge but not "
                    "be activated in Woodpecker (list_repositories with include_inactive=true)"
                )
            # What to look in depends on the call: the error result's hint names it.
            return f"Not found (HTTP 404){said}"
        if status == 409:
            return (
                f"Woodpecker reports a conflict (HTTP 409){said or ': the object exists already or is in use'}; "
                "read the current state and try again"
            )
        if status in (400, 422):
            return (
                f"Woodpecker rejected the request (HTTP {status}){said or ' without giving a reason'}; "
                "correct the arguments and try again"
            )
        if status == 429:
            return (
                "Woodpecker (or a proxy in front of it) is limiting requests (HTTP 429); wait a moment and "
                "try again"
            )
        if status >= 500:
            return (
                f"Woodpecker failed with an internal error (HTTP {status}){said}; this is often a forge "
                "error or an unknown branch: check the arguments and try again later (Woodpecker's server "
                "log has the cause)"
            )
        return f"Woodpecker answered HTTP {status}{said}"

    def gives(self) -> frozenset[Step]:
        if self.status == 401:
            return frozenset({"check_connection"})
        if self.status == 403:
            return frozenset({"check_rights"})
        if self.status == 404 and self.root:
            return _URL
        if self.status == 404 and self.repository:
            return frozenset({"activation"})
        return frozenset({"retry_later"}) if self.status >= 500 else frozenset()


# Why a connection could not be opened, when the system said: nothing listens on the port, the
# host name does not resolve, no route to the host, the connection was reset.
Cause = Literal["refused", "unresolved", "no_route", "reset"]


@dataclass(frozen=True, slots=True)
class Unreachable(_Fact):
    """No usable answer came: `how` says what failed, `seconds` the limit that passed, if any.

    `url` is where the request went: the server root as scheme://host:port/path, never a user, a
    query or a token. `cause` says why a connection failed (`how="connect"`), when the system said;
    `reason` is OpenSSL's own words for a refused certificate or a failed handshake.
    "certificate": the port speaks TLS and its certificate was refused, the only failure that
    WOODPECKER_CA_FILE or WOODPECKER_INSECURE_TLS can help with; "tls": the handshake failed
    otherwise (a protocol, an alert, a hang-up), which they cannot."""

    how: Literal[
        "connect_timeout",
        "read_timeout",
        "deadline",
        "certificate",
        "tls",
        "plain_http",
        "connect",
        "closed",
        "other",
    ]
    seconds: float | None = None
    url: str = ""
    cause: Cause | None = None
    reason: str | None = None

    def words(self) -> str:
        at = f" at {self.url}" if self.url else ""
        if self.how == "connect" and self.cause is not None:
            said, fix = _CAUSES[self.cause]
            return f"Could not connect to Woodpecker{at}: {said}; {fix}"
        why = f" ({self.reason})" if self.reason else ""
        return _UNREACHABLE[self.how].format(seconds=self.seconds, at=at, why=why)


_CAUSES: Mapping[Cause, tuple[str, str]] = {
    "refused": (
        "the connection was refused (nothing listens on that port)",
        "check the port in WOODPECKER_URL and that Woodpecker is running there",
    ),
    "unresolved": (
        "the host name could not be resolved",
        "check the host name in WOODPECKER_URL for a typo, and this machine's DNS or VPN",
    ),
    "no_route": (
        "the network or the host is unreachable",
        "check the host in WOODPECKER_URL and this machine's network (VPN, firewall)",
    ),
    "reset": (
        "the connection was reset before an answer",
        "check that WOODPECKER_URL names Woodpecker's port, and any proxy or firewall in front of it",
    ),
}
_UNREACHABLE: Mapping[str, str] = {
    "connect_timeout": (
        "Could not connect to Woodpecker{at} within {seconds:g} s (nothing answered: a wrong host or "
        "port, or a firewall that drops the connection): check WOODPECKER_URL and that the server is "
        "running and reachable"
    ),
    "read_timeout": (
        "Woodpecker{at} did not answer within {seconds:g} s; the server may be overloaded: try again "
        "later or narrow the request"
    ),
    "deadline": (
        "Woodpecker{at} did not finish answering within {seconds:g} s; the server may be "
        "overloaded or the answer very large: try again later or narrow the request"
    ),
    "certificate": (
        "The TLS certificate of Woodpecker{at} was not accepted{why}: point WOODPECKER_CA_FILE at the "
        "PEM of the CA that signed it, or for a self-signed certificate set WOODPECKER_INSECURE_TLS=true"
    ),
    "tls": (
        "The TLS handshake with Woodpecker{at} failed{why} before any certificate was checked: check "
        "that WOODPECKER_URL names the port where Woodpecker serves https, and any proxy in front of it "
        "(WOODPECKER_INSECURE_TLS cannot help: it only skips the certificate check)"
    ),
    "plain_http": (
        "WOODPECKER_URL says https://, but the server{at} answered in plain HTTP, not TLS: "
        "use http:// for this port, or the port where TLS is served (WOODPECKER_INSECURE_TLS cannot help: "
        "there is no certificate to trust)"
    ),
    "connect": (
        "Could not connect to Woodpecker{at}: check WOODPECKER_URL and that the server is running and reachable"
    ),
    "closed": (
        "Woodpecker{at} closed the connection without answering; try again, and if it persists "
        "check the server and any proxy in front of it"
    ),
    "other": "Talking to Woodpecker{at} failed; check WOODPECKER_URL and the network, then try again",
}


@dataclass(frozen=True, slots=True)
class Unreadable(_Fact):
    """An answer came but cannot be used: `how` says why; for a log, `reason` says what was wrong."""

    how: Literal["compression", "cut_off", "not_json", "log"]
    reason: str | None = None

    def words(self) -> str:
        return _UNREADABLE[self.how].format(reason=self.reason)


_UNREADABLE: Mapping[str, str] = {
    "compression": (
        "Woodpecker's answer could not be decoded (bad compression); try again, and if it "
        "persists check the proxy in front of Woodpecker"
    ),
    "cut_off": "Woodpecker's answer was cut off before it was complete; try again",
    "not_json": (
        "Woodpecker's answer is not valid JSON; check that WOODPECKER_URL points at the "
        "Woodpecker server root and try again"
    ),
    "log": (
        "Woodpecker's log answer could not be read ({reason}); try again, and if it persists "
        "check Woodpecker's server log"
    ),
}


@dataclass(frozen=True, slots=True)
class TooLarge(_Fact):
    """The answer passed this server's ceiling of `ceiling` bytes; none of it was used."""

    ceiling: int

    def words(self) -> str:
        return (
            f"Woodpecker's answer is larger than the {_size(self.ceiling)} this server accepts, so none of it "
            "was used; narrow the request (a smaller page, a filter, or fewer log lines)"
        )


@dataclass(frozen=True, slots=True)
class WebUi(_Fact):
    """The URL answered with the web UI's HTML, not the API's JSON."""

    text = (
        "this URL serves the web UI, not the API: set WOODPECKER_URL to the server root, "
        "without /api or a web path"
    )
    steps = _URL


@dataclass(frozen=True, slots=True)
class Redirected(_Fact):
    """Woodpecker (or a proxy) answered with a redirect (`status`), which is never followed."""

    status: int

    text = (
        "Woodpecker answered with a redirect to another location; set "
        "WOODPECKER_URL to the server root that serves the API"
    )
    steps = _URL


@dataclass(frozen=True, slots=True)
class NotAsPlanned(_Fact):
    """The request the HTTP library built for `method` differs from the planned one; nothing was sent."""

    Problem = Literal[
        "another server",
        "another path",
        "a dot or empty path segment",
        "another query",
        "a fragment",
        "the token outside the API",
    ]

    method: str
    problem: Problem

    def words(self) -> str:
        return (
            f"Nothing was sent to Woodpecker: the request built for {self.method} would have gone to "
            f"{self.problem}, not the one planned for this call. Check the arguments (names may not hold "
            "'.', '..' or empty segments) and WOODPECKER_URL."
        )

    steps = _URL


@dataclass(frozen=True, slots=True)
class TokenShape(_Fact):
    """The token holds characters no token has (spaces, line breaks, non-ASCII); it was not sent."""

    text = (
        "The Woodpecker token contains characters a token cannot have (spaces, line breaks or "
        "non-ASCII); copy WOODPECKER_TOKEN again from your Woodpecker user settings"
    )


@dataclass(frozen=True, slots=True)
class Echoed(_Fact):
    """Woodpecker's 2xx answer (or something between us and it) carried the token the request was
    sent with, as sent or encoded (docs/adr/0047); nothing of the answer is shown."""

    text = (
        "Woodpecker's answer contained the token this server sent with the request, so nothing of "
        "the answer is shown. Something between this server and Woodpecker (a debugging proxy, a "
        "gateway that echoes requests) or the server at WOODPECKER_URL copies requests into its "
        "answers: check WOODPECKER_URL and any proxy before calling again, and consider the token "
        "seen by whatever echoed it"
    )
    steps = _URL


@dataclass(frozen=True, slots=True)
class NoServer(_Fact):
    """WOODPECKER_URL is missing or cannot be used: `problem` says how."""

    problem: Literal["missing", "invalid", "scheme", "userinfo", "unusable"]

    def words(self) -> str:
        return _NO_SERVER[self.problem]


_NO_SERVER: Mapping[str, str] = {
    "missing": f"No Woodpecker server is configured: {SETUP_HINT}.",
    "invalid": f"WOODPECKER_URL is not a valid URL: {SETUP_HINT}.",
    "scheme": f"WOODPECKER_URL must be an http or https URL: {SETUP_HINT}.",
    "userinfo": "WOODPECKER_URL must not contain a user name or password; use WOODPECKER_TOKEN.",
    "unusable": f"WOODPECKER_URL cannot be used: {SETUP_HINT}.",
}


@dataclass(frozen=True, slots=True)
class Unexpected(_Fact):
    """Woodpecker answered 2xx, but not with the object a tool reads: `what` it answered, and the
    field it lacked (None: not an object at all)."""

    what: str
    missing: str | None = None

    def words(self) -> str:
        if self.missing is not None:
            return f"Woodpecker answered the {self.what} without its {self.missing}."
        return f"Woodpecker answered the {self.what} in an unexpected shape."


@dataclass(frozen=True, slots=True)
class NoSuchStep(_Fact):
    """A step id that is in none of the pipeline's workflows."""

    step_id: int
    number: int
    repo_id: int

    def words(self) -> str:
        return (
            f"Step {self.step_id} is not a step of pipeline {self.number} of repository {self.repo_id}. "
            "Call get_pipeline and use a step's id (not its pid)."
        )


@dataclass(frozen=True, slots=True)
class Unsettled(_Fact):
    """A write whose request may have reached Woodpecker ended without an answer that says how it
    went (`cause`: what the gateway observed): its outcome is unknown (guard.md §7). Worded without
    "try again": a person who reads that says yes again, and the action runs twice."""

    cause: "Fault"
    path: str = ""  # where the write went (a read-back of a delete reads the same path)

    def words(self) -> str:
        return (
            f"The outcome is unknown: the request was sent to Woodpecker and {_lost(self.cause)}, so it may "
            "or may not have been carried out"
        )


def may_have_reached(fault: "Fault | None") -> bool:
    """Whether a request that failed this way may have reached Woodpecker and been acted on: it was sent,
    and then no answer that says how it went came back (the connection closed or timed out, any 5xx,
    since a proxy's cannot be told from Woodpecker's and 3.11's move answers 500 after moving, or an
    answer that is broken or never ends). A refusal (4xx), a redirect, or a request that was never
    sent (no connection, TLS, a request not as planned) did not."""
    if isinstance(fault, Unreachable):
        return fault.how in ("read_timeout", "deadline", "closed", "other")
    if isinstance(fault, Answered):
        return fault.status >= 500
    return isinstance(fault, Unreadable | TooLarge | WebUi)


def _lost(cause: "Fault") -> str:
    """What became of the answer, as the second half of `Unsettled`'s sentence."""
    if isinstance(cause, Answered):
        said = f" ({cause.detail})" if cause.detail else ""
        return f"the answer was HTTP {cause.status}{said}, from Woodpecker or a proxy in front of it"
    if isinstance(cause, Unreachable):
        if cause.how == "read_timeout":
            return f"no answer came within {cause.seconds:g} s"
        if cause.how == "deadline":
            return f"its answer did not finish within {cause.seconds:g} s"
        if cause.how == "closed":
            return "the connection was closed before an answer came"
        return "the connection failed before an answer came"
    if isinstance(cause, TooLarge):
        return f"its answer ran past the {_size(cause.ceiling)} this server reads"
    if isinstance(cause, WebUi):
        return "the answer was a web page, not Woodpecker's API"
    return "its answer could not be read"


Fault = (
    Answered
    | Unreachable
    | Unreadable
    | TooLarge
    | WebUi
    | Redirected
    | NotAsPlanned
    | TokenShape
    | Echoed
    | NoServer
    | Unexpected
    | NoSuchStep
    | Unsettled
)


def bad_pattern(reason: str) -> str:
    """The message for a search pattern RE2 refuses; `reason` is the engine's own."""
    return (
        f"The pattern is not a regular expression this server can search with ({reason}). It uses RE2 "
        "syntax: no look-around and no back-references; escape literal characters such as ( [ . * +."
    )


def _size(n: int) -> str:
    if n >= GiB and n % GiB == 0:
        return f"{n // GiB} GiB"
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n} bytes"
