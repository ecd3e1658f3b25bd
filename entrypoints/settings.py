"""The one place that reads the environment: every variable parsed, checked and refused in one line that never echoes its value.

The settings are pydantic models whose fields carry the variable names as validation
aliases; `read_settings` feeds them a plain mapping (os.environ, or a dict in tests) rather
than letting pydantic-settings read the process environment itself, because the token must
be removed from the environment the moment it is read. `hide_input_in_errors` keeps values
(which may be secrets) out of every error, and each validator phrases its own refusal:
the variable, the problem and the fix.
"""

import base64
import binascii
import ipaddress
import re
import ssl
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from domain.config import ConfigError, parse_elicitation, parse_flag, parse_text_mode
from domain.tool_filter import select_tools
from domain.tools import Catalogue
from domain.toolsets import TOOLSETS_VARIABLE
from domain.woodpecker.catalogue import WOODPECKER_TOOLS
from domain.woodpecker.catalogue.pipelines import with_wait_window
from domain.woodpecker.toolsets import WOODPECKER_TOOLSETS
from domain.woodpecker.waiting import DEFAULT_WINDOW, LONGEST_CEILING, MAX_WINDOW, parse_windows
from ports.credential import token_shaped
from ports.woodpecker import Credential

PROGRAM = "woodpecker-ci-mcp"
# The name on the package index (pyproject.toml), whose metadata holds the version.
DISTRIBUTION = "mcp-server-woodpecker-ci"

DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8000
DEFAULT_MAX_BODY_BYTES = 1_048_576
MIN_SEAL_KEY_BYTES = 32
LINK_KEY_BYTES = 32
MIN_BEARER_CHARS = 32

AuthMode = Literal["shared", "per-client", "oauth"]
DEFAULT_OAUTH_SCOPE = "woodpecker"

# Every variable this program reads, with its default and meaning: the single source for
# `--help`, for the unknown-variable warning and for the docs test.
VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("WOODPECKER_URL", "none", "Woodpecker server root; a trailing /api and slashes are trimmed"),
    ("WOODPECKER_TOKEN", "none", "personal access token; read once, then removed from the environment"),
    ("WOODPECKER_READ_ONLY", "false", "exactly `true`: register only the 37 read tools"),
    ("WOODPECKER_ALLOW_TOOLS", "none", "comma list: names, prefixes ending in *, or `essential`"),
    ("WOODPECKER_DENY_TOOLS", "none", "comma list of names or prefixes ending in *; subtracted from allow"),
    (
        "WOODPECKER_TOOLSETS",
        "all",
        "comma list of toolsets (" + ", ".join(WOODPECKER_TOOLSETS.names) + "); only their tools",
    ),
    (
        "WOODPECKER_INSECURE_TLS",
        "false",
        "exactly `true`: accept a self-signed certificate (this client only)",
    ),
    ("WOODPECKER_CA_FILE", "none", "PEM file of the private CA that signed Woodpecker's certificate"),
    ("ELICITATION", "true", "`false`: guarded tools use the two-call token instead of a dialog"),
    (
        "WOODPECKER_MCP_TEXT",
        "full",
        "`summary`: result text is the summary line only (for clients that read structuredContent)",
    ),
    (
        "WOODPECKER_MCP_WAIT_SECONDS",
        str(DEFAULT_WINDOW),
        "wait_for_pipeline's window when a call names none (1 to the ceiling)",
    ),
    (
        "WOODPECKER_MCP_WAIT_MAX_SECONDS",
        str(MAX_WINDOW),
        f"the longest window a call may ask for (at most {LONGEST_CEILING}); keep it under clients' timeout",
    ),
    ("WOODPECKER_MCP_SEAL_KEYS", "random", "comma list of base64 keys (>= 32 bytes); first seals, all open"),
    ("WOODPECKER_MCP_AUDIT_FILE", "stderr", "append the audit trail (JSON lines) to this file"),
    (
        "WOODPECKER_MCP_TOKEN_STORE",
        "memory",
        "`memory`, or a redis://, rediss:// or unix:// URL for pending tokens",
    ),
    ("WOODPECKER_MCP_HOST", DEFAULT_HTTP_HOST, "HTTP: address to bind (--host wins)"),
    ("WOODPECKER_MCP_PORT", str(DEFAULT_HTTP_PORT), "HTTP: port to bind, 0 for any free one (--port wins)"),
    ("WOODPECKER_MCP_AUTH", "shared", "HTTP: `shared` (clients present the bearer), `per-client` or `oauth`"),
    ("WOODPECKER_MCP_BEARER", "none", "HTTP shared mode: the secret clients send as Bearer (>= 32 chars)"),
    ("WOODPECKER_MCP_ALLOWED_HOSTS", "loopback", "HTTP: comma list of accepted Host headers"),
    ("WOODPECKER_MCP_ALLOWED_ORIGINS", "none", "HTTP: comma list of accepted Origin headers"),
    ("WOODPECKER_MCP_MAX_BODY_BYTES", str(DEFAULT_MAX_BODY_BYTES), "HTTP: largest request body accepted"),
    ("WOODPECKER_MCP_RESOURCE_URL", "none", "HTTP oauth: this server's canonical URI, the tokens' audience"),
    (
        "WOODPECKER_MCP_OAUTH_ISSUERS",
        "none",
        "HTTP oauth: comma list of trusted authorization server issuers",
    ),
    (
        "WOODPECKER_MCP_LINK_KEYS",
        "random",
        "HTTP oauth: comma list of base64 AES-256 keys sealing linked tokens",
    ),
    (
        "WOODPECKER_MCP_OAUTH_SCOPE",
        DEFAULT_OAUTH_SCOPE,
        "HTTP oauth: the scope every access token must carry",
    ),
)
KNOWN_VARIABLES = frozenset(name for name, _, _ in VARIABLES)

_URL_FIX = "set it to the server root, e.g. https://ci.example.com"
# RFC 6749 §3.3 scope-token.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_HOST_CHARS = re.compile(r"^[A-Za-z0-9._~-]+$")


class StartupError(Exception):
    """The configuration cannot start the server. Each line names a variable and the fix."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = tuple(lines)


class Settings(BaseModel):
    """Everything the stdio and HTTP transports share. Secrets never show in repr.

    Built by `read_settings`: each field is validated from its environment variable (the
    validation alias) by the `_check_*` functions below, which raise `ValueError` with a
    message that names the variable and the fix and never the value.
    """

    model_config = ConfigDict(
        frozen=True, hide_input_in_errors=True, arbitrary_types_allowed=True, populate_by_name=True
    )

    woodpecker_url: str | None = Field(default=None, validation_alias="WOODPECKER_URL")
    token: Credential | None = Field(default=None, validation_alias="WOODPECKER_TOKEN", repr=False)
    tools: Catalogue = Field(default=WOODPECKER_TOOLS, repr=False)
    read_only: bool = Field(default=False, validation_alias="WOODPECKER_READ_ONLY")
    insecure_tls: bool = Field(default=False, validation_alias="WOODPECKER_INSECURE_TLS")
    ca_file: str | None = Field(default=None, validation_alias="WOODPECKER_CA_FILE")
    elicitation: bool = Field(default=True, validation_alias="ELICITATION")
    text: Literal["full", "summary"] = Field(default="full", validation_alias="WOODPECKER_MCP_TEXT")
    seal_keys: tuple[bytes, ...] = Field(default=(), validation_alias="WOODPECKER_MCP_SEAL_KEYS", repr=False)
    audit_file: str | None = Field(default=None, validation_alias="WOODPECKER_MCP_AUDIT_FILE")
    token_store: str = Field(default="memory", validation_alias="WOODPECKER_MCP_TOKEN_STORE", repr=False)
    warnings: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        return self.woodpecker_url is not None and self.token is not None

    @field_validator("woodpecker_url", mode="before")
    @classmethod
    def _url(cls, raw: object, info: ValidationInfo) -> str | None:
        return None if raw is None else _parse_woodpecker_url(str(raw), _warnings(info))

    @field_validator("read_only", "insecure_tls", mode="before")
    @classmethod
    def _flags(cls, raw: object, info: ValidationInfo) -> bool:
        if isinstance(raw, bool):
            return raw
        name = _ALIASES[info.field_name or ""]
        try:
            return parse_flag(name, None if raw is None else str(raw))
        except ConfigError as e:
            raise ValueError(str(e)) from None

    @field_validator("elicitation", mode="before")
    @classmethod
    def _elicitation(cls, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        try:
            return parse_elicitation(None if raw is None else str(raw))
        except ConfigError as e:
            raise ValueError(str(e)) from None

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, raw: object) -> str:
        try:
            return parse_text_mode(None if raw is None else str(raw))
        except ConfigError as e:
            raise ValueError(str(e)) from None

    @field_validator("seal_keys", mode="before")
    @classmethod
    def _seal_keys(cls, raw: object) -> object:
        return _parse_seal_keys(raw) if isinstance(raw, str) else raw

    @field_validator("token_store", mode="before")
    @classmethod
    def _token_store(cls, raw: object) -> object:
        return _parse_token_store(raw if isinstance(raw, str) else None)

    @field_validator("audit_file", mode="before")
    @classmethod
    def _audit_file(cls, raw: object) -> object:
        if isinstance(raw, str):
            _check_appendable(raw)
        return raw

    @field_validator("ca_file", mode="before")
    @classmethod
    def _ca_file(cls, raw: object) -> object:
        if isinstance(raw, str):
            if not raw.strip():
                return None
            _check_ca_file(raw)
        return raw

    @model_validator(mode="after")
    def _one_way_to_trust(self) -> "Settings":
        if self.ca_file is not None and self.insecure_tls:
            raise ValueError(
                "WOODPECKER_CA_FILE and WOODPECKER_INSECURE_TLS=true contradict each other: the CA file "
                "keeps certificate checks on; unset WOODPECKER_INSECURE_TLS"
            )
        return self


class HttpSettings(BaseModel):
    """The Streamable HTTP transport's settings (read by `read_http_settings`). The bearer never shows in repr."""

    model_config = ConfigDict(frozen=True, hide_input_in_errors=True, populate_by_name=True)

    host: str = Field(default=DEFAULT_HTTP_HOST, validation_alias="WOODPECKER_MCP_HOST")
    port: int = Field(default=DEFAULT_HTTP_PORT, validation_alias="WOODPECKER_MCP_PORT")
    auth: AuthMode = Field(default="shared", validation_alias="WOODPECKER_MCP_AUTH")
    # Validated even when unset: shared mode without a bearer is refused by the check below.
    bearer: str | None = Field(
        default=None, validation_alias="WOODPECKER_MCP_BEARER", repr=False, validate_default=True
    )
    allowed_hosts: tuple[str, ...] = Field(default=(), validation_alias="WOODPECKER_MCP_ALLOWED_HOSTS")
    allowed_origins: tuple[str, ...] = Field(default=(), validation_alias="WOODPECKER_MCP_ALLOWED_ORIGINS")
    max_body_bytes: int = Field(
        default=DEFAULT_MAX_BODY_BYTES, validation_alias="WOODPECKER_MCP_MAX_BODY_BYTES"
    )
    # OAuth mode (docs/oauth.md); validated even when unset, because that mode requires them.
    resource_url: str | None = Field(
        default=None, validation_alias="WOODPECKER_MCP_RESOURCE_URL", validate_default=True
    )
    oauth_issuers: tuple[str, ...] = Field(
        default=(), validation_alias="WOODPECKER_MCP_OAUTH_ISSUERS", validate_default=True
    )
    oauth_scope: str = Field(default=DEFAULT_OAUTH_SCOPE, validation_alias="WOODPECKER_MCP_OAUTH_SCOPE")
    link_keys: tuple[bytes, ...] = Field(default=(), validation_alias="WOODPECKER_MCP_LINK_KEYS", repr=False)
    warnings: tuple[str, ...] = ()

    @field_validator("host", mode="before")
    @classmethod
    def _host(cls, raw: object) -> object:
        if not isinstance(raw, str) or not raw or any(c.isspace() for c in raw):
            raise ValueError("WOODPECKER_MCP_HOST (or --host) is not a host name or address; e.g. 127.0.0.1")
        return raw

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, raw: object) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= 65535:
            return raw
        if isinstance(raw, str) and raw.isdigit() and 0 <= int(raw) <= 65535:
            return int(raw)
        raise ValueError(
            "WOODPECKER_MCP_PORT (or --port) must be a number between 0 and 65535 (0 picks a free port)"
        )

    @field_validator("auth", mode="before")
    @classmethod
    def _auth(cls, raw: object) -> object:
        value = str(raw).lower()
        if value not in ("shared", "per-client", "oauth"):
            raise ValueError("WOODPECKER_MCP_AUTH must be `shared`, `per-client` or `oauth`")
        return value

    @field_validator("resource_url", mode="before")
    @classmethod
    def _resource_url(cls, raw: object, info: ValidationInfo) -> object:
        name = "WOODPECKER_MCP_RESOURCE_URL"
        if raw is None:
            if info.data.get("auth") == "oauth":
                raise ValueError(
                    f"{name} is not set; with WOODPECKER_MCP_AUTH=oauth set it to the address clients use, "
                    "e.g. https://mcp.example.org/mcp"
                )
            return None
        return _parse_oauth_url(name, str(raw), "e.g. https://mcp.example.org/mcp")

    @field_validator("oauth_issuers", mode="before")
    @classmethod
    def _oauth_issuers(cls, raw: object, info: ValidationInfo) -> object:
        name = "WOODPECKER_MCP_OAUTH_ISSUERS"
        entries = _comma_list(raw) if isinstance(raw, str) else tuple(raw) if isinstance(raw, tuple) else ()
        if not entries and info.data.get("auth") == "oauth":
            raise ValueError(
                f"{name} is not set; with WOODPECKER_MCP_AUTH=oauth list the issuer URLs of the authorization "
                "servers you trust, e.g. https://sso.example.org/realms/team"
            )
        return tuple(
            _parse_oauth_url(f"{name} entry {n}", str(e), "e.g. https://sso.example.org/realms/team")
            for n, e in enumerate(entries, start=1)
        )

    @field_validator("link_keys", mode="before")
    @classmethod
    def _link_keys(cls, raw: object) -> object:
        if isinstance(raw, str):
            return _parse_seal_keys(raw, name="WOODPECKER_MCP_LINK_KEYS", exact=LINK_KEY_BYTES)
        return raw

    @field_validator("oauth_scope", mode="before")
    @classmethod
    def _oauth_scope(cls, raw: object) -> object:
        if not isinstance(raw, str) or not _SCOPE.fullmatch(raw):
            raise ValueError(
                "WOODPECKER_MCP_OAUTH_SCOPE must be one OAuth scope name (printable ASCII, no spaces, quotes "
                "or backslashes), e.g. woodpecker"
            )
        return raw

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _lists(cls, raw: object) -> object:
        return _comma_list(raw) if isinstance(raw, str) else raw

    @field_validator("max_body_bytes", mode="before")
    @classmethod
    def _max_body(cls, raw: object) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1024:
            return raw
        if isinstance(raw, str) and raw.isdigit() and int(raw) >= 1024:
            return int(raw)
        raise ValueError("WOODPECKER_MCP_MAX_BODY_BYTES must be a whole number of bytes, at least 1024")

    @field_validator("bearer")
    @classmethod
    def _bearer_fits_the_mode(cls, bearer: str | None, info: ValidationInfo) -> str | None:
        # A field check (not a model check) so that it is reported beside any other refused
        # variable; `auth` is validated first and is absent from info.data when it was refused.
        if info.data.get("auth") == "shared":
            _check_bearer(bearer, (info.context or {}).get("server_token"))
        return bearer


_ALIASES = {
    name: str(field.validation_alias)
    for name, field in Settings.model_fields.items()
    if field.validation_alias
}


def _warnings(info: ValidationInfo) -> list[str]:
    context = info.context if isinstance(info.context, dict) else {}
    found = context.setdefault("warnings", [])
    assert isinstance(found, list)
    return found


def _line(text: str) -> str:
    return f"{PROGRAM}: {text}"


def _raw(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_woodpecker_url(raw: str, warnings: list[str]) -> str:
    """The trimmed server root. Raises ValueError naming the problem; the value is never echoed."""
    name = "WOODPECKER_URL"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in raw):
        raise ValueError(f"{name} contains whitespace or control characters; {_URL_FIX}")
    try:
        parts = urlsplit(raw)
        port = parts.port  # raises on a port that is not a number in range
        hostname = parts.hostname
    except ValueError:
        raise ValueError(f"{name} does not parse as a URL; {_URL_FIX}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"{name} must start with http:// or https://; {_URL_FIX}")
    if "@" in parts.netloc:
        raise ValueError(
            f"{name} contains a user name or password; remove it and put the token in WOODPECKER_TOKEN"
        )
    if not hostname or not (_HOST_CHARS.match(hostname) or _is_ip(hostname)):
        raise ValueError(f"{name} does not parse as a URL (no valid host); {_URL_FIX}")
    if parts.query or parts.fragment:
        raise ValueError(f"{name} must not carry a query or fragment; {_URL_FIX}")
    path = parts.path.rstrip("/")
    if path.endswith("/api"):
        path = path[: -len("/api")].rstrip("/")
    netloc = f"[{hostname}]" if ":" in hostname else hostname
    if port is not None:
        netloc = f"{netloc}:{port}"
    if scheme == "http" and not is_loopback_host(hostname):
        warnings.append(
            _line(
                f"{name} uses plain http to a host that is not loopback; the token crosses the network "
                "unencrypted (use https)"
            )
        )
    return urlunsplit((scheme, netloc, path, "", ""))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _take_token(environ: MutableMapping[str, str]) -> Credential | None:
    # Popping from os.environ also unsetenv()s it, so no child process inherits the token.
    raw = environ.pop("WOODPECKER_TOKEN", None)
    if raw is None or not raw.strip():
        return None
    value = raw.strip()
    if not token_shaped(value):
        raise ValueError(
            "WOODPECKER_TOKEN contains spaces or non-ASCII characters; paste the personal access token "
            "from Woodpecker's user settings exactly"
        )
    return Credential(value)


def _parse_seal_keys(
    raw: str, *, name: str = "WOODPECKER_MCP_SEAL_KEYS", exact: int | None = None
) -> tuple[bytes, ...]:
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    keys: list[bytes] = []
    problems: list[str] = []
    for position, entry in enumerate(entries, start=1):
        # Accept both the standard and the URL-safe alphabet, with or without padding.
        normal = entry.replace("-", "+").replace("_", "/")
        normal += "=" * (-len(normal) % 4)
        try:
            key = base64.b64decode(normal, validate=True)
        except (binascii.Error, ValueError):
            problems.append(f"{name} entry {position} is not base64")
            continue
        if exact is not None and len(key) != exact:
            problems.append(f"{name} entry {position} is not exactly {exact} bytes")
            continue
        if len(key) < MIN_SEAL_KEY_BYTES:
            problems.append(f"{name} entry {position} is shorter than {MIN_SEAL_KEY_BYTES} bytes")
            continue
        keys.append(key)
    if problems:
        raise ValueError("; ".join(problems) + "; generate a key with: openssl rand -base64 32")
    return tuple(keys)


def _parse_token_store(raw: str | None) -> str:
    name = "WOODPECKER_MCP_TOKEN_STORE"
    if raw is None or raw.lower() == "memory":
        return "memory"
    fix = "set it to `memory` or a URL like redis://redis.internal:6379/0"
    try:
        parts = urlsplit(raw)
        _ = parts.port  # the property raises on a malformed port
    except ValueError:
        raise ValueError(f"{name} does not parse; {fix}") from None
    scheme = parts.scheme.lower()
    if scheme == "unix" and parts.path:
        return raw
    if scheme not in ("redis", "rediss") or not parts.hostname:
        raise ValueError(f"{name} is neither `memory` nor a redis://, rediss:// or unix:// URL; {fix}")
    return raw


def _parse_oauth_url(name: str, raw: str, example: str) -> str:
    """An https URL (http only to a loopback host), without user, query or fragment; returned as given."""
    try:
        parts = urlsplit(raw)
        _ = parts.port
    except ValueError:
        raise ValueError(f"{name} does not parse as a URL; {example}") from None
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme != "https" and not (scheme == "http" and is_loopback_host(host)):
        raise ValueError(f"{name} must be an https:// URL (http:// only on loopback); {example}")
    if not host or "@" in parts.netloc or parts.query or parts.fragment or any(c.isspace() for c in raw):
        raise ValueError(f"{name} must be a plain URL without user, query or fragment; {example}")
    return raw  # as given: an issuer is compared exactly with the tokens' `iss` and its metadata


def _comma_list(raw: str) -> tuple[str, ...]:
    return tuple(e.strip() for e in raw.split(",") if e.strip())


def _unknown_variables(environ: Mapping[str, str]) -> list[str]:
    # A typo in an optional variable would otherwise be silently ignored.
    return [
        _line(f"{name} is not a variable this server reads (see --help); it is ignored")
        for name in sorted(environ)
        if name.startswith("WOODPECKER_MCP_") and name not in KNOWN_VARIABLES
    ]


def _error_lines(error: ValidationError) -> list[str]:
    """One line per refused variable. Our validators phrase every message; pydantic's prefix goes."""
    lines = []
    for problem in error.errors(include_input=False, include_url=False):
        message = str(problem["msg"]).removeprefix("Value error, ")
        if problem["type"] != "value_error":
            variable = ".".join(str(part) for part in problem["loc"])
            message = f"{variable}: {message}"
        lines.append(_line(message))
    return lines


# Flags are on only for the exact string `true` (behaviour.md): their value is not trimmed,
# so " true" is refused rather than silently taken as on.
_EXACT_FLAGS = frozenset({"WOODPECKER_READ_ONLY", "WOODPECKER_INSECURE_TLS"})


def _present(environ: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    present = {}
    for name in names:
        if _raw(environ, name) is not None:
            present[name] = environ[name] if name in _EXACT_FLAGS else environ[name].strip()
    return present


def read_settings(
    environ: MutableMapping[str, str], *, woodpecker: tuple[str, Credential] | None = None
) -> Settings:
    """Parse the environment; remove WOODPECKER_TOKEN from it. Raises StartupError.

    `woodpecker` (url, token) replaces WOODPECKER_URL and WOODPECKER_TOKEN, which are then
    not parsed (the sandbox command); the token variable is removed all the same.
    """
    errors: list[str] = []
    warnings: list[str] = []
    data: dict[str, object] = dict(
        _present(
            environ,
            [alias for alias in _ALIASES.values() if alias not in ("WOODPECKER_URL", "WOODPECKER_TOKEN")],
        )
    )
    if woodpecker is None:
        try:
            token = _take_token(environ)
        except ValueError as e:
            errors.append(_line(str(e)))
            token = None
        if (raw_url := _raw(environ, "WOODPECKER_URL")) is not None:
            data["WOODPECKER_URL"] = raw_url
    else:
        environ.pop("WOODPECKER_TOKEN", None)
        url, token = woodpecker
        data["woodpecker_url"] = url
    data["token"] = token
    try:
        settings = Settings.model_validate(data, context={"warnings": warnings})
    except ValidationError as e:
        errors.extend(_error_lines(e))
        settings = None
    try:
        selection = select_tools(
            WOODPECKER_TOOLS,
            allow=_raw(environ, "WOODPECKER_ALLOW_TOOLS"),
            deny=_raw(environ, "WOODPECKER_DENY_TOOLS"),
            read_only=settings.read_only if settings is not None else False,
        )
    except ConfigError as e:
        errors.append(_line(str(e)))
        selection = None
    try:
        toolsets = WOODPECKER_TOOLSETS.parse(_raw(environ, TOOLSETS_VARIABLE), TOOLSETS_VARIABLE)
    except ConfigError as e:
        errors.append(_line(str(e)))
    try:
        window = parse_windows(
            _raw(environ, "WOODPECKER_MCP_WAIT_SECONDS"), _raw(environ, "WOODPECKER_MCP_WAIT_MAX_SECONDS")
        )
    except ConfigError as e:
        errors.append(_line(str(e)))
    if errors or settings is None or selection is None:
        raise StartupError(errors)
    # Toolsets narrow what the allow, deny and read-only settings left: a tool is registered
    # only if every one of them keeps it.
    tools = with_wait_window(WOODPECKER_TOOLSETS.select(toolsets, selection.catalogue), *window)
    warnings.extend(_line(w) for w in selection.warnings)
    if len(tools) == 0 and len(selection.catalogue) > 0:
        warnings.append(_line(f"{TOOLSETS_VARIABLE} leaves no tools: the server will list none"))
    warnings.extend(_unknown_variables(environ))
    return settings.model_copy(update={"tools": tools, "warnings": tuple(warnings)})


def _check_ca_file(path: str) -> None:
    # Found now rather than at the first call: a CA file that does not load would otherwise look
    # like a certificate problem of the Woodpecker server.
    try:
        ssl.create_default_context(cafile=path)
    except OSError as e:  # ssl.SSLError is an OSError too
        reason = e.strerror or "not a PEM file with a CA certificate"
        raise ValueError(
            f"WOODPECKER_CA_FILE cannot be loaded ({reason}); point it at a PEM file holding the "
            "certificate of the CA that signed the Woodpecker server's certificate"
        ) from None


def _check_appendable(path: str) -> None:
    # Found now rather than at the first guarded call, whose record would otherwise be lost.
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise ValueError(
            f"WOODPECKER_MCP_AUDIT_FILE cannot be opened for appending ({reason}); "
            "point it at a writable file, or unset it to write the audit trail to stderr"
        ) from None


_HTTP_VARIABLES = tuple(
    str(field.validation_alias) for field in HttpSettings.model_fields.values() if field.validation_alias
)


def read_http_settings(
    environ: Mapping[str, str],
    *,
    host: str | None = None,
    port: int | None = None,
    server_token: Credential | None = None,
) -> HttpSettings:
    """The HTTP transport's variables; `host`/`port` from the command line win. Raises StartupError.

    (The warning for a bind beyond loopback comes from `entrypoints.http_app.build_team_app`.)
    """
    data: dict[str, object] = dict(_present(environ, _HTTP_VARIABLES))
    if host is not None:
        data["WOODPECKER_MCP_HOST"] = host
    if port is not None:
        data["WOODPECKER_MCP_PORT"] = port
    warnings: list[str] = []
    mode = str(data.get("WOODPECKER_MCP_AUTH", "")).lower()
    if mode in ("per-client", "oauth"):
        if data.pop("WOODPECKER_MCP_BEARER", None) is not None:
            warnings.append(_line(f"WOODPECKER_MCP_BEARER is ignored with WOODPECKER_MCP_AUTH={mode}"))
        if server_token is not None:
            whose = (
                "each client's bearer is its own Woodpecker token"
                if mode == "per-client"
                else "each person links their own Woodpecker token"
            )
            warnings.append(_line(f"WOODPECKER_TOKEN is ignored with WOODPECKER_MCP_AUTH={mode}; {whose}"))
    if mode == "oauth" and "WOODPECKER_MCP_LINK_KEYS" not in data:
        warnings.append(
            _line(
                "WOODPECKER_MCP_LINK_KEYS is not set: linked Woodpecker tokens are sealed with a key of this "
                "process only, so a restart forgets every link and replicas cannot read each other's; generate "
                "one with: openssl rand -base64 32"
            )
        )
    try:
        http = HttpSettings.model_validate(data, context={"server_token": server_token})
    except ValidationError as e:
        raise StartupError(_error_lines(e)) from None
    return http.model_copy(update={"warnings": tuple(warnings)})


def _check_bearer(bearer: str | None, server_token: Credential | None) -> None:
    generate = "generate one with: openssl rand -base64 32"
    if bearer is None:
        raise ValueError(
            "WOODPECKER_MCP_BEARER is not set; HTTP clients must present a shared secret: "
            f"{generate} (or set WOODPECKER_MCP_AUTH=per-client)"
        )
    if len(bearer) < MIN_BEARER_CHARS or not token_shaped(bearer):
        raise ValueError(
            f"WOODPECKER_MCP_BEARER must be at least {MIN_BEARER_CHARS} printable ASCII characters; {generate}"
        )
    if server_token is not None and bearer == server_token.reveal():
        raise ValueError(
            "WOODPECKER_MCP_BEARER must not be the Woodpecker token; clients would hold the server's "
            f"credential: {generate}"
        )
