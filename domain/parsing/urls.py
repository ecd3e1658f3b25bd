"""URLs given as text: WOODPECKER_URL, this server's public (resource) URL, issuers, JWKS and token-store URLs.

`split_url` is the one parser; the rules on top of it (`woodpecker_root`, `public_url`) say
which of its parts each use allows. A pasted web link is read by `domain.woodpecker.references`,
which is stricter still (it compares the link with `woodpecker_root`'s result).
"""

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from domain.config import ConfigError

Problem = Literal["spaces", "unparsable", "idna", "host"]
# The port each scheme a Woodpecker URL may have uses when none is written.
DEFAULT_PORTS = {"http": 80, "https": 443}
# Dot-separated labels of letters, digits, `-` inside and `_` (which DNS allows and compose files use).
_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")
# A Host header: a name or IPv4 address, or an IPv6 address in brackets; then an optional :port.
_HOST_HEADER = re.compile(r"(?P<name>\[[0-9a-f.]*:[0-9a-f:.]*\]|[^\[\]:]+)(?::[0-9]+)?")
WOODPECKER_URL_VARIABLE = "WOODPECKER_URL"
_ROOT_FIX = "set it to the server root, e.g. https://ci.example.com"


class BadUrl(ConfigError):
    """Not a URL (or host): `problem` says why (`spaces`: whitespace or a control character; `unparsable`;
    `idna`: an internationalised name that does not encode; `host`: no host name or address)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Url:
    """A URL's parts. `host` is lower case, an IPv6 address without brackets, "" when absent;
    `netloc` is the authority as given (with any user info); `userinfo`: a user or password was given."""

    scheme: str
    netloc: str
    host: str
    port: int | None
    path: str
    query: str
    fragment: str

    @property
    def userinfo(self) -> bool:
        return "@" in self.netloc

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.netloc}"


def _control(c: str) -> bool:
    return c.isspace() or ord(c) < 32 or 127 <= ord(c) < 160


def split_url(raw: str) -> Url:
    """The parts of `raw`, read as RFC 3986 says (the scheme lower-cased, nothing decoded).

    Raises:
        BadUrl: `raw` holds whitespace or a control character (which parsers disagree on), or
            does not parse, or its port is not a number from 0 to 65535.
    """
    if any(_control(c) for c in raw):
        raise BadUrl("spaces")
    try:
        parts = urlsplit(raw)
        port = parts.port  # raises on a port that is not a number in range
        host = parts.hostname or ""
    except ValueError:
        raise BadUrl("unparsable") from None
    return Url(parts.scheme.lower(), parts.netloc, host, port, parts.path, parts.query, parts.fragment)


def ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_name(raw: str) -> str:
    """A host name in the one form every comparison uses: ASCII lower case, an internationalised
    name in its IDNA (xn--) form, without the trailing dot of the fully qualified form. An IPv4
    address passes as written; an IPv6 address is not a host name (see `ip_literal`).

    Raises:
        BadUrl: `idna` when an internationalised name does not encode, `host` for anything else
            that is no host name (percent-encoding, empty labels, other characters).
    """
    try:
        host = raw.encode("idna").decode("ascii") if not raw.isascii() else raw
    except UnicodeError:
        raise BadUrl("idna") from None
    host = host.lower().removesuffix(".")
    if not _HOST_NAME.fullmatch(host):
        raise BadUrl("host")
    return host


def is_loopback_host(host: str) -> bool:
    """localhost (or a name under .localhost) or a loopback address, bracketed or not."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_same_loopback_origin(origin: str, *, scheme: str, host: str) -> bool:
    """Whether `origin` is exactly `scheme://host` (case aside) and `host` names loopback.

    `host` is a request's Host header (`name` or `name:port`, an IPv6 name in brackets). A browser
    sends such an Origin only from a page of this very origin: a page that this port on this
    machine served, which no DNS rebinding can produce (rebinding keeps the attacker's name in
    both headers). Loopback means `localhost` itself or a loopback address: not a name under
    `.localhost`, which some resolvers still ask DNS about. Nothing is normalised: not a default
    port, not a trailing dot, not a different scheme; any difference is "not the same origin".
    """
    host, scheme = host.lower(), scheme.lower()
    parts = _HOST_HEADER.fullmatch(host)
    return (
        parts is not None
        and (
            parts["name"] == "localhost"
            or (ip_literal(parts["name"].strip("[]")) and is_loopback_host(parts["name"]))
        )
        and scheme in DEFAULT_PORTS
        and origin.lower() == f"{scheme}://{host}"
    )


@dataclass(frozen=True, slots=True)
class WoodpeckerRoot:
    url: str  # scheme://host[:port][/prefix], without a trailing slash or /api
    plain_http: bool  # http to a host that is not loopback: the token would cross the network unencrypted


def woodpecker_root(raw: str) -> WoodpeckerRoot:
    """WOODPECKER_URL: an http(s) server root without user, query or fragment; a trailing /api and
    slashes are trimmed.

    Raises:
        ConfigError: naming the variable, the problem and the fix, never the value.
    """
    name = WOODPECKER_URL_VARIABLE
    try:
        url = split_url(raw)
    except BadUrl as e:
        if e.problem == "spaces":
            raise ConfigError(f"{name} contains whitespace or control characters; {_ROOT_FIX}") from None
        raise ConfigError(f"{name} does not parse as a URL; {_ROOT_FIX}") from None
    if url.scheme not in DEFAULT_PORTS:
        raise ConfigError(f"{name} must start with http:// or https://; {_ROOT_FIX}")
    if url.userinfo:
        raise ConfigError(
            f"{name} contains a user name or password; remove it and put the token in WOODPECKER_TOKEN"
        )
    try:
        host = url.host if ":" in url.host and ip_literal(url.host) else host_name(url.host)
    except BadUrl:
        raise ConfigError(f"{name} does not parse as a URL (no valid host); {_ROOT_FIX}") from None
    if url.query or url.fragment:
        raise ConfigError(f"{name} must not carry a query or fragment; {_ROOT_FIX}")
    path = url.path.rstrip("/")
    if path.endswith("/api"):
        path = path[: -len("/api")].rstrip("/")
    netloc = f"[{host}]" if ":" in host else host
    # The scheme's own port spelled out is the same origin (as pasted links are read): left out.
    if url.port is not None and url.port != DEFAULT_PORTS[url.scheme]:
        netloc = f"{netloc}:{url.port}"
    root = urlunsplit((url.scheme, netloc, path, "", ""))
    return WoodpeckerRoot(root, plain_http=url.scheme == "http" and not is_loopback_host(host))


def public_url(name: str, raw: str, example: str) -> str:
    """An https URL (http only to a loopback host) without user, query or fragment, returned as
    given: an issuer is compared exactly with the tokens' `iss` and its metadata.

    Raises:
        ConfigError: naming `name` and the fix (`example`), never the value.
    """
    try:
        url = split_url(raw)
    except BadUrl as e:
        if e.problem == "spaces":
            raise ConfigError(
                f"{name} must be a plain URL without user, query or fragment; {example}"
            ) from None
        raise ConfigError(f"{name} does not parse as a URL; {example}") from None
    if url.scheme != "https" and not (url.scheme == "http" and is_loopback_host(url.host)):
        raise ConfigError(f"{name} must be an https:// URL (http:// only on loopback); {example}")
    if not url.host or url.userinfo or url.query or url.fragment:
        raise ConfigError(f"{name} must be a plain URL without user, query or fragment; {example}")
    return raw
